// Collective cost: ring bytes, link class from placement, NCCL latency constants, topology
// profiles, placement from strides.

#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "core/mesh/mesh.h"
#include "core/plan/presets.h"
#include "sim/cost.h"
#include "sim/topology.h"

namespace {

using planck::core::CollOp;
using planck::sim::LinkClass;
using planck::core::Placement;

// A function, not a global: the preset table is another translation unit's static.
planck::core::GpuSpec h100() { return *planck::core::gpu_preset("h100-sxm"); }

}  // namespace

TEST_CASE("sim_ring_bytes_closed_forms") {
  planck::sim::CostOptions ring_only;
  ring_only.allow_tree = false;
  const Placement one_node{1, 16};
  for (std::int64_t n : {1, 2, 3, 7, 8, 16}) {
    const std::int64_t S = 1680 * 1024;  // divisible by every n here
    auto ar = planck::sim::predict_call(CollOp::kAllReduce, n, S, one_node, h100(), nullptr, ring_only);
    auto ag = planck::sim::predict_call(CollOp::kAllGather, n, S, one_node, h100(), nullptr, ring_only);
    auto rs = planck::sim::predict_call(CollOp::kReduceScatter, n, S, one_node, h100(), nullptr, ring_only);
    CHECK(ar.wire_bytes == 2 * (n - 1) * S / n);  // ring all-reduce 2(n-1)/n x S
    CHECK(ag.wire_bytes == (n - 1) * S / n);      // all-gather (n-1)/n x full output
    CHECK(rs.wire_bytes == (n - 1) * S / n);      // reduce-scatter (n-1)/n x full input
    if (n == 1) CHECK(ar.time_s == 0);
  }
  CHECK(planck::sim::predict_call(CollOp::kAllReduce, 8, 0, one_node, h100(), nullptr).wire_bytes == 0);
}

TEST_CASE("sim_link_class_from_placement") {
  CHECK(planck::sim::link_for({1, 8}, h100(), nullptr) == LinkClass::kNvlink);
  CHECK(planck::sim::link_for({2, 8}, h100(), nullptr) == LinkClass::kNet);
  CHECK(planck::sim::link_for({1, 4}, *planck::core::gpu_preset("cpu"), nullptr) == LinkClass::kShm);
  // A bandwidth-bound ring all-reduce: NVLink at 370 of 450 GB/s inside a node; across nodes the
  // group's NICs bound it: 1 rank per node -> one 47 GB/s NIC, 8 per node -> min(370, 8 x 47).
  planck::sim::CostOptions ring_only;
  ring_only.allow_tree = false;
  const std::int64_t S = std::int64_t{1} << 32;
  auto t = [&](Placement p, std::int64_t n) {
    return planck::sim::predict_call(CollOp::kAllReduce, n, S, p, h100(), nullptr, ring_only).time_s;
  };
  const double wire16 = 2.0 * 15 / 16 * static_cast<double>(S);
  // Simple protocol, latency 8.4 us + steps x 3.4 us intra / 14 us across (NCCL tuning.cc).
  CHECK(t({1, 16}, 16) == doctest::Approx(wire16 / 370e9 + (8.4 + 30 * 3.4) * 1e-6));
  CHECK(t({16, 1}, 16) == doctest::Approx(wire16 / 47e9 + (8.4 + 30 * 14.0) * 1e-6));
  CHECK(t({2, 8}, 16) == doctest::Approx(wire16 / 370e9 + (8.4 + 28 * 3.4 + 2 * 14.0) * 1e-6));
  // Tree wins for small all-reduces over many nodes (latency log2 nodes vs 2(n-1) ring steps).
  auto small = planck::sim::predict_call(CollOp::kAllReduce, 1024, 4096, {128, 8}, h100(), nullptr);
  CHECK(small.algorithm == planck::sim::Algorithm::kTree);
  planck::sim::CostOptions nvls;
  nvls.allow_nvls = true;
  auto big = planck::sim::predict_call(CollOp::kAllReduce, 8, S, {1, 8}, h100(), nullptr, nvls);
  CHECK(big.algorithm == planck::sim::Algorithm::kNvls);
}

TEST_CASE("sim_topology_profile_parse_and_predict") {
  const auto doc = nlohmann::json::parse(R"({"format": "planck-topology/1", "source": "test",
    "placement": {"intra_node": "loopback", "inter_node": "loopback"},
    "links": {"loopback": {"all_reduce": {"latency_s": 2e-5, "step_latency_s": 1e-6, "bandwidth_GBps": 4.0},
                           "default": {"latency_s": 1e-5, "bandwidth_GBps": 2.0, "fit": {"points": 9}}}}})");
  auto topo = planck::sim::parse_topology(doc, "t.json");
  REQUIRE(topo.is_ok());
  const std::int64_t S = 8 << 20;
  for (std::int64_t n : {2, 3, 8}) {
    auto ar = planck::sim::predict_call(CollOp::kAllReduce, n, S, {1, n}, h100(), &*topo);
    CHECK(ar.link == LinkClass::kLoopback);
    CHECK(ar.algorithm == planck::sim::Algorithm::kFitted);
    const double wire = std::ceil(2.0 * static_cast<double>(n - 1) * S / static_cast<double>(n));
    CHECK(ar.time_s == doctest::Approx(2e-5 + 1e-6 * 2 * static_cast<double>(n - 1) + wire / 4e9));
    auto ag = planck::sim::predict_call(CollOp::kAllGather, n, S, {2, 1}, h100(), &*topo);  // default entry
    CHECK(ag.time_s == doctest::Approx(1e-5 + std::ceil(static_cast<double>((n - 1) * S) / static_cast<double>(n)) / 2e9));
  }
  // Round trip.
  auto again = planck::sim::parse_topology(nlohmann::json::parse(planck::sim::topology_to_json(*topo)), "t2.json");
  REQUIRE(again.is_ok());
  CHECK(again->find(LinkClass::kLoopback, CollOp::kAllReduce)->bandwidth_gbps == 4.0);
  CHECK(again->find(LinkClass::kLoopback, CollOp::kSendRecv)->fit["points"] == 9);
  CHECK(again->find(LinkClass::kNvlink, CollOp::kAllReduce) == nullptr);
}

TEST_CASE("sim_topology_measured_points_interpolate_in_log_log") {
  // Line: 1e-4 s + wire / 1 GB/s. Points for groups of 4: 1 KB -> 1 ms, 4 KB -> 16 ms (t ~ S^2
  // between them), 16 KB -> 32 ms. Groups of 2 have no points and use the line.
  const auto doc = nlohmann::json::parse(R"({"format": "planck-topology/1",
    "placement": {"intra_node": "loopback", "inter_node": "loopback"},
    "links": {"loopback": {"all_gather": {"latency_s": 1e-4, "bandwidth_GBps": 1.0,
        "points": [[4, 16000, 0.032], [4, 1000, 0.001], [4, 4000, 0.016]]}}}})");
  auto topo = planck::sim::parse_topology(doc, "t.json");
  REQUIRE(topo.is_ok());
  const planck::sim::LinkFit* f = topo->find(LinkClass::kLoopback, CollOp::kAllGather);
  REQUIRE(f != nullptr);
  REQUIRE(f->points.size() == 3);
  CHECK(f->points.front().bytes == 1000);  // sorted on load
  auto at = [&](std::int64_t n, std::int64_t bytes) { return f->estimate(CollOp::kAllGather, n, bytes); };
  CHECK(at(4, 4000).time_s == 0.016);                          // a measured size: the measurement
  CHECK(at(4, 2000).time_s == doctest::Approx(0.004));         // 1 ms x 2^2
  CHECK(at(4, 8000).time_s == doctest::Approx(0.016 * std::sqrt(2.0)));  // 16 ms x 2^(1/2)
  CHECK(at(4, 8000).measured);
  // Outside the sweep: the end point scaled by the line (wire = 3/4 S for all-gather of 4).
  auto line = [](double s) { return 1e-4 + 0.75 * s / 1e9; };
  CHECK(at(4, 64000).time_s == doctest::Approx(0.032 * line(64000) / line(16000)));
  CHECK(at(4, 100).time_s == doctest::Approx(0.001 * line(100) / line(1000)));
  // A group size that was not measured: the line alone.
  CHECK_FALSE(at(2, 4000).measured);
  CHECK(at(2, 4000).time_s == doctest::Approx(1e-4 + 0.5 * 4000 / 1e9));
  auto c = planck::sim::predict_call(CollOp::kAllGather, 4, 2000, {1, 4}, h100(), &*topo);
  CHECK(c.algorithm == planck::sim::Algorithm::kMeasured);
  CHECK(c.time_s == doctest::Approx(0.004));
  // Round trip keeps the points.
  auto again = planck::sim::parse_topology(nlohmann::json::parse(planck::sim::topology_to_json(*topo)), "t2.json");
  REQUIRE(again.is_ok());
  CHECK(again->find(LinkClass::kLoopback, CollOp::kAllGather)->estimate(CollOp::kAllGather, 4, 2000).time_s ==
        doctest::Approx(0.004));
}

TEST_CASE("sim_topology_errors_name_the_pointer") {
  struct Bad {
    const char* json;
    const char* needle;
  };
  const Bad cases[] = {
      {R"({"format": "planck-topology/2"})", "/format"},
      {R"({"format": "planck-topology/1", "linkz": {}})", "unknown key 'linkz'"},
      {R"({"format": "planck-topology/1", "links": {"infiniband": {}}})", "/links/infiniband"},
      {R"({"format": "planck-topology/1", "links": {"net": {"allreduce": {"bandwidth_GBps": 1}}}})", "/links/net/allreduce"},
      {R"({"format": "planck-topology/1", "links": {"net": {"all_reduce": {"latency_s": 1}}}})", "missing bandwidth_GBps"},
      {R"({"format": "planck-topology/1", "links": {"net": {"default": {"bandwidth_GBps": 0}}}})", "must be > 0"},
      {R"({"format": "planck-topology/1", "links": {"net": {"default": {"bandwidth_GBps": -3}}}})", "/links/net/default/bandwidth_GBps"},
      {R"({"format": "planck-topology/1", "placement": {"intra_node": "pcie"}})", "/placement/intra_node"},
      {R"([1, 2])", "expected a JSON object"},
      {R"({"format": "planck-topology/1", "links": {"net": {"default": {"bandwidth_GBps": 1, "points": [[4, 0, 1]]}}}})",
       "/links/net/default/points/0/1"},
      {R"({"format": "planck-topology/1", "links": {"net": {"default": {"bandwidth_GBps": 1, "points": [[4, 8, -1]]}}}})",
       "seconds must be a finite number > 0"},
      {R"({"format": "planck-topology/1", "links": {"net": {"default": {"bandwidth_GBps": 1, "points": [[4, 8]]}}}})",
       "expected [group_size, bytes, seconds]"},
      {R"({"format": "planck-topology/1", "links": {"net": {"default": {"bandwidth_GBps": 1, "points": [[2.5, 8, 1]]}}}})",
       "group_size must be an integer"},
      {R"({"format": "planck-topology/1", "links": {"net": {"default": {"bandwidth_GBps": 1, "points": [[2, 8, 1], [2, 8, 2]]}}}})",
       "two points for group size 2 and 8 bytes"},
      {R"({"format": "planck-topology/1", "links": {"net": {"default": {"bandwidth_GBps": 1, "points": [[2, 18446744073709551615, 1]]}}}})",
       "bytes must be an integer from 1 to 2^62"},
  };
  for (const auto& c : cases) {
    auto t = planck::sim::parse_topology(nlohmann::json::parse(c.json), "bad.json");
    REQUIRE_FALSE(t.is_ok());
    CHECK_MESSAGE(t.message().find(c.needle) != std::string::npos, t.message());
    CHECK(t.message().find("bad.json") != std::string::npos);
  }
  auto missing = planck::sim::load_topology("/nonexistent/topology.json");
  CHECK_FALSE(missing.is_ok());
}

TEST_CASE("sim_placement_from_strides_matches_member_lists") {
  // Every subset of dims of small meshes, node sizes 1..16: the O(1) placement agrees with the
  // one computed from the members.
  const std::vector<std::vector<std::int64_t>> shapes = {{2, 4, 2}, {3, 2, 4}, {1, 8, 2}, {2, 2, 2, 2}, {7, 2, 1}, {4, 4}};
  for (const auto& shape : shapes) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < shape.size(); ++i) names.push_back(planck::core::known_dims()[i]);
    auto mesh = planck::core::Mesh::create(names, shape);
    REQUIRE(mesh.is_ok());
    for (std::int64_t gpn : {1, 2, 3, 4, 8, 16}) {
      if (mesh->world() % gpn != 0) continue;
      for (unsigned mask = 1; mask < (1u << shape.size()); ++mask) {
        std::vector<std::string> dims;
        for (std::size_t i = 0; i < shape.size(); ++i) {
          if (mask & (1u << i)) dims.push_back(names[i]);
        }
        const auto groups = mesh->groups(dims);
        if (groups.group_size() <= 1) continue;
        const Placement exact = planck::core::placement_of(groups, gpn);
        const Placement fast = planck::core::placement_of(*mesh, dims, gpn);
        CHECK_MESSAGE(fast.nodes_spanned == exact.nodes_spanned, mesh->to_string() << " dims " << groups.key() << " gpn " << gpn);
        CHECK(fast.ranks_per_node == exact.ranks_per_node);
      }
    }
  }
}
