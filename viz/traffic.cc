#include "viz/traffic.h"

#include "core/base/saturating.h"
#include "core/mesh/placement.h"
#include "core/schedule/step_bytes.h"

namespace planck::viz {

std::vector<HopTraffic> hop_traffic(const core::Schedule& schedule, const core::Mesh& mesh, std::int64_t gpus_per_node) {
  std::vector<HopTraffic> out;
  for (const core::ScheduledCollective& c : schedule.collectives) {
    HopTraffic t;
    t.role = c.role;
    for (const auto& d : mesh.dims()) {
      for (const auto& want : c.dims) {
        if (d == want) t.dims.push_back(d);
      }
    }
    t.op = c.op;
    t.phase = c.phase;
    t.group_size = c.group_size;
    t.calls_per_step = c.calls_per_step;
    t.bytes_per_call = c.bytes_per_call;
    t.bytes_per_hop_per_step = core::wire_bytes_per_step(c);
    t.crosses_nodes = core::placement_of(mesh, t.dims, gpus_per_node).crosses_nodes();
    out.push_back(std::move(t));
  }
  return out;
}

std::int64_t bytes_per_hop(const std::vector<HopTraffic>& traffic, const std::vector<std::string>& dims) {
  std::int64_t sum = 0;
  for (const HopTraffic& t : traffic) {
    if (t.dims == dims) sum = core::sat_add(sum, t.bytes_per_hop_per_step);
  }
  return sum;
}

LinkClassBytes bytes_by_link_class(const std::vector<HopTraffic>& traffic) {
  LinkClassBytes b;
  for (const HopTraffic& t : traffic) {
    std::int64_t& slot = t.crosses_nodes ? b.cross : b.intra;
    slot = core::sat_add(slot, t.bytes_per_hop_per_step);
  }
  return b;
}

}  // namespace planck::viz
