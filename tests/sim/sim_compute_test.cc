// The per-kernel compute model (sim/compute.h) and activations against published formulas.

#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "core/plan/presets.h"
#include "sim/compute.h"
#include "sim/memory.h"
#include "sim/model.h"
#include "sim/simulate.h"
#include "sim_test_util.h"

namespace {

using planck::core::Attention;
using planck::core::Checkpointing;
namespace t = planck::sim::test;

planck::sim::ComputeShape gpt_shape(std::int64_t tp, bool sp, Checkpointing ckpt) {
  planck::sim::ComputeShape s;
  s.micro_batch = 1;
  s.seq_len = 2048;
  s.tp = tp;
  s.sequence_parallel = sp;
  s.attention = Attention::kStandard;
  s.checkpointing = ckpt;
  return s;
}

}  // namespace

TEST_CASE("sim_korthikanti_table2_gpt3_175b_layer") {
  // Korthikanti et al. 2022 Table 2, bytes per layer with 16-bit activations: no parallelism
  // sbh(34 + 5as/h) = 34sbh + 5as^2b; tensor + sequence parallel sbh(34/t + 5as/(ht)); selective
  // recompute of the attention core drops the 5as^2b term. GPT-3 175B: h 12288, a 96, s 2048.
  const auto gpt = *planck::core::model_preset("gpt3-175b");
  const double s = 2048, b = 1, h = 12288, a = 96;
  auto bytes = [&](std::int64_t tp, bool sp, Checkpointing c) {
    return planck::sim::layer_activation_bytes(gpt, false, gpt_shape(tp, sp, c), 2);
  };
  CHECK(bytes(1, false, Checkpointing::kNone) == doctest::Approx(34 * s * b * h + 5 * a * s * s * b));
  CHECK(bytes(1, false, Checkpointing::kSelectiveAttention) == doctest::Approx(34 * s * b * h));
  for (std::int64_t tp : {2, 8}) {
    const double td = static_cast<double>(tp);
    CHECK(bytes(tp, true, Checkpointing::kNone) == doctest::Approx(s * b * h * (34 / td + 5 * a * s / (h * td))));
    CHECK(bytes(tp, true, Checkpointing::kSelectiveAttention) == doctest::Approx(34 * s * b * h / td));
    // Tensor parallel alone: sbh(10 + 24/t + 5as/(ht)).
    CHECK(bytes(tp, false, Checkpointing::kNone) == doctest::Approx(s * b * h * (10 + 24 / td + 5 * a * s / (h * td))));
  }
  // FlashAttention keeps no scores: none equals selective_attention.
  auto flash = gpt_shape(1, false, Checkpointing::kNone);
  flash.attention = Attention::kFlash;
  CHECK(planck::sim::layer_activation_bytes(gpt, false, flash, 2) == doctest::Approx(34 * s * b * h));
}

TEST_CASE("sim_torchtitan_op_sac_keeps_odd_mms") {
  // torchtitan op-level SAC on a Llama layer without TP keeps the block input, the outputs of
  // wq, wv, w1, w2 (the 1st, 3rd, 5th, 7th mm) and the attention output:
  // T (h + a hd + kv hd + f + h + a hd) elements.
  const auto llama = *planck::core::model_preset("llama3-8b");
  planck::sim::ComputeShape s;
  s.seq_len = 8192;
  s.checkpointing = Checkpointing::kSelective;
  const double T = 8192, h = 4096, f = 14336, hd = 128, a = 32, kv = 8;
  CHECK(planck::sim::layer_activation_bytes(llama, false, s, 2) ==
        doctest::Approx(2 * T * (h + a * hd + kv * hd + f + h + a * hd)));
}

TEST_CASE("sim_tied_head_counts_in_flops") {
  // Korthikanti et al. 2022 §6 model FLOPs per token for GPT: 72 l h^2 (1 + s/(6h) + V/(12 l h))
  // (the last term is the output head, tied to the embedding in GPT-3).
  const auto gpt = *planck::core::model_preset("gpt3-175b");
  const double l = 96, h = 12288, s = 2048, V = 50257;
  CHECK(planck::sim::flops_per_token(gpt, 2048) ==
        doctest::Approx(72 * l * h * h * (1 + s / (6 * h) + V / (12 * l * h))).epsilon(1e-3));
}

TEST_CASE("sim_gemm_shards_run_below_the_full_shape") {
  const auto h100 = *planck::core::gpu_preset("h100-sxm");
  const auto a100 = *planck::core::gpu_preset("a100-80g");
  using planck::core::DType;
  const double full = 2.0 * 8192 * 8192 * 8192 / planck::sim::gemm_seconds(h100, 8192, 8192, 8192, DType::kBf16);
  const double shard = 2.0 * 8192 * 1024 * 8192 / planck::sim::gemm_seconds(h100, 8192, 1024, 8192, DType::kBf16);
  CHECK(shard < full);
  CHECK(full < 989e12);
  // FP8 on Hopper runs at the FP8 peak's rate; A100 has no FP8 tensor cores.
  CHECK(planck::sim::gemm_seconds(h100, 8192, 8192, 8192, DType::kFp8) <
        planck::sim::gemm_seconds(h100, 8192, 8192, 8192, DType::kBf16));
  CHECK(planck::sim::gemm_seconds(a100, 8192, 8192, 8192, DType::kFp8) ==
        planck::sim::gemm_seconds(a100, 8192, 8192, 8192, DType::kBf16));
}

TEST_CASE("sim_mfu_is_measured_not_the_input") {
  // One GPU, no communication: with training.mfu = 0.5 the reported MFU is flops / step / peak
  // = 0.5; without it the per-kernel model gives its own, below the GEMM ceiling.
  const std::string base = R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 1, "gpu": "h100-sxm"},
    "mesh": {"dims": ["dp"], "shape": [1]}, "model": "llama3-8b",
    "training": {"seq_len": 4096, "micro_batch": 1, "grad_accumulation": 2)";
  auto run = [&](const std::string& extra) {
    auto plan = t::plan_from(base + extra + "}}");
    auto mesh = t::mesh_of(plan);
    auto r = planck::sim::simulate(plan, mesh);
    REQUIRE(r.is_ok());
    return *r;
  };
  const auto fixed = run(R"(, "mfu": 0.5)");
  CHECK(fixed.compute.mfu_override.has_value());
  CHECK(fixed.mfu == doctest::Approx(0.5));
  CHECK(fixed.tflops_per_gpu == doctest::Approx(fixed.flops_per_rank / fixed.step.step_time_s / 1e12));
  const auto kernel = run("");
  CHECK(!kernel.compute.mfu_override.has_value());
  CHECK(kernel.mfu == doctest::Approx(kernel.flops_per_rank / kernel.step.step_time_s / 989e12));
  CHECK(kernel.mfu > 0.2);
  CHECK(kernel.mfu < planck::core::gpu_preset("h100-sxm")->compute.gemm_max);
  CHECK(kernel.compute.gemm_s > kernel.compute.attention_s);
  CHECK(kernel.compute.recompute_s == 0);
}

TEST_CASE("sim_fp8_linears_run_at_the_fp8_rate_and_pay_their_casts") {
  // training.fp8: the transformer layers' linear GEMMs at fp8_tflops x the FP8 curve; the head
  // and attention stay bf16; each distinct linear input (forward) and each output gradient
  // (backward) is cast through HBM at 4 bytes an element (bf16 read, FP8 copy and its transpose).
  using planck::core::DType;
  const auto h100 = *planck::core::gpu_preset("h100-sxm");
  const auto llama = *planck::core::model_preset("llama3-8b");
  planck::sim::ComputeShape bf16;
  bf16.seq_len = 8192;
  planck::sim::ComputeShape fp8 = bf16;
  fp8.linear_dtype = DType::kFp8;
  const double T = 8192, h = 4096, f = 14336, hd = 128, a = 32, kv = 8;
  const auto& c = h100.compute;
  auto eff = [&](double m, double n, double k) {
    auto g = [&](double x) { return x / (x + c.gemm_half_dim); };
    return c.fp8_gemm_max * g(m) * g(n) * g(k);
  };
  auto fp8_gemm = [&](double m, double n, double k) { return 2 * m * n * k / (1979e12 * eff(m, n, k)); };
  // Forward GEMMs of a Llama layer: wq, wk, wv, wo, w1, w3, w2.
  const double forward = fp8_gemm(T, a * hd, h) + 2 * fp8_gemm(T, kv * hd, h) + fp8_gemm(T, h, a * hd) +
                         2 * fp8_gemm(T, f, h) + fp8_gemm(T, h, f);
  const auto on = planck::sim::layer_times(llama, h100, fp8, false);
  const auto off = planck::sim::layer_times(llama, h100, bf16, false);
  CHECK(on.forward.gemm_s == doctest::Approx(forward));
  CHECK(on.forward.flops == doctest::Approx(off.forward.flops));
  CHECK(on.forward.attention_s == doctest::Approx(off.forward.attention_s));
  // Standard attention's QK^T and AV are batched matmuls, not linears: bf16 too.
  planck::sim::ComputeShape std_bf16 = bf16, std_fp8 = fp8;
  std_bf16.attention = std_fp8.attention = Attention::kStandard;
  CHECK(planck::sim::layer_times(llama, h100, std_fp8, false).forward.attention_s ==
        doctest::Approx(planck::sim::layer_times(llama, h100, std_bf16, false).forward.attention_s));
  // Distinct inputs: q/k/v share x, w1/w3 share the norm output, wo's and w2's of their own.
  const double cast_fwd = 4 * T * (h + a * hd + h + f);
  const double cast_bwd = 4 * T * (a * hd + 2 * kv * hd + h + 2 * f + h);
  CHECK(on.forward.memory_s - off.forward.memory_s == doctest::Approx(planck::sim::memory_seconds(h100, cast_fwd)));
  CHECK(on.backward.memory_s - off.backward.memory_s == doctest::Approx(planck::sim::memory_seconds(h100, cast_bwd)));
  // The output head is not a transformer-layer linear (Megatron's output layer is not a TE
  // module; torchtitan's recipes filter "output"): unchanged.
  CHECK(planck::sim::head_times(llama, h100, fp8).forward.gemm_s ==
        doctest::Approx(planck::sim::head_times(llama, h100, bf16).forward.gemm_s));
  // The MoE router is no FP8 linear either.
  const auto mixtral = *planck::core::model_preset("mixtral-8x7b");
  int high_precision = 0;
  for (const auto& g : planck::sim::layer_gemms(mixtral, fp8, true)) {
    if (!g.linear) {
      ++high_precision;
      CHECK(g.n == doctest::Approx(static_cast<double>(mixtral.experts)));
    }
  }
  CHECK(high_precision == 1);
}

TEST_CASE("sim_fp8_needs_fp8_tensor_cores_and_says_which_recipe_was_priced") {
  auto run = [](const std::string& gpu, const std::string& fp8) {
    auto plan = t::plan_from(R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8, "gpu": ")" + gpu +
                             R"("}, "mesh": {"dims": ["dp"], "shape": [8]}, "model": "llama3-8b",
      "training": {"seq_len": 4096, "global_batch": 16, "fp8": ")" + fp8 + R"("}})");
    auto mesh = t::mesh_of(plan);
    auto r = planck::sim::simulate(plan, mesh);
    REQUIRE(r.is_ok());
    return *r;
  };
  auto has_note = [](const planck::sim::SimResult& r, const std::string& words) {
    for (const auto& n : r.notes) {
      if (n.find(words) != std::string::npos) return true;
    }
    return false;
  };
  // A100 has no FP8 tensor cores: the linears stay bf16 and the output says so.
  const auto a100 = run("a100-80g", "tensorwise");
  CHECK(a100.step.step_time_s == doctest::Approx(run("a100-80g", "none").step.step_time_s));
  CHECK(has_note(a100, "no FP8 tensor cores"));
  // H100: faster than bf16; rowwise is priced as tensorwise and said to be.
  const auto tensorwise = run("h100-sxm", "tensorwise");
  CHECK(tensorwise.step.step_time_s < run("h100-sxm", "none").step.step_time_s);
  CHECK_FALSE(has_note(tensorwise, "priced as tensorwise"));
  const auto rowwise = run("h100-sxm", "rowwise");
  CHECK(rowwise.step.step_time_s == doctest::Approx(tensorwise.step.step_time_s));
  CHECK(has_note(rowwise, "priced as tensorwise"));
  // What was priced is in the output.
  CHECK(tensorwise.compute.linear_dtype == planck::core::DType::kFp8);
  CHECK(a100.compute.linear_dtype == planck::core::DType::kBf16);
  const auto json = nlohmann::json::parse(planck::sim::sim_to_json(tensorwise));
  CHECK(json["compute"]["fp8"] == "tensorwise");
  CHECK(json["compute"]["linear_dtype"] == "fp8");
  // MX blocks need MX tensor cores (Blackwell, CDNA4): said on Hopper, not on B200.
  CHECK(has_note(run("h100-sxm", "mxfp8"), "needs MX tensor cores (Blackwell, MI355X)"));
  CHECK_FALSE(has_note(run("b200", "mxfp8"), "needs MX tensor cores"));
}

TEST_CASE("sim_fp8_under_a_fixed_mfu_is_said_to_do_nothing") {
  auto plan = t::plan_from(R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8},
    "mesh": {"dims": ["dp"], "shape": [8]}, "model": "llama3-8b",
    "training": {"seq_len": 4096, "global_batch": 16, "mfu": 0.4, "fp8": "tensorwise"}})");
  auto mesh = t::mesh_of(plan);
  auto r = planck::sim::simulate(plan, mesh);
  REQUIRE(r.is_ok());
  bool said = false;
  for (const auto& n : r->notes) said = said || n.find("no effect under training.mfu") != std::string::npos;
  CHECK(said);
}
