// Mixture of experts: batch accounting with ep, all-to-all bytes and expert parameter placement
// against closed forms written here (docs/plan-format.md "Mixture of experts"; dispatch volume
// from Megatron-Core token_dispatcher.py alltoall workflow and moe_utils.py get_capacity,
// NVIDIA/Megatron-LM@d98e8a64; DeepSpeed sharded_moe.py _capacity).

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "core/mesh/roles.h"
#include "core/mesh/placement.h"
#include "core/plan/presets.h"
#include "sim/cost.h"
#include "sim/simulate.h"
#include "tests/sim/sim_test_util.h"

namespace t = planck::sim::test;
using planck::core::CollOp;
using planck::core::Phase;

namespace {

std::string moe_plan(const std::string& dims, const std::string& shape, int nodes, int gpn,
                     const std::string& parallelism, const std::string& training) {
  return R"({"format": "planck/1", "cluster": {"nodes": )" + std::to_string(nodes) + R"(, "gpus_per_node": )" +
         std::to_string(gpn) + R"(},
    "mesh": {"dims": [)" + dims + R"(], "shape": [)" + shape + R"(]},
    "parallelism": {)" + parallelism + R"(},
    "model": {"layers": 6, "hidden": 256, "ffn_hidden": 1024, "heads": 8, "kv_heads": 4, "vocab": 1000,
              "experts": 16, "experts_per_token": 2, "moe_ffn_hidden": 512, "dense_layers": 2, "moe_layer_freq": 2},
    "training": {)" + training + "}}";
}

}  // namespace

TEST_CASE("moe_ep_is_data_parallel_for_the_batch") {
  // The issue's case: mesh [dp_shard=4, ep=8], global batch 256 -> 256 / (1 x 4 x 8) = 8
  // micro-batches per rank, not 256 / 4 = 64.
  auto p = t::plan_from(moe_plan(R"("dp_shard", "ep")", "4, 8", 4, 8, "", R"("global_batch": 256, "seq_len": 128)"));
  auto s = t::lower_ok(p, t::mesh_of(p));
  CHECK(s.micro_batches == 256 / (1 * 4 * 8));
}

TEST_CASE("moe_all_to_all_bytes_closed_form") {
  // 6 layers, 2 leading dense, then every 2nd MoE: (6 - 2) / 2 = 2 MoE layers, all on one stage.
  // seq 512, cp 2, tp 2 with etp 1 (tp folds into EP): each rank routes 512 / 2 / 2 = 128 tokens,
  // x top-2 = 256 rows of 256 x 2 bytes; ep group = ep 2 x cp 2 x tp 2 = 8.
  auto p = t::plan_from(moe_plan(R"("dp_shard", "ep", "cp", "tp")", "2, 2, 2, 2", 2, 8, R"("etp": 1)",
                                 R"("global_batch": 12, "seq_len": 512)"));
  auto mesh = t::mesh_of(p);
  auto s = t::lower_ok(p, mesh);
  const std::int64_t k = 12 / (2 * 2);  // dp_shard x ep
  REQUIRE(s.micro_batches == k);
  const std::int64_t rows = (512 / 2 / 2) * 2, moe_layers = 2;
  std::int64_t fwd = 0, bwd = 0;
  for (const auto& c : s.collectives) {
    if (c.op != CollOp::kAllToAll) continue;
    CHECK(c.role == "ep");
    CHECK(c.group_size == 8);
    CHECK(c.dims == std::vector<std::string>{"ep", "cp", "tp"});
    CHECK(c.bytes_per_call == rows * 256 * 2);
    (c.phase == Phase::kForward ? fwd : bwd) += c.calls_per_step;
  }
  CHECK(fwd == 2 * moe_layers * k);  // dispatch + combine
  CHECK(bwd == 2 * moe_layers * k);

  // Capacity factor 1.25 pads every one of the 16 experts to ceil(128 x 2 / 16 x 1.25) = 20 rows.
  auto pc = t::plan_from(moe_plan(R"("dp_shard", "ep", "cp", "tp")", "2, 2, 2, 2", 2, 8,
                                  R"("etp": 1, "expert_capacity_factor": 1.25)", R"("global_batch": 12, "seq_len": 512)"));
  auto sc = t::lower_ok(pc, t::mesh_of(pc));
  const std::int64_t padded = 16 * static_cast<std::int64_t>(std::ceil(128.0 * 2 / 16 * 1.25));
  for (const auto& c : sc.collectives) {
    if (c.op == CollOp::kAllToAll) CHECK(c.bytes_per_call == padded * 256 * 2);
  }
}

TEST_CASE("moe_expert_tensor_parallel_gathers_over_tp") {
  // etp = tp = 2, sequence parallel: tokens per rank 512 / 2 = 256 (cp 1), rows 512; the ep group
  // is ep alone (4), and the ETP all-gather output is rows x etp x h x 2 bytes.
  auto p = t::plan_from(moe_plan(R"("ep", "tp")", "4, 2", 1, 8, R"("sequence_parallel": true)",
                                 R"("global_batch": 4, "seq_len": 512)"));
  auto s = t::lower_ok(p, t::mesh_of(p));
  const std::int64_t rows = 256 * 2;
  bool saw_a2a = false, saw_ag = false;
  for (const auto& c : s.collectives) {
    if (c.op == CollOp::kAllToAll) {
      saw_a2a = true;
      CHECK(c.group_size == 4);
      CHECK(c.bytes_per_call == rows * 256 * 2);
    }
    if (c.role == "etp" && c.op == CollOp::kAllGather && c.phase == Phase::kForward) {
      saw_ag = true;
      CHECK(c.bytes_per_call == rows * 2 * 256 * 2);
      CHECK(c.calls_per_step == 2 * (4 / 4));  // 2 MoE layers x 1 micro-batch
    }
  }
  CHECK(saw_a2a);
  CHECK(saw_ag);
}

TEST_CASE("moe_expert_and_dense_gradients_reduce_over_their_groups") {
  // FSDP over dp_shard 2 with ep 4: dense parameters shard over dp_shard x ep (8 ranks), routed
  // experts over dp_shard only (the expert-data-parallel group).
  auto p = t::plan_from(moe_plan(R"("dp_shard", "ep")", "2, 4", 1, 8, R"("data_parallel": "fsdp")",
                                 R"("global_batch": 8, "seq_len": 128)"));
  auto mesh = t::mesh_of(p);
  auto s = t::lower_ok(p, mesh);
  bool dense = false, experts = false;
  for (const auto& c : s.collectives) {
    if (c.op != CollOp::kReduceScatter) continue;
    if (c.what.find("routed experts") != std::string::npos) {
      experts = true;
      CHECK(c.dims == std::vector<std::string>{"dp_shard"});
    } else {
      dense = true;
      CHECK(c.dims == std::vector<std::string>{"dp_shard", "ep"});
    }
  }
  CHECK(dense);
  CHECK(experts);
  // Routed experts per rank: 16 / 4 experts x 3 h f_moe per MoE layer.
  const auto ed = planck::core::expert_degrees(p, mesh);
  CHECK(ed.ep == 4);
  CHECK(ed.edp == 2);
  const auto rp = planck::core::rank_params(*p.model, 1, 1, ed.ep, ed.etp);
  CHECK(rp.moe_layers == 2);
  CHECK(rp.dense_layers == 4);
  CHECK(rp.moe_layer_experts == doctest::Approx(16.0 / 4 * 3 * 256 * 512));
}

TEST_CASE("moe_deepseek_v3_published_layout_keeps_the_batch") {
  // DeepSeek-V3 technical report §3.2, §4.2: 2048 H800, pp 16, ep 64, ZeRO-1 DP, no TP, global
  // batch 15360 sequences of 4096. Dense DP = 2048 / 16 = 128 -> 15360 / 128 = 120 micro-batches.
  auto p = t::plan_from(R"({"format": "planck/1", "cluster": {"nodes": 256, "gpus_per_node": 8},
    "mesh": {"dims": ["pp", "dp", "ep"], "shape": [16, 2, 64]},
    "parallelism": {"data_parallel": "zero1"},
    "model": "deepseek-v3",
    "training": {"global_batch": 15360, "seq_len": 4096}})");
  auto mesh = t::mesh_of(p);
  auto s = t::lower_ok(p, mesh);
  CHECK(s.micro_batches == 15360 / 128);
  // 256 routed experts over 64 ranks: 4 per rank; expert-DP group 2.
  const auto ed = planck::core::expert_degrees(p, mesh);
  CHECK(ed.ep == 64);
  CHECK(ed.edp == 2);
  const auto c = planck::core::param_counts(*p.model);
  const auto rp = planck::core::rank_params(*p.model, 16, 1, ed.ep, ed.etp);
  CHECK(rp.moe_layer_experts == doctest::Approx(256.0 / 64 * c.expert));
}

TEST_CASE("moe_node_limited_routing_bytes_and_cost_closed_form") {
  // DeepSeek-V3 report §2.1.2 / §3.2.2: 8 expert groups, a token's top-8 inside 4 of them, one IB
  // copy per destination node. Each rank routes seq 4096 tokens (no cp / tp).
  auto layout = [](const std::string& shape, int nodes) {
    return t::plan_from(R"({"format": "planck/1", "cluster": {"nodes": )" + std::to_string(nodes) +
                        R"(, "gpus_per_node": 8, "gpu": "h800"},
      "mesh": {"dims": ["pp", "dp", "ep"], "shape": [)" + shape + R"(]},
      "parallelism": {"data_parallel": "zero1"}, "model": "deepseek-v3",
      "training": {"global_batch": 15360, "seq_len": 4096}})");
  };
  const std::int64_t tokens = 4096, h = 7168, per_call = tokens * 8 * h * 2;
  struct Case {
    std::string shape;
    int nodes;
    std::int64_t inter;  // expected inter_node_bytes_per_call
  };
  // ep 64 over N = 8 nodes: a group per node, M = min(8, 8, 4 x 1) = 4, 4 x 7 / 8 = 3.5 remote
  // copies per token. ep 32 over 4 nodes (2 groups per node): a node is missed when none of its
  // 2 groups is among the 4 drawn of 8, C(6, 4) / C(8, 4) = 15 / 70, so M = 4 x 55 / 70 = 22 / 7
  // and 22 / 7 x 3 / 4 = 33 / 14 remote copies per token.
  // ep 8 inside one node: the plain all-to-all (no inter-node bytes).
  const Case cases[] = {{"16, 2, 64", 256, tokens * 35 / 10 * h * 2},
                        {"16, 4, 32", 256, tokens * 33 * h * 2 / 14},
                        {"16, 16, 8", 256, 0}};
  for (const auto& c : cases) {
    CAPTURE(c.shape);
    auto p = layout(c.shape, c.nodes);
    auto mesh = t::mesh_of(p);
    auto s = t::lower_ok(p, mesh);
    int seen = 0;
    for (const auto& e : s.collectives) {
      if (e.op != CollOp::kAllToAll) continue;
      ++seen;
      CHECK(e.bytes_per_call == per_call);
      CHECK(std::llabs(e.inter_node_bytes_per_call - c.inter) <= 1);  // bytes rounded up from a double
    }
    CHECK(seen == 2);
  }
  // The cost of one ep-64 call: the IB copies at one NIC (47 of 50 GB/s) against the NVLink
  // forwarding of 7/8 of the buffer (370/450 of H800's 200 GB/s), the slower plus NCCL latency
  // (tens of microseconds).
  auto p = layout("16, 2, 64", 256);
  auto mesh = t::mesh_of(p);
  auto s = t::lower_ok(p, mesh);
  const auto& e = s.collectives[0].op == CollOp::kAllToAll ? s.collectives[0] : *std::find_if(
      s.collectives.begin(), s.collectives.end(), [](const auto& c) { return c.op == CollOp::kAllToAll; });
  planck::core::ScheduledCollective one = e;
  one.calls_per_step = 1;
  const auto place = planck::core::placement_of(mesh, one.dims, 8);
  CHECK(place.nodes_spanned == 8);
  const auto cost = planck::sim::predict_time(one, place, p.cluster.gpu, nullptr);
  const double ib = static_cast<double>(tokens * 35 / 10 * h * 2) / (50e9 * 47 / 50);
  const double nvlink = static_cast<double>(per_call) * 7 / 8 / (200e9 * 370 / 450);
  REQUIRE(ib > nvlink);
  CHECK(cost.time_s >= ib);
  CHECK(cost.time_s < ib + 100e-6);
  CHECK(cost.wire_bytes == tokens * 35 / 10 * h * 2 + per_call * 7 / 8);
}

TEST_CASE("moe_expert_groups_must_split_the_experts") {
  // 16 experts do not split into 3 groups: refused at the field, naming the values.
  const std::string json = moe_plan(R"("ep")", "8", 1, 8, "", R"("global_batch": 8, "seq_len": 128)");
  const std::string bad = json.substr(0, json.find(R"("dense_layers")")) +
                          R"("expert_groups": 3, "expert_groups_per_token": 2, )" + json.substr(json.find(R"("dense_layers")"));
  auto loaded = planck::core::load_plan_text(bad, "groups.json");
  CHECK_FALSE(loaded.plan.has_value());
  bool named = false;
  for (const auto& d : loaded.diagnostics.items()) {
    named = named || d.message.find("expert_groups 3 with expert_groups_per_token 2 and experts 16") != std::string::npos;
  }
  CHECK(named);
}

TEST_CASE("moe_deepseek_v3_published_layout_simulates_at_a_plausible_rate") {
  // The published layout (report §3.2: pp 16 with DualPipe, ep 64 over 8 nodes, ZeRO-1, no TP;
  // selective recomputation §3.2.3) on 2048 H800. DeepSeek's README gives 2.664M H800 GPU-hours
  // for 14.8T tokens: 14.8e12 / (2.664e6 x 3600) = 1543 tokens/s per GPU, a run average with
  // restarts and a batch ramp (slower than a step) (tests/data/published/runs.csv
  // deepseekv3_h800_pretrain_aggregate: "a sanity bound only"); simulated with the run's FP8
  // GEMMs (report §3.3: 1x128 / 128x128 blockwise scaling).
  auto p = t::plan_from(R"({"format": "planck/1", "cluster": {"nodes": 256, "gpus_per_node": 8, "gpu": "h800"},
    "mesh": {"dims": ["pp", "dp_shard", "ep"], "shape": [16, 2, 64]},
    "parallelism": {"data_parallel": "zero1", "pipeline_schedule": "dualpipev"},
    "model": "deepseek-v3",
    "training": {"global_batch": 15360, "seq_len": 4096, "activation_checkpointing": "selective", "fp8": "blockwise"}})");
  auto r = planck::sim::simulate(p, t::mesh_of(p));
  REQUIRE(r.is_ok());
  const double tokens_per_gpu_s = 15360.0 * 4096 / r->step.step_time_s / 2048;
  const double published = 14.8e12 / (2.664e6 * 3600);
  CHECK(tokens_per_gpu_s > published / 1.5);
  CHECK(tokens_per_gpu_s < published * 1.5);
  // The report: computation-to-communication about 1:1 and the all-to-all almost fully hidden.
  // With the overlap the step's exposed communication stays below a fifth of its compute.
  CHECK(r->step.exposed_comm_time_s < 0.2 * r->step.compute_time_s);
  bool overlapped = false;
  for (const auto& c : r->collectives) overlapped = overlapped || (c.entry.role == "ep" && c.overlapped);
  CHECK(overlapped);
}

TEST_CASE("sim_rank_params_busiest_stage_follows_the_layer_pattern") {
  // Stages take ceil(L / pp) consecutive layers. Llama 4 Maverick alternates dense and MoE
  // layers (interleave_moe_layer_step 2, HF config): 48 layers over pp 4 give 12 per stage, 6 of
  // them MoE, on every stage.
  auto l4 = t::plan_from(R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8},
    "mesh": {"dims": ["dp"], "shape": [8]}, "model": "llama4-maverick"})");
  const auto rp = planck::core::rank_params(*l4.model, 4, 8, 1, 8);
  CHECK(rp.moe_layers == 6);
  CHECK(rp.dense_layers == 6);
  // DeepSeek-V3: 3 dense layers then 58 MoE (first_k_dense_replace 3); pp 16 gives 4 layers per
  // stage: the first has 3 dense + 1 MoE, the busiest 4 MoE.
  auto ds = t::plan_from(R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8},
    "mesh": {"dims": ["dp"], "shape": [8]}, "model": "deepseek-v3"})");
  const auto rd = planck::core::rank_params(*ds.model, 16, 1, 1, 1);
  CHECK(rd.moe_layers == 4);
  CHECK(rd.dense_layers == 0);
  // pp 1: the one stage holds every layer.
  const auto r1 = planck::core::rank_params(*l4.model, 1, 1, 1, 1);
  CHECK(r1.moe_layers == 24);
  CHECK(r1.dense_layers == 24);
}

TEST_CASE("nvlink_domain_keeps_an_nvl72_racks_trays_on_nvlink") {
  // GB200 NVL72: trays of 4 GPUs whose NVLink reaches the whole rack. An expert-parallel group of
  // 8 over 2 trays runs its all-to-all on NVLink when the plan says the trays share a domain
  // (cluster.nvlink_domain), on the NICs when it does not; the verify warning that the group
  // spans nodes goes with it. The domain must be whole trays.
  auto plan = [](const std::string& domain, const std::string& mesh = R"("dims": ["dp", "ep"], "shape": [1, 8])") {
    return R"({"format": "planck/1", "cluster": {"nodes": 2, "gpus_per_node": 4, "gpu": "gb200")" + domain + R"(},
      "mesh": {)" + mesh + R"(}, "parallelism": {"moe_dispatcher": "alltoall"},
      "model": "qwen3-30b-a3b", "training": {"global_batch": 8, "seq_len": 4096}})";
  };
  auto dispatch_link = [](const planck::core::Plan& p) {
    const auto r = planck::sim::simulate(p, t::mesh_of(p));
    REQUIRE(r.is_ok());
    for (const auto& c : r->collectives) {
      if (c.entry.role == "ep") return std::string(planck::sim::link_name(c.link));
    }
    return std::string();
  };
  const auto trays = t::plan_from(plan("")), rack = t::plan_from(plan(R"(, "nvlink_domain": 72)"));
  CHECK(dispatch_link(trays) == "net");
  CHECK(dispatch_link(rack) == "nvlink");
  // A GB plan without a domain says how its cross-tray traffic was priced.
  const auto said = [](const planck::core::Plan& p) {
    const auto r = planck::sim::simulate(p, t::mesh_of(p));
    REQUIRE(r.is_ok());
    return t::any_contains(r->notes, "cluster.nvlink_domain is not set");
  };
  CHECK(said(trays));
  CHECK_FALSE(said(rack));
  // ep 4 strided over both trays: it could sit in one tray, so verify warns, unless one domain holds both.
  const std::string strided = R"("dims": ["ep", "dp"], "shape": [4, 2])";
  CHECK(t::has_rule(t::verify_plan(t::plan_from(plan("", strided))), "ep-crosses-nodes", "2 nodes"));
  CHECK_FALSE(t::has_rule(t::verify_plan(t::plan_from(plan(R"(, "nvlink_domain": 8)", strided))), "ep-crosses-nodes"));
  const auto bad = planck::core::load_plan_text(plan(R"(, "nvlink_domain": 6)"), "x.json");
  CHECK_FALSE(bad.plan.has_value());
  bool named = false;
  for (const auto& d : bad.diagnostics.items()) named = named || d.pointer == "/cluster/nvlink_domain";
  CHECK(named);
  // The Grace-Blackwell presets: NVIDIA's dense peaks per GPU and MX tensor cores.
  const auto gb200 = planck::core::gpu_preset("gb200");
  REQUIRE(gb200.has_value());
  CHECK(gb200->bf16_tflops == 2500.0);
  CHECK(gb200->fp8_tflops == 5000.0);
  CHECK(planck::core::blackwell(*gb200));
  CHECK_FALSE(planck::core::blackwell(*planck::core::gpu_preset("h100-sxm")));
}
