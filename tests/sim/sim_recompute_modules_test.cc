// Megatron-Core's selective recompute by module (training.recompute_modules; --recompute-modules,
// megatron/core/transformer/transformer_config.py recompute_modules): what each module re-runs in
// the backward and what activations it frees, against closed forms written here.

#include <doctest/doctest.h>

#include <string>

#include "core/plan/plan_load.h"
#include "sim/compute.h"
#include "sim/memory.h"
#include "sim_test_util.h"

namespace {

namespace t = planck::sim::test;

// Llama-3-8B on one H100, seq 1024, one micro-batch, Megatron's selective recompute with `modules`.
std::string llama8b(const std::string& modules) {
  return R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 1, "gpu": "h100-sxm"},
    "mesh": {"dims": ["dp"], "shape": [1]}, "model": "llama3-8b",
    "training": {"seq_len": 1024, "activation_checkpointing": "selective_attention")" +
         (modules.empty() ? std::string() : R"(, "recompute_modules": )" + modules) + "}}";
}

double activations(const std::string& json) {
  auto plan = t::plan_from(json);
  auto mesh = t::mesh_of(plan);
  return static_cast<double>(planck::sim::memory(plan, mesh, t::lower_ok(plan, mesh)).activations);
}

planck::sim::PassTimes dense_layer(const std::string& json) {
  auto plan = t::plan_from(json);
  auto mesh = t::mesh_of(plan);
  const auto shape = planck::sim::compute_shape(plan, mesh, t::lower_ok(plan, mesh));
  return planck::sim::layer_times(*plan.model, plan.cluster.gpu, shape, false);
}

}  // namespace

TEST_CASE("sim_recompute_modules_free_what_they_re_make") {
  // Per layer and micro-batch, bytes in units of s h (bf16): Llama-3-8B keeps 8 (both norms'
  // inputs and outputs) + 5 (q, k and v at 8 of 32 kv heads, the attention output) + 6 f / h
  // (gate, up, silu(gate) x up) = 34 (docs/sources/simulator.md §3.2). layernorm drops the two
  // norm outputs (4), mlp the MLP's inside (6 f / h = 21). Recomputing one layer rebuilds what it
  // dropped for its backward; the last stage adds Megatron's 4 s (h + V) logits.
  const double s = 1024, h = 4096, f = 14336, vocab = 128256;
  const double sh = s * h, logits = 4 * s * (h + vocab), layers = 32;
  const double whole = 34 * sh;
  auto expect = [&](double dropped) { return layers * (whole - dropped) + logits + dropped; };
  // core_attn alone (Megatron's default) drops nothing under flash attention.
  CHECK(activations(llama8b("")) == doctest::Approx(layers * whole + logits));
  CHECK(activations(llama8b(R"(["core_attn"])")) == doctest::Approx(layers * whole + logits));
  CHECK(activations(llama8b(R"(["layernorm"])")) == doctest::Approx(expect(4 * sh)));
  CHECK(activations(llama8b(R"(["mlp"])")) == doctest::Approx(expect(6 * s * f)));
  CHECK(activations(llama8b(R"(["core_attn", "layernorm", "mlp"])")) == doctest::Approx(expect(4 * sh + 6 * s * f)));
  // moe_act and shared_experts act on MoE layers only: a dense model keeps everything.
  CHECK(activations(llama8b(R"(["moe_act"])")) == doctest::Approx(layers * whole + logits));
}

TEST_CASE("sim_recompute_modules_rerun_their_forward_in_the_backward") {
  const planck::core::GpuSpec gpu = *planck::core::gpu_preset("h100-sxm");
  const double s = 1024, h = 4096, f = 14336, act = 2;
  const auto none = dense_layer(llama8b(R"([])"));
  // An empty list is Megatron's default: the attention core alone.
  const auto attn = dense_layer(llama8b(""));
  CHECK(attn.recompute.total_s() > 0);
  CHECK(none.recompute.total_s() == 0);
  // layernorm: both norms read and write s x h once more.
  CHECK(dense_layer(llama8b(R"(["layernorm"])")).recompute.total_s() ==
        doctest::Approx(planck::sim::memory_seconds(gpu, 2 * 2 * s * h * act)));
  // mlp: the gate+up and down GEMMs and the SwiGLU (read 2f, write f per token).
  const double mlp = planck::sim::gemm_seconds(gpu, s, 2 * f, h, planck::core::DType::kBf16) +
                     planck::sim::gemm_seconds(gpu, s, h, f, planck::core::DType::kBf16) +
                     planck::sim::memory_seconds(gpu, 3 * s * f * act);
  CHECK(dense_layer(llama8b(R"(["mlp"])")).recompute.total_s() == doctest::Approx(mlp));
  CHECK(dense_layer(llama8b(R"(["core_attn", "mlp"])")).recompute.total_s() ==
        doctest::Approx(attn.recompute.total_s() + mlp));
}

TEST_CASE("sim_recompute_modules_are_megatrons_names_under_selective_recompute") {
  auto load = [](const std::string& json) { return planck::core::load_plan_text(json, "x.json"); };
  auto pointer_named = [](const planck::core::LoadedPlan& l, const std::string& pointer) {
    bool named = false;
    for (const auto& d : l.diagnostics.items()) named = named || d.pointer == pointer;
    return named;
  };
  const auto unknown = load(llama8b(R"(["core_attn", "mlp_act"])"));
  CHECK_FALSE(unknown.plan.has_value());
  CHECK(pointer_named(unknown, "/training/recompute_modules/1"));
  // Megatron reads the list only under --recompute-granularity selective.
  const auto full = load(R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 1},
    "mesh": {"dims": ["dp"], "shape": [1]}, "model": "llama3-8b",
    "training": {"activation_checkpointing": "full", "recompute_modules": ["mlp"]}})");
  CHECK_FALSE(full.plan.has_value());
  CHECK(pointer_named(full, "/training/recompute_modules"));
}

TEST_CASE("sim_recompute_modules_on_an_moe_layer_free_their_share") {
  // DeepSeek-V3's MoE layer (h 7168, 8 routed + 1 shared experts of 2048; MLA), one sequence of
  // 4,096 tokens in bf16: the layer's MLP terms are 6 sbf with f = 2048 x (8 + 1). moe_act drops
  // the routed experts' activation outputs (2 sbf x 8/9), shared_experts the shared expert's
  // inside (6 sbf x 1/9), mla_up_proj q, k and v (2 + 4 sbh: MLA's kv heads are its heads).
  const planck::core::ModelSpec m = *planck::core::model_preset("deepseek-v3");
  planck::sim::ComputeShape shape;
  shape.seq_len = 4096;
  shape.checkpointing = planck::core::Checkpointing::kSelectiveAttention;
  const double sbh = 4096.0 * 7168, sbf = 4096.0 * 2048 * 9;
  const double base = planck::sim::layer_activation_bytes(m, true, shape, 2);
  auto with = [&](auto set) {
    planck::sim::ComputeShape s = shape;
    set(s.recompute);
    return planck::sim::layer_activation_bytes(m, true, s, 2);
  };
  CHECK(base - with([](auto& r) { r.moe_act = true; }) == doctest::Approx(2 * sbf * 8 / 9));
  CHECK(base - with([](auto& r) { r.shared_experts = true; }) == doctest::Approx(6 * sbf / 9));
  CHECK(base - with([](auto& r) { r.mla_up_proj = true; }) == doctest::Approx(6 * sbh));
  // mlp is the dense MLP module: an MoE layer keeps its experts' activations.
  CHECK(with([](auto& r) { r.mlp = true; }) == doctest::Approx(base));
}

// `moe` checkpoints the whole MoE layer (Megatron-LM d98e8a6 megatron/core/transformer/moe/
// moe_layer.py: under moe_layer_recompute the route -> dispatch -> experts -> combine forward runs
// inside tensor_parallel.checkpoint / te_checkpoint with the layer's input as its one saved tensor).
TEST_CASE("sim_recompute_modules_moe_reruns_the_whole_moe_layer") {
  const planck::core::ModelSpec m = *planck::core::model_preset("deepseek-v3");
  const planck::core::GpuSpec gpu = *planck::core::gpu_preset("h100-sxm");
  planck::sim::ComputeShape shape;
  shape.seq_len = 4096;
  shape.ep = 8;
  shape.checkpointing = planck::core::Checkpointing::kSelectiveAttention;
  shape.recompute.core_attn = false;
  planck::sim::ComputeShape moe = shape;
  moe.recompute.moe = true;
  // Memory: the layer's whole MLP inside goes, routed and shared (6 sbf, f = 2048 x (8 + 1)).
  const double s = 4096, h = 7168, sbf = s * 2048 * 9;
  CHECK(planck::sim::layer_activation_bytes(m, true, shape, 2) - planck::sim::layer_activation_bytes(m, true, moe, 2) ==
        doctest::Approx(6 * sbf));
  // Time: the forward of the router (s x 256 x h), the shared expert (gate+up 2 x 2048, down),
  // the 32 local experts' grouped GEMMs (s x 8 routed copies over 256 experts = 128 rows each),
  // the permutation (s x 8 copies and s tokens, each read and written both ways) and the
  // SwiGLU of every routed row and shared-expert token (read 2 f, write f), in bf16.
  using planck::sim::gemm_seconds;
  const auto bf16 = planck::core::DType::kBf16;
  const double rows = s * 8 * 8 / 256, local = 256 / 8, f = 2048, act = 2;
  const double gemms = gemm_seconds(gpu, s, 256, h, bf16) + gemm_seconds(gpu, s, 2 * f, h, bf16) +
                       gemm_seconds(gpu, s, h, f, bf16) + local * gemm_seconds(gpu, rows, 2 * f, h, bf16) +
                       local * gemm_seconds(gpu, rows, h, f, bf16);
  const double bytes = 2 * (2 * s * 8 + 2 * s) * h * act + 3 * (s * 8 + s) * f * act;
  CHECK(planck::sim::layer_times(m, gpu, moe, true).recompute.total_s() ==
        doctest::Approx(gemms + planck::sim::memory_seconds(gpu, bytes)));
  // A dense layer has no MoE layer to re-run.
  CHECK(planck::sim::layer_times(m, gpu, moe, false).recompute.total_s() == 0);
}

TEST_CASE("sim_recompute_modules_moe_dispatches_and_combines_again_in_the_backward") {
  // Qwen3-30B-A3B (48 MoE layers) on 8 GPUs, ep 8, 2 micro-batches a step: each MoE layer runs one
  // dispatch and one combine all-to-all forward and both again on the gradients; under `moe`
  // the recomputed forward runs them a third time (moe_layer.py, above).
  auto backward_a2a = [](const std::string& modules) {
    const std::string json = R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8, "gpu": "h100-sxm"},
      "mesh": {"dims": ["ep"], "shape": [8]}, "model": "qwen3-30b-a3b", "parallelism": {"data_parallel": "zero1"},
      "training": {"seq_len": 4096, "global_batch": 16, "micro_batch": 1,
                   "activation_checkpointing": "selective_attention", "recompute_modules": )" + modules + "}}";
    auto plan = t::plan_from(json);
    auto mesh = t::mesh_of(plan);
    std::int64_t calls = 0;
    for (const auto& c : t::lower_ok(plan, mesh).collectives) {
      if (c.role == "ep" && c.op == planck::core::CollOp::kAllToAll && c.phase == planck::core::Phase::kBackward)
        calls += c.calls_per_step;
    }
    return calls;
  };
  CHECK(backward_a2a(R"(["moe_act"])") == 48 * 2 * 2);
  CHECK(backward_a2a(R"(["moe"])") == 48 * 2 * 4);
}
