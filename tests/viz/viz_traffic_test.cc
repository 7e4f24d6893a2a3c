// The --sim overlay: bytes per hop per step from the schedule, by the ring formulas of
// core/schedule/collectives.h (docs/sources/simulator.md §1.2), on the edges and in the legend.

#include <doctest/doctest.h>

#include "tests/viz/viz_helpers.h"
#include "viz/style.h"
#include "viz/traffic.h"

namespace planck::viz::test {
namespace {

core::ScheduledCollective coll(std::string role, std::vector<std::string> dims, core::CollOp op, std::int64_t n,
                               std::int64_t bytes, std::int64_t calls) {
  core::ScheduledCollective c;
  c.role = std::move(role);
  c.dims = std::move(dims);
  c.op = op;
  c.group_size = n;
  c.bytes_per_call = bytes;
  c.calls_per_step = calls;
  return c;
}

}  // namespace

TEST_CASE("viz_traffic_bytes_per_hop") {
  core::Mesh mesh = make_mesh({"dp_replicate", "dp_shard"}, {2, 8});
  core::Schedule s;
  s.world = 16;
  // fsdp all-gather of 8,000,000 bytes in groups of 8, 33 calls: (n-1)/n x S = 7,000,000 per call.
  s.collectives.push_back(coll("fsdp", {"dp_shard"}, core::CollOp::kAllGather, 8, 8'000'000, 33));
  // fsdp reduce-scatter of the same size, 33 calls: the same 7,000,000 per call.
  s.collectives.push_back(coll("fsdp", {"dp_shard"}, core::CollOp::kReduceScatter, 8, 8'000'000, 33));
  // replicate all-reduce of 4,000,000 bytes in pairs, once: 2(n-1)/n x S = 4,000,000.
  s.collectives.push_back(coll("replicate", {"dp_replicate"}, core::CollOp::kAllReduce, 2, 4'000'000, 1));
  std::vector<HopTraffic> t = hop_traffic(s, mesh, 8);
  REQUIRE(t.size() == 3);
  CHECK(t[0].bytes_per_hop_per_step == 7'000'000 * 33);
  CHECK_FALSE(t[0].crosses_nodes);
  CHECK(t[2].bytes_per_hop_per_step == 4'000'000);
  CHECK(t[2].crosses_nodes);  // dp_replicate pairs {r, r+8} span both nodes
  CHECK(bytes_per_hop(t, {"dp_shard"}) == 2 * 7'000'000 * 33);
  LinkClassBytes b = bytes_by_link_class(t);
  CHECK(b.intra == 2 * 7'000'000 * 33);
  CHECK(b.cross == 4'000'000);

  DiagramInput in = input_for(mesh, 8, {"dp_shard"});
  in.schedule = &s;
  auto dot = build_dot(in);
  REQUIRE(dot.is_ok());
  // 462 MB per ring hop: labelled once per ring (both rings stay in a node), and in the legend.
  CHECK(count(*dot, "xlabel=\"" + format_bytes(2 * 7'000'000 * 33) + "\"") == 2);
  CHECK(dot->find("16 hops inside a node (462 MB per hop per step)") != std::string::npos);
  CHECK(dot->find("0 hops across nodes</TD>") != std::string::npos);  // no per-hop figure for no hops
  CHECK(dot->find("inside a node (NVLink): 462 MB per rank per step") != std::string::npos);
  CHECK(dot->find("groups crossing nodes (network-bound): 4.00 MB per rank per step") != std::string::npos);
}

TEST_CASE("viz_traffic_saturates_instead_of_overflowing") {
  core::Mesh mesh = make_mesh({"dp_shard"}, {8});
  core::Schedule s;
  s.collectives.push_back(coll("fsdp", {"dp_shard"}, core::CollOp::kAllReduce, 8, std::int64_t{1} << 62, 1 << 20));
  std::vector<HopTraffic> t = hop_traffic(s, mesh, 8);
  CHECK(t[0].bytes_per_hop_per_step == std::numeric_limits<std::int64_t>::max());
  s.collectives.push_back(s.collectives[0]);
  CHECK(bytes_per_hop(hop_traffic(s, mesh, 8), {"dp_shard"}) == std::numeric_limits<std::int64_t>::max());
}

}  // namespace planck::viz::test
