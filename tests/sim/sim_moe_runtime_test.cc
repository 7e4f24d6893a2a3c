// MoE as the frameworks run it, against closed forms written here: an MoE layer's TP collectives
// under expert parallelism (Megatron MoELayer / token_dispatcher.py, torchtitan
// moe_sharding.py), experts gathered and reduced over the expert-data-parallel group as often as
// Megatron-FSDP, DeepSpeed and torch FSDP2 do (megatron_fsdp.py grad_reduce_every_bprop,
// deepspeed stage_1_and_2.py real_dp_process_group, torch.distributed.pipelining stage.py), FP8
// weight gathers, multi-token prediction (DeepSeek-V3 §2.2, Megatron multi_token_prediction.py)
// and the MoE layers' host time under CUDA graphs (transformer_config.py cuda_graph_modules).

#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "core/plan/pipeline_split.h"
#include "core/schedule/schedule.h"
#include "sim/compute.h"
#include "sim/simulate.h"
#include "tests/sim/sim_test_util.h"

namespace t = planck::sim::test;
using planck::core::CollOp;
using planck::core::Phase;
using planck::core::StageScope;

namespace {

// 6 layers: 2 leading dense, then every 2nd MoE (layers 3 and 5); 16 experts of 3 x 256 x 512.
std::string plan(const std::string& dims, const std::string& shape, const std::string& parallelism,
                 const std::string& training, int shared = 0) {
  return R"({"format": "planck/1", "cluster": {"nodes": 2, "gpus_per_node": 8},
    "mesh": {"dims": [)" + dims + R"(], "shape": [)" + shape + R"(]},
    "parallelism": {)" + parallelism + R"(},
    "model": {"layers": 6, "hidden": 256, "ffn_hidden": 1024, "heads": 8, "kv_heads": 4, "vocab": 1000,
              "experts": 16, "experts_per_token": 2, "moe_ffn_hidden": 512, "dense_layers": 2, "moe_layer_freq": 2,
              "shared_experts": )" + std::to_string(shared) + R"(},
    "training": {)" + training + "}}";
}

std::int64_t calls(const planck::core::Schedule& s, const std::string& role, CollOp op, Phase phase,
                   const std::string& what = "") {
  std::int64_t n = 0;
  for (const auto& c : s.collectives) {
    if (c.role == role && c.op == op && c.phase == phase && c.what.find(what) != std::string::npos) n += c.calls_per_step;
  }
  return n;
}

const planck::core::ScheduledCollective* find(const planck::core::Schedule& s, const std::string& what) {
  for (const auto& c : s.collectives) {
    if (c.what.find(what) != std::string::npos) return &c;
  }
  return nullptr;
}

constexpr double kExpertParams = 16.0 * 3 * 256 * 512;  // one MoE layer's routed experts

}  // namespace

TEST_CASE("moe_layers_gather_over_tp_only_for_their_attention") {
  // tp 2 with sequence parallel, ep 2 (etp 1): 4 dense layers and 2 MoE layers per rank. A dense
  // layer has two sequence-parallel regions (attention, MLP), an MoE layer one (attention), plus
  // one for a TP-split shared expert. Forward: 1 all-gather + 1 reduce-scatter per region;
  // backward: 2 all-gathers (output grad, input re-gather) + 1 reduce-scatter per region.
  const std::string par = R"("sequence_parallel": true, "etp": 1)";
  const std::string tr = R"("global_batch": 8, "seq_len": 256)";
  for (int shared : {0, 1}) {
    auto p = t::plan_from(plan(R"("dp", "ep", "tp")", "4, 2, 2", par, tr, shared));
    auto s = t::lower_ok(p, t::mesh_of(p));
    const std::int64_t k = 8 / (4 * 2), regions = 2 * 4 + (1 + shared) * 2;
    CAPTURE(shared);
    CHECK(calls(s, "tp", CollOp::kAllGather, Phase::kForward, "sequence-parallel") == regions * k);
    CHECK(calls(s, "tp", CollOp::kReduceScatter, Phase::kForward, "sequence-parallel") == regions * k);
    CHECK(calls(s, "tp", CollOp::kAllGather, Phase::kBackward, "re-gather") == 2 * regions * k);
    CHECK(calls(s, "tp", CollOp::kReduceScatter, Phase::kBackward, "input-grad") == regions * k);
  }
  // Without expert parallelism the experts are TP-split like a dense MLP: two regions a layer.
  auto p = t::plan_from(plan(R"("dp", "tp")", "8, 2", R"("sequence_parallel": true)", tr));
  auto s = t::lower_ok(p, t::mesh_of(p));
  CHECK(calls(s, "tp", CollOp::kAllGather, Phase::kForward, "sequence-parallel") == 2 * 6 * (8 / 8));
}

TEST_CASE("megatron_fsdp_gathers_and_reduces_experts_every_micro_batch_over_edp") {
  // pp 2 x dp_shard 4 x ep 2 on 16 GPUs, 2 micro-batches. The busiest stage (layers 3-5) holds 2
  // MoE layers; each rank 16 / 2 = 8 of their experts, gathered over the expert-data-parallel
  // group dp_shard (4 ranks) in bf16, gradients reduce-scattered in fp32.
  const std::string par = R"("data_parallel": "fsdp", "fsdp_dims": ["dp_shard"])";
  auto run = [&](const std::string& stack) {
    auto p = t::plan_from(plan(R"("pp", "dp_shard", "ep")", "2, 4, 2", par,
                               R"("global_batch": 16, "micro_batch": 1, "seq_len": 256, "stack": ")" + stack + "\""));
    return t::lower_ok(p, t::mesh_of(p));
  };
  const std::int64_t k = 16 / (4 * 2), moe_layers = 2;
  const auto gather_bytes = static_cast<std::int64_t>(kExpertParams / 2 * 2);
  // Megatron-FSDP: forward and backward every micro-batch, pipeline or not; gradients every
  // micro-batch whatever grad_sync says (it keeps only shards), with a note saying so.
  const auto megatron = run("megatron");
  const auto* ag = find(megatron, "parameter all-gather, routed experts");
  REQUIRE(ag != nullptr);
  CHECK(ag->group_size == 4);
  CHECK(ag->dims == std::vector<std::string>{"dp_shard"});
  CHECK(ag->bytes_per_call == gather_bytes);
  CHECK(ag->calls_per_step == moe_layers * k);
  CHECK(calls(megatron, "fsdp", CollOp::kAllGather, Phase::kBackward, "routed experts") == moe_layers * k);
  const auto* rs = find(megatron, "gradient reduce-scatter, routed experts");
  REQUIRE(rs != nullptr);
  CHECK(rs->bytes_per_call == static_cast<std::int64_t>(kExpertParams / 2 * 4));
  CHECK(rs->calls_per_step == moe_layers * k);
  CHECK(megatron.grad_sync == planck::core::GradSync::kEveryMicrobatch);
  CHECK(t::any_contains(megatron.notes, "Megatron-FSDP"));
  // torch FSDP2 under torch.distributed.pipelining: one forward gather per step, 1 + k with
  // resharding, and gradients reduced on the last micro-batch.
  const auto fsdp2 = run("torchtitan_compile");
  CHECK(calls(fsdp2, "fsdp", CollOp::kAllGather, Phase::kForward, "routed experts") == moe_layers * 1);
  CHECK(calls(fsdp2, "fsdp", CollOp::kReduceScatter, Phase::kBackward, "routed experts") == moe_layers * 1);
}

TEST_CASE("zero_stages_reduce_experts_over_edp_as_deepspeed_does") {
  // DeepSpeed stage_1_and_2.py: expert parameter groups partition over the expert-data-parallel
  // group; stage 1 reduces at the accumulation boundary, stage 2 every micro-batch. dp 8 x ep 2,
  // 4 micro-batches; 2 MoE layers x 8 local experts, fp32 gradients in one 5e8-element bucket.
  for (const char* stage : {"zero1", "zero2"}) {
    auto p = t::plan_from(plan(R"("dp", "ep")", "8, 2", std::string(R"("data_parallel": ")") + stage + "\"",
                               R"("global_batch": 64, "seq_len": 256, "stack": "deepspeed")"));
    auto s = t::lower_ok(p, t::mesh_of(p));
    const auto* rs = find(s, "gradient reduce-scatter of expert parameters");
    REQUIRE(rs != nullptr);
    CAPTURE(stage);
    CHECK(rs->group_size == 8);
    CHECK(rs->bytes_per_call == static_cast<std::int64_t>(2 * kExpertParams / 2 * 4));
    CHECK(rs->calls_per_step == (std::string(stage) == "zero2" ? 64 / 16 : 1));
  }
}

TEST_CASE("fp8_param_gather_moves_the_blocks_weights_in_one_byte") {
  // Megatron --fp8-param-gather: the experts' and the blocks' gathers carry 1 byte a parameter,
  // the root (embedding, head) stays bf16; without FP8 linears nothing changes.
  auto gather = [&](const std::string& fp8, bool on, const std::string& what) {
    auto p = t::plan_from(plan(R"("dp_shard", "ep")", "8, 2",
                               std::string(R"("data_parallel": "fsdp", "fp8_param_gather": )") + (on ? "true" : "false"),
                               R"("global_batch": 8, "seq_len": 256, "fp8": ")" + fp8 + "\""));
    const auto s = t::lower_ok(p, t::mesh_of(p));
    const auto* c = find(s, what);
    REQUIRE(c != nullptr);
    return c->bytes_per_call;
  };
  CHECK(gather("tensorwise", true, "parameter all-gather, routed experts") ==
        static_cast<std::int64_t>(kExpertParams / 2 * 1));
  CHECK(gather("tensorwise", false, "parameter all-gather, routed experts") ==
        static_cast<std::int64_t>(kExpertParams / 2 * 2));
  CHECK(gather("none", true, "parameter all-gather, routed experts") == static_cast<std::int64_t>(kExpertParams / 2 * 2));
  CHECK(gather("tensorwise", true, "root") == gather("tensorwise", false, "root"));
}

TEST_CASE("mtp_layers_run_on_the_loss_stage") {
  // One multi-token prediction depth: one more MoE layer, the 2h -> h projection and the head
  // again. Its forward FLOPs: the MoE layer's + 2 T h (2h) + 2 T V h (tp 1).
  const std::string tr = R"("global_batch": 8, "seq_len": 256, "mtp_layers": 1)";
  auto p = t::plan_from(plan(R"("pp", "dp", "ep")", "2, 4, 2", R"("pipeline_schedule": "1f1b")", tr));
  const auto mesh = t::mesh_of(p);
  const auto s = t::lower_ok(p, mesh);
  const auto shape = planck::sim::compute_shape(p, mesh, s);
  const double T = 256, h = 256, V = 1000;
  const double layer = planck::sim::layer_times(*p.model, p.cluster.gpu, shape, true).forward.flops;
  CHECK(planck::sim::mtp_times(*p.model, p.cluster.gpu, shape).forward.flops ==
        doctest::Approx(layer + 2 * T * h * 2 * h + 2 * T * V * h));
  // Its dispatch runs on the last stage: 2 all-to-alls a micro-batch each way.
  const auto* a2a = find(s, "MTP layer token dispatch");
  REQUIRE(a2a != nullptr);
  CHECK(a2a->stages == StageScope::kLast);
  CHECK(a2a->calls_per_step == 2 * (8 / (4 * 2)));
  // The step is longer by at least the last stage's extra work on one micro-batch.
  auto without = t::plan_from(plan(R"("pp", "dp", "ep")", "2, 4, 2", R"("pipeline_schedule": "1f1b")",
                                   R"("global_batch": 8, "seq_len": 256)"));
  const auto with_mtp = planck::sim::simulate(p, mesh);
  const auto plain = planck::sim::simulate(without, t::mesh_of(without));
  REQUIRE(with_mtp.is_ok());
  REQUIRE(plain.is_ok());
  CHECK(with_mtp->compute.mtp_layers == 1);
  CHECK(with_mtp->step.step_time_s > plain->step.step_time_s + with_mtp->compute.mtp_forward_s);
}

TEST_CASE("mtp_layers_follow_the_layout_and_must_agree_with_it") {
  // A layout's m entries are the MTP layers Megatron builds; training.mtp_layers must match them
  // (pipeline_parallel_layer_layout.py "Number of mtp layers in layout must match").
  const std::string par = R"("pipeline_schedule": "1f1b", "pipeline_layout": "Ettt|tttmL")";
  auto p = t::plan_from(plan(R"("pp", "dp", "ep")", "2, 4, 2", par, R"("global_batch": 8, "seq_len": 256)"));
  CHECK(planck::core::trained_mtp_layers(p) == 1);
  auto two = t::plan_from(plan(R"("pp", "dp", "ep")", "2, 4, 2", par,
                               R"("global_batch": 8, "seq_len": 256, "mtp_layers": 2)"));
  const auto d = t::verify_plan(two);
  CHECK(t::has_rule(d, "layers-indivisible", "training.mtp_layers is 2"));
}

TEST_CASE("grouped_gemm_scale_is_the_gpus_and_a_plan_may_set_it") {
  // The expert GEMMs run at compute.grouped_gemm_scale of a dense GEMM's efficiency: their time
  // is inversely proportional to it (halving it twice adds twice what halving it once added),
  // the dense GEMMs do not move, and a preset's own figure is what the plan gets unless it sets
  // one (b200: 0.8, Blackwell's fit; docs/simulator.md "MoE validation").
  auto with = [](const std::string& gpu) {
    return t::plan_from(R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8, "gpu": )" + gpu + R"(},
      "mesh": {"dims": ["dp", "ep"], "shape": [2, 4]}, "parallelism": {"moe_dispatcher": "alltoall"},
      "model": "qwen3-30b-a3b", "training": {"global_batch": 8, "seq_len": 4096}})");
  };
  auto gemm = [](const planck::core::Plan& p) {
    planck::sim::SimOptions o;
    const auto r = planck::sim::simulate(p, t::mesh_of(p), o);
    REQUIRE(r.is_ok());
    return r->compute.gemm_s;
  };
  const double a = gemm(with(R"({"preset": "h100-sxm", "compute": {"grouped_gemm_scale": 0.4}})"));
  const double b = gemm(with(R"({"preset": "h100-sxm", "compute": {"grouped_gemm_scale": 0.2}})"));
  const double c = gemm(with(R"({"preset": "h100-sxm", "compute": {"grouped_gemm_scale": 0.1}})"));
  CHECK(b > a);
  CHECK(c - b == doctest::Approx(2 * (b - a)).epsilon(1e-6));
  CHECK(gemm(with(R"("h100-sxm")")) == doctest::Approx(gemm(with(R"({"preset": "h100-sxm", "compute": {"grouped_gemm_scale": 0.6}})"))));
  CHECK(gemm(with(R"("b200")")) == doctest::Approx(gemm(with(R"({"preset": "b200", "compute": {"grouped_gemm_scale": 0.7}})"))));
  // Out of (0, 1] it is refused with its pointer.
  const auto bad = planck::core::load_plan_text(
      R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8, "gpu": {"preset": "b200", "compute": {"grouped_gemm_scale": 1.5}}},
          "mesh": {"dims": ["dp"], "shape": [8]}, "model": "qwen3-30b-a3b", "training": {"global_batch": 8}})",
      "x.json");
  CHECK_FALSE(bad.plan.has_value());
  bool named = false;
  for (const auto& d : bad.diagnostics.items()) named = named || d.pointer == "/cluster/gpu/compute/grouped_gemm_scale";
  CHECK(named);
}

TEST_CASE("cuda_graphs_replay_the_moe_layers_host_time") {
  // The router + dispatch preprocessing host time goes with moe_router / moe_preprocess graphs;
  // the per-launch host time (the layer's floor) only when the whole layer (or step) replays.
  planck::core::Training tr;
  using P = std::pair<double, double>;
  CHECK(planck::sim::moe_host_times(tr, 1e-3, 2e-3) == P{1e-3, 2e-3});
  tr.cuda_graphs = {"moe_router", "moe_preprocess"};
  CHECK(planck::sim::moe_host_times(tr, 1e-3, 2e-3) == P{0, 2e-3});
  tr.cuda_graphs = {"attn"};
  CHECK(planck::sim::moe_host_times(tr, 1e-3, 2e-3) == P{1e-3, 2e-3});
  for (const char* whole : {"layer", "full_iteration"}) {
    tr.cuda_graphs = {whole};
    CHECK(planck::sim::moe_host_times(tr, 1e-3, 2e-3) == P{0, 0});
  }
  tr.cuda_graphs = {"attn", "moe"};
  CHECK(planck::sim::moe_host_times(tr, 1e-3, 2e-3) == P{0, 0});
  // A scope Megatron does not define is refused with its JSON pointer.
  const auto loaded = planck::core::load_plan_text(
      plan(R"("dp")", "16", "", R"("global_batch": 16, "cuda_graphs": ["attn", "moe_routr"])"), "x.json");
  CHECK_FALSE(loaded.plan.has_value());
  bool named = false;
  for (const auto& diag : loaded.diagnostics.items()) named = named || diag.pointer == "/training/cuda_graphs/1";
  CHECK(named);
}

TEST_CASE("an_eagerly_launched_moe_layer_takes_at_least_its_host_floor") {
  // 16 experts over an expert group of 2: 8 local experts. The floor counts 32 fixed launches and,
  // per local expert, one fc1 and one fc2 GEMM (TE GroupedLinear: one GEMM per expert), plus one
  // input quantization for each under FP8: 32 + 2 x 8 = 48 launches in BF16, 32 + 4 x 8 = 64 in FP8.
  auto p = t::plan_from(plan(R"("dp", "ep")", "8, 2", "", R"("global_batch": 16, "seq_len": 64)"));
  const auto mesh = t::mesh_of(p);
  auto shape = planck::sim::compute_shape(p, mesh, t::lower_ok(p, mesh));
  CHECK(shape.ep == 2);
  CHECK(planck::sim::moe_layer_launches(*p.model, shape) == doctest::Approx(48));
  // A tiny layer's GPU time is far below 48 x 50 us = 2.4 ms: forward 2.4 ms, backward 4.8 ms exactly.
  shape.moe_host_launch_s = 50e-6;
  const auto floor = planck::sim::layer_times(*p.model, p.cluster.gpu, shape, true);
  CHECK(floor.forward.total_s() == doctest::Approx(48 * 50e-6));
  CHECK(floor.backward.total_s() == doctest::Approx(2 * 48 * 50e-6));
  // FP8 linears quantize each expert's inputs: 64 launches.
  auto fp8 = shape;
  fp8.linear_dtype = planck::core::DType::kFp8;
  CHECK(planck::sim::moe_layer_launches(*p.model, fp8) == doctest::Approx(64));
  CHECK(planck::sim::layer_times(*p.model, p.cluster.gpu, fp8, true).forward.total_s() ==
        doctest::Approx(64 * 50e-6));
  // torchtitan runs a rank's experts in one torch._grouped_mm per linear: the fixed 32 alone.
  auto titan = shape;
  titan.stack = planck::core::Stack::kTorchtitanCompile;
  CHECK(planck::sim::moe_layer_launches(*p.model, titan) == doctest::Approx(32));
  // Twice the expert group: half the local experts, 32 + 2 x 4 launches.
  auto wide = shape;
  wide.ep = 4;
  CHECK(planck::sim::moe_layer_launches(*p.model, wide) == doctest::Approx(40));
  // Dense layers and a layer whose GPU time exceeds the floor are not touched.
  const auto dense = planck::sim::layer_times(*p.model, p.cluster.gpu, shape, false);
  CHECK(dense.forward.total_s() < 48 * 50e-6);
  shape.moe_host_launch_s = 1e-12;
  CHECK(planck::sim::layer_times(*p.model, p.cluster.gpu, shape, true).forward.total_s() < 48 * 50e-6);
}
