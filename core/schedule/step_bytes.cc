#include "core/schedule/step_bytes.h"

#include "core/base/saturating.h"
#include "core/mesh/placement.h"

namespace planck::core {

std::int64_t wire_bytes_per_step(const ScheduledCollective& c) {
  return sat_mul(wire_bytes_per_rank(c.op, c.group_size, c.bytes_per_call), c.calls_per_step);
}

StepBytes step_bytes(const Schedule& schedule, const Mesh& mesh, std::int64_t gpus_per_node) {
  StepBytes b;
  for (const ScheduledCollective& c : schedule.collectives) {
    const std::int64_t bytes = wire_bytes_per_step(c);
    b.total = sat_add(b.total, bytes);
    std::int64_t& slot = placement_of(mesh, c.dims, gpus_per_node).crosses_nodes() ? b.cross_node : b.intra_node;
    slot = sat_add(slot, bytes);
  }
  return b;
}

}  // namespace planck::core
