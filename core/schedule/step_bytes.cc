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
    const bool crosses = placement_of(mesh, c.dims, gpus_per_node).crosses_nodes();
    if (c.op == CollOp::kAllToAll && c.inter_node_bytes_per_call > 0 && crosses) {
      // A dispatch split into its NIC and NVLink parts (core/schedule/ep_dispatch.h).
      const std::int64_t inter = sat_mul(c.inter_node_bytes_per_call, c.calls_per_step);
      const std::int64_t intra = sat_mul(c.intra_node_bytes_per_call, c.calls_per_step);
      b.total = sat_add(b.total, sat_add(inter, intra));
      b.cross_node = sat_add(b.cross_node, inter);
      b.intra_node = sat_add(b.intra_node, intra);
      continue;
    }
    const std::int64_t bytes = wire_bytes_per_step(c);
    b.total = sat_add(b.total, bytes);
    std::int64_t& slot = crosses ? b.cross_node : b.intra_node;
    slot = sat_add(slot, bytes);
  }
  return b;
}

}  // namespace planck::core
