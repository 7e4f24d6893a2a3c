// Token dispatch as deployed (core/schedule/ep_dispatch.h, docs/simulator.md "Token dispatch"):
// the NIC / NVLink split of a plain all-to-all over nodes, DeepEP's once-per-node crossing with
// and without group-limited routing, Megatron's all-gather dispatcher, and a stated imbalance.

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "core/mesh/placement.h"
#include "core/schedule/ep_dispatch.h"
#include "sim/cost.h"
#include "sim/enumerate.h"
#include "sim/moe_band.h"
#include "sim/simulate.h"
#include "sim_test_util.h"

namespace {

namespace t = planck::sim::test;
using planck::core::CollOp;

// Qwen3-30B-A3B (hidden 2048, top-8 of 128) on 2 nodes x 8 H100, ep 16, seq 4096, micro-batch 1.
planck::core::Plan qwen3_ep16(const std::string& extra) {
  return t::plan_from(R"({"format": "planck/1", "cluster": {"nodes": 2, "gpus_per_node": 8, "gpu": "h100-sxm"},
    "mesh": {"dims": ["ep"], "shape": [16]}, "parallelism": {"data_parallel": "zero1")" + extra + R"(},
    "model": "qwen3-30b-a3b", "training": {"global_batch": 16, "seq_len": 4096}})");
}

const planck::core::ScheduledCollective& first(const planck::core::Schedule& s, CollOp op) {
  for (const auto& c : s.collectives) {
    if (c.role == "ep" && c.op == op) return c;
  }
  FAIL("no ep collective");
  return s.collectives.front();
}

constexpr std::int64_t kTokens = 4096, kH = 2048, kK = 8;
constexpr std::int64_t kPerCall = kTokens * kK * kH * 2;  // bf16 routed copies per rank

}  // namespace

TEST_CASE("dispatch_plain_all_to_all_splits_nic_and_nvlink") {
  // 16 ranks, 8 per node: (16 - 8) / 16 of the copies leave the node, (8 - 1) / 16 stay on NVLink.
  auto p = qwen3_ep16(R"(, "moe_dispatcher": "alltoall")");
  auto mesh = t::mesh_of(p);
  auto s = t::lower_ok(p, mesh);
  const auto& c = first(s, CollOp::kAllToAll);
  CHECK(c.bytes_per_call == kPerCall);
  CHECK(c.inter_node_bytes_per_call == kPerCall / 2);
  CHECK(c.intra_node_bytes_per_call == kPerCall * 7 / 16);
  // One call: the NIC half at 47 of 50 GB/s against 7/16 at 370 GB/s of NVLink, plus latency:
  // about half the time of the whole (n-1)/n at one NIC's rate.
  planck::core::ScheduledCollective one = c;
  one.calls_per_step = 1;
  const auto place = planck::core::placement_of(mesh, one.dims, 8);
  const auto cost = planck::sim::predict_time(one, place, p.cluster.gpu, nullptr);
  const double nic = static_cast<double>(kPerCall) / 2 / 47e9;
  CHECK(cost.time_s >= nic);
  CHECK(cost.time_s < nic + 100e-6);
  const auto whole = planck::sim::predict_call(CollOp::kAllToAll, 16, kPerCall, place, p.cluster.gpu, nullptr);
  CHECK(whole.time_s > 1.8 * cost.time_s);
}

TEST_CASE("dispatch_deepep_crosses_once_per_destination_node") {
  // No group-limited routing: top-8 experts over 2 nodes reach 2 (1 - (1/2)^8) nodes on average,
  // (N - 1) / N = 1/2 of them remote; NVLink forwards 7/8 of the copies inside the node.
  auto p = qwen3_ep16(R"(, "moe_dispatcher": "deepep")");
  auto mesh = t::mesh_of(p);
  auto s = t::lower_ok(p, mesh);
  const auto& c = first(s, CollOp::kAllToAll);
  const double reach = 2 * (1 - std::pow(0.5, 8));
  CHECK(c.inter_node_bytes_per_call ==
        static_cast<std::int64_t>(std::ceil(kTokens * reach * 0.5 * kH * 2)));
  CHECK(c.intra_node_bytes_per_call == kPerCall * 7 / 8);
  // A stated imbalance of 1.5 scales what the busiest rank receives.
  auto skew = qwen3_ep16(R"(, "moe_dispatcher": "deepep", "expert_imbalance": 1.5)");
  auto sk = t::lower_ok(skew, t::mesh_of(skew));
  CHECK(first(sk, CollOp::kAllToAll).bytes_per_call == kPerCall * 3 / 2);
}

TEST_CASE("dispatch_allgather_gathers_tokens_not_copies") {
  // Megatron's allgather dispatcher: all-gather of each rank's 4096 tokens over the 16 ranks
  // (nccl-tests size = the full output), reduce-scatter of the same size back.
  auto p = qwen3_ep16(R"(, "moe_dispatcher": "allgather")");
  auto s = t::lower_ok(p, t::mesh_of(p));
  CHECK(first(s, CollOp::kAllGather).bytes_per_call == kTokens * kH * 2 * 16);
  CHECK(first(s, CollOp::kReduceScatter).bytes_per_call == kTokens * kH * 2 * 16);
  for (const auto& c : s.collectives) CHECK(c.op != CollOp::kAllToAll);
}

TEST_CASE("moe_predictions_carry_their_measured_error_band") {
  // Every MoE step time is printed with the leave-one-source-out error of the published MoE runs
  // (sim/moe_band.h, measured by sim_published_moe_step_times_and_layout_order); dense ones not.
  auto p = qwen3_ep16("");
  auto r = planck::sim::simulate(p, t::mesh_of(p));
  REQUIRE(r.is_ok());
  CHECK(r->error_band == planck::sim::kMoeStepErrorBand);
  CHECK(nlohmann::json::parse(planck::sim::sim_to_json(*r))["step"]["error_band"].get<double>() ==
        doctest::Approx(planck::sim::kMoeStepErrorBand));
  CHECK(nlohmann::json::parse(planck::sim::enumerate_to_json(*planck::sim::enumerate(t::h100_request("qwen3-30b-a3b", 16, 64, 4096)), 1))
            ["error_band"].get<double>() == doctest::Approx(planck::sim::kMoeStepErrorBand));
  CHECK(planck::sim::sim_to_text(*r, p, t::mesh_of(p)).find("measured MoE error") != std::string::npos);
  auto req = t::h100_request("qwen3-30b-a3b", 16, 64, 4096);
  auto e = planck::sim::enumerate(req);
  REQUIRE(e.is_ok());
  CHECK(e->error_band == planck::sim::kMoeStepErrorBand);
  CHECK(planck::sim::enumerate_to_text(*e, req, 3).find("MoE step time: measured error") != std::string::npos);
  auto dense = planck::sim::enumerate(t::h100_request("llama3-8b", 8, 8, 4096));
  REQUIRE(dense.is_ok());
  CHECK(dense->error_band == 0);
}

TEST_CASE("dispatch_node_limited_reach_counts_the_nodes_the_drawn_groups_sit_on") {
  // DeepSeek-V3 routes each token to 4 of 8 expert groups (report §2.1.2). On EP 32 over 4 nodes
  // each node holds 2 groups: enumerating all C(8, 4) = 70 draws, the mean number of distinct
  // nodes hit is the expected reach (3.14, not all 4).
  auto nodes_hit = [](int groups, int nodes, int drawn) {
    double sum = 0, draws = 0;
    for (int mask = 0; mask < (1 << groups); ++mask) {
      if (std::popcount(static_cast<unsigned>(mask)) != drawn) continue;
      int hit = 0;
      for (int node = 0; node < nodes; ++node) {
        const int per = groups / nodes;
        const int own = ((1 << per) - 1) << (node * per);
        hit += (mask & own) != 0;
      }
      sum += hit;
      ++draws;
    }
    return sum / draws;
  };
  CHECK(planck::core::node_limited_reach(4, 8, 4, 8) == doctest::Approx(nodes_hit(8, 4, 4)));
  CHECK(planck::core::node_limited_reach(4, 8, 4, 8) == doctest::Approx(22.0 / 7));
  CHECK(planck::core::node_limited_reach(2, 8, 4, 8) == doctest::Approx(nodes_hit(8, 2, 4)));
  // One group per node (EP 64 over 8 nodes): exactly the 4 groups' nodes.
  CHECK(planck::core::node_limited_reach(8, 8, 4, 8) == doctest::Approx(4));
  // 16 nodes, each group on 2 of them: 4 groups x 2 experts each, a group's 2 experts on its
  // 2 nodes reach 2 (1 - (1/2)^2) = 1.5 of them: 6 nodes.
  CHECK(planck::core::node_limited_reach(16, 8, 4, 8) == doctest::Approx(6));
  // Never more than top-k.
  CHECK(planck::core::node_limited_reach(64, 8, 4, 2) <= 2);
}
