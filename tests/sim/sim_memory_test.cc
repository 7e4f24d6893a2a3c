// Memory per GPU against published worked examples (docs/sources/simulator.md §3).

#include <doctest/doctest.h>

#include <string>

#include "core/plan/presets.h"
#include "sim/memory.h"
#include "sim_test_util.h"

namespace {

using planck::core::Checkpointing;
using planck::core::DataParallel;
namespace t = planck::sim::test;

std::string llama8b_plan(const std::string& dims, const std::string& shape, const std::string& dp) {
  return R"({"format": "planck/1", "cluster": {"nodes": 8, "gpus_per_node": 8, "gpu": "h100-sxm"},
    "mesh": {"dims": [)" + dims + R"(], "shape": [)" + shape + R"(]}, "parallelism": {"data_parallel": ")" + dp +
         R"("}, "model": "llama3-8b",
    "training": {"seq_len": 8192, "micro_batch": 1, "grad_accumulation": 1, "activation_checkpointing": "none"}})";
}

planck::sim::Memory memory_of(const std::string& json) {
  auto plan = t::plan_from(json);
  auto mesh = t::mesh_of(plan);
  return planck::sim::memory(plan, mesh, t::lower_ok(plan, mesh));
}

}  // namespace

TEST_CASE("sim_zero_paper_worked_example") {
  // ZeRO (Rajbhandari et al. SC'20) Fig. 1: 7.5B parameters, 64 GPUs, fp16 params and grads,
  // mixed-precision Adam K = 12: 120 / 31.4 / 16.6 / 1.9 GB.
  const double psi = 7.5e9;
  auto gb = [&](DataParallel dp) { return planck::sim::model_states(psi, dp, 64, 2, 2, "adam").total() / 1e9; };
  CHECK(gb(DataParallel::kDdp) == doctest::Approx(120.0));
  CHECK(gb(DataParallel::kZero1) == doctest::Approx(4 * 7.5 + 12 * 7.5 / 64));  // 31.4
  CHECK(gb(DataParallel::kZero1) == doctest::Approx(31.4).epsilon(0.002));
  CHECK(gb(DataParallel::kZero2) == doctest::Approx(2 * 7.5 + 14 * 7.5 / 64));  // 16.6
  CHECK(gb(DataParallel::kZero2) == doctest::Approx(16.6).epsilon(0.003));
  CHECK(gb(DataParallel::kZero3) == doctest::Approx(16 * 7.5 / 64));  // 1.875
  CHECK(gb(DataParallel::kZero3) == doctest::Approx(1.9).epsilon(0.02));
  CHECK(gb(DataParallel::kFsdp) == doctest::Approx(gb(DataParallel::kZero3)));
}

TEST_CASE("sim_megatron_bytes_per_parameter") {
  // Megatron theoretical_memory_usage.py: 18 bytes/param, 6 + 12/d with the distributed
  // optimizer (bf16 params, fp32 grads, fp32 master + Adam states).
  for (std::int64_t d : {1, 2, 3, 7, 8, 16}) {
    CHECK(planck::sim::model_states(1.0, DataParallel::kDdp, d, 2, 4, "adamw").total() == doctest::Approx(18.0));
    CHECK(planck::sim::model_states(1.0, DataParallel::kZero1, d, 2, 4, "adamw").total() ==
          doctest::Approx(6.0 + 12.0 / static_cast<double>(d)));
  }
  // fp32 params: no master copy, 4 + 4 + 8 = 16 (Megatron's table).
  CHECK(planck::sim::model_states(1.0, DataParallel::kDdp, 1, 4, 4, "adamw").total() == doctest::Approx(16.0));
}

TEST_CASE("sim_llama3_8b_ddp_does_not_fit_fsdp_over_64_does") {
  // seq 8192, micro-batch 1, no checkpointing, no accumulation, 80 GB H100s.
  const auto ddp = memory_of(llama8b_plan(R"("dp")", "64", "ddp"));
  const auto fsdp = memory_of(llama8b_plan(R"("dp_shard")", "64", "fsdp"));
  const double psi = planck::core::param_counts(*planck::core::model_preset("llama3-8b")).total;
  CHECK(psi == doctest::Approx(8.03e9).epsilon(0.001));
  // DDP model states alone are 18 x 8.03e9 = 144.5 GB > 80 GB.
  CHECK(static_cast<double>(ddp.params + ddp.grads + ddp.optimizer) == doctest::Approx(18 * psi).epsilon(1e-6));
  CHECK(ddp.peak > ddp.capacity);
  // FSDP over 64: 18 x psi / 64 = 2.26 GB of states, plus activations: fits.
  CHECK(static_cast<double>(fsdp.optimizer) == doctest::Approx(12 * psi / 64).epsilon(1e-6));
  CHECK(fsdp.peak < fsdp.capacity);
  CHECK(fsdp.capacity == 81559LL * 1024 * 1024);
}

TEST_CASE("sim_korthikanti_activation_rows") {
  // GPT layer (f = 4h, LayerNorm, dropout): Korthikanti et al. Table 2 with FlashAttention
  // (no 5as/h term): sbh(10 + 24/t) with TP, sbh(34/t) with TP + SP, 2sbh full recompute.
  planck::core::ModelSpec gpt;
  gpt.layers = 1;
  gpt.hidden = 1024;
  gpt.ffn_hidden = 4096;
  gpt.heads = 16;
  gpt.kv_heads = 16;
  gpt.gated_mlp = false;
  gpt.biases = true;
  const std::int64_t s = 2048;
  const double sbh = static_cast<double>(s) * 1024;
  auto bytes = [&](const planck::core::ModelSpec& m, std::int64_t tp, bool sp, Checkpointing c) {
    planck::sim::ComputeShape shape;
    shape.seq_len = s;
    shape.tp = tp;
    shape.sequence_parallel = sp;
    shape.checkpointing = c;
    return planck::sim::layer_activation_bytes(m, false, shape, 2);
  };
  for (std::int64_t tp : {1, 2, 3, 8}) {
    const double t = static_cast<double>(tp);
    CHECK(bytes(gpt, tp, false, Checkpointing::kNone) ==
          doctest::Approx(sbh * (10 + 24 / t)));
    CHECK(bytes(gpt, tp, tp > 1, Checkpointing::kNone) ==
          doctest::Approx(sbh * 34 / t));
    CHECK(bytes(gpt, tp, false, Checkpointing::kFull) ==
          doctest::Approx(2 * sbh));
    CHECK(bytes(gpt, tp, false, Checkpointing::kSelective) <
          bytes(gpt, tp, false, Checkpointing::kNone));
  }
  // Llama-style (docs/sources/simulator.md §3.2): sbh(12 + 4g) + 6sbf; Llama-3-8B: 34.0 sbh.
  const auto llama = *planck::core::model_preset("llama3-8b");
  CHECK(bytes(llama, 1, false, Checkpointing::kNone) ==
        doctest::Approx(static_cast<double>(s) * 4096 * 34.0));
}

TEST_CASE("sim_fsdp_last_microbatch_keeps_unsharded_grads") {
  auto json = [](const char* sync) {
    return std::string(R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8},
      "mesh": {"dims": ["dp_shard"], "shape": [8]}, "parallelism": {"data_parallel": "fsdp"},
      "model": "llama3-8b", "training": {"seq_len": 1024, "grad_accumulation": 4, "grad_sync": ")") + sync + "\"}}";
  };
  const auto every = memory_of(json("every_microbatch"));
  const auto last = memory_of(json("last_microbatch"));
  // set_requires_gradient_sync(False): unsharded fp32 gradients of the whole model, 4 x psi.
  const double psi = planck::core::param_counts(*planck::core::model_preset("llama3-8b")).total;
  CHECK(static_cast<double>(last.grads - every.grads) == doctest::Approx(4 * psi).epsilon(1e-6));
}

TEST_CASE("sim_bf16_optimizer_keeps_a_full_fp32_gradient_buffer") {
  // DeepSpeed's BF16_Optimizer (bf16, data_types.grad_accum_dtype fp32, ZeRO stage 1) accumulates
  // into zeros_like(the flat bf16 parameters, dtype=fp32) (deepspeedai/DeepSpeed@edaa722
  // deepspeed/runtime/bf16_optimizer.py:176): 4 bytes a parameter on every rank, not sharded,
  // while the gradients are all-reduced in bf16 (communication_data_type, engine.py:1405-1416).
  auto json = [](const char* accum) {
    return std::string(R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8},
      "mesh": {"dims": ["dp"], "shape": [8]}, "parallelism": {"data_parallel": "zero1"}, "model": "llama3-8b",
      "training": {"seq_len": 1024, "param_dtype": "bf16", "reduce_dtype": "bf16")") + accum + "}}";
  };
  const double psi = planck::core::param_counts(*planck::core::model_preset("llama3-8b")).total;
  CHECK(static_cast<double>(memory_of(json("")).grads) == doctest::Approx(2 * psi).epsilon(1e-6));
  CHECK(static_cast<double>(memory_of(json(R"(, "grad_accum_dtype": "fp32")")).grads) ==
        doctest::Approx(4 * psi).epsilon(1e-6));
}

TEST_CASE("sim_pipeline_in_flight_microbatches") {
  auto acts = [](const char* sched, std::int64_t k) {
    return memory_of(std::string(R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 4},
      "mesh": {"dims": ["pp"], "shape": [4]}, "parallelism": {"pipeline_schedule": ")") + sched + R"("},
      "model": {"layers": 8, "hidden": 256, "ffn_hidden": 1024, "heads": 8, "kv_heads": 8, "vocab": 64},
      "training": {"seq_len": 256, "grad_accumulation": )" + std::to_string(k) + "}}")
        .activations;
  };
  // 1F1B: the first stage holds min(p, m) micro-batches; GPipe all m (Korthikanti §4.2.3).
  const double two = static_cast<double>(acts("1f1b", 2));
  CHECK(static_cast<double>(acts("1f1b", 3)) == doctest::Approx(1.5 * two));
  CHECK(static_cast<double>(acts("1f1b", 8)) == doctest::Approx(2 * two));
  CHECK(acts("1f1b", 16) == acts("1f1b", 8));
  // GPipe's last stage holds all m as well, plus the logits (Megatron's 4 s b (h + V)).
  CHECK(static_cast<double>(acts("gpipe", 8)) == doctest::Approx(4 * two + 4.0 * 256 * (256 + 64)));
}

// Unequal stages (torchtitan's split gives the first and last stage a layer less: 10 layers over
// 4 stages = 2, 3, 3, 2): 1F1B rank r holds min(pp - r, m) micro-batches of its own stage's
// layers, so the busiest is rank 1 (3 x 3 layers), not rank 0's 4 micro-batches x the largest
// stage (12). Ranks hold what their schedule order says (sim/pipeline.h activation_peaks).
TEST_CASE("sim_pipeline_in_flight_weighted_by_stage_layers") {
  auto mem = [](std::int64_t layers, std::int64_t pp, std::int64_t k) {
    return memory_of(std::string(R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": )") +
                     std::to_string(pp) + R"(}, "mesh": {"dims": ["pp"], "shape": [)" + std::to_string(pp) + R"(]},
      "model": {"layers": )" + std::to_string(layers) + R"(, "hidden": 256, "ffn_hidden": 1024, "heads": 8,
      "kv_heads": 8, "vocab": 64}, "training": {"seq_len": 256, "grad_accumulation": )" + std::to_string(k) + "}}")
        .activations;
  };
  // One layer of one micro-batch: pp 1, 1 micro-batch, minus the logits.
  const double logits = 4.0 * 256 * (256 + 64);
  const double layer = static_cast<double>(mem(1, 1, 1)) - logits;
  CHECK(static_cast<double>(mem(10, 4, 8)) == doctest::Approx(9 * layer));
  // 8 layers, 2 per stage: rank 0 holds 4 x 2.
  CHECK(static_cast<double>(mem(8, 4, 8)) == doctest::Approx(8 * layer));
}

// The memory twin of sim_fsdp_under_pipeline_gathers_once_per_step: under torch's pipelining a
// backward leaves its units gathered (set_reshard_after_backward(False) until REDUCE_GRAD), so
// at the stage's last backward every block of the stage is gathered whether or not forwards
// reshard; without a pipeline resharding keeps two blocks (in use + prefetched).
TEST_CASE("sim_fsdp_under_pipeline_keeps_the_stage_gathered") {
  auto json = [](int pp, bool reshard) {
    return std::string(R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8},
      "mesh": {"dims": ["pp", "dp_shard"], "shape": [)") + std::to_string(pp) + ", " + std::to_string(8 / pp) +
           R"(]}, "parallelism": {"data_parallel": "fsdp", "reshard_after_forward": )" + (reshard ? "true" : "false") +
           R"(}, "model": "llama3-8b", "training": {"seq_len": 1024, "grad_accumulation": 4}})";
  };
  const auto m = planck::core::model_preset("llama3-8b");
  REQUIRE(m.has_value());
  const double h = 4096, f = 14336, kv_dim = 1024;
  const double block = 2 * h * h + 2 * h * kv_dim + 3 * h * f + 2 * h;  // q, o, k, v, gated MLP, 2 norms
  REQUIRE(m->layers == 32);
  // pp 2: 16 blocks per stage, bf16.
  const auto pp_keep = memory_of(json(2, false)), pp_reshard = memory_of(json(2, true));
  CHECK(pp_reshard.params == pp_keep.params);
  const auto flat_keep = memory_of(json(1, false)), flat_reshard = memory_of(json(1, true));
  CHECK(static_cast<double>(flat_keep.params - flat_reshard.params) == doctest::Approx((32 - 2) * block * 2).epsilon(1e-6));
}
