// The allocator's and the device's view of memory (sim/memory_reserved.h): the loss working set
// per cross-entropy implementation, FSDP2's all-gather stream, NCCL's buffers, Transformer
// Engine's FP8 weight caches, the pressure cap on the reserved peak and what memory-exceeds
// judges. Expected numbers are written out from the frameworks' code cited in each case.

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "sim/compute.h"
#include "sim/memory.h"
#include "sim/memory_reserved.h"
#include "sim_test_util.h"

namespace {

namespace t = planck::sim::test;
using planck::core::CrossEntropy;

constexpr double kMiB = 1024.0 * 1024.0;

planck::sim::Memory memory_of(const std::string& json) {
  auto plan = t::plan_from(json);
  auto mesh = t::mesh_of(plan);
  return planck::sim::memory(plan, mesh, t::lower_ok(plan, mesh));
}

// Llama 3 8B on one node of 8 H100s, FSDP over 8, one 8192-token sequence per GPU.
std::string fsdp8(const std::string& training_extra, const std::string& gpu = "\"h100-sxm\"") {
  return R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8, "gpu": )" + gpu + R"(},
    "mesh": {"dims": ["dp"], "shape": [8]}, "parallelism": {"data_parallel": "fsdp"}, "model": "llama3-8b",
    "training": {"seq_len": 8192, "micro_batch": 1, "grad_accumulation": 1, "activation_checkpointing": "selective")" +
         training_extra + "}}";
}

}  // namespace

TEST_CASE("loss_bytes_per_cross_entropy_implementation") {
  // 8192 tokens, Llama 3's h = 4096 and V = 128256.
  const double T = 8192, h = 4096, V = 128256;
  // eager: the head's bf16 input (2 h) and per logit the saved fp32 log-probabilities (4), the
  // nll gradient (4) and _log_softmax_backward_data's output (4) at the start of the backward.
  CHECK(planck::sim::loss_bytes(CrossEntropy::kEager, 8192, 4096, 128256, 1) == doctest::Approx(T * (2 * h + 12 * V)));
  // under loss_parallel (tp 8): _nll_loss_and_log_softmax_backward holds x, zeros_like(x),
  // exp(x) and their sum, 16 bytes per local logit.
  CHECK(planck::sim::loss_bytes(CrossEntropy::kEager, 8192, 4096, 128256, 8) ==
        doctest::Approx(T * (2 * h + 16 * V / 8)));
  // compiled: saved bf16 logits and their bf16 gradient.
  CHECK(planck::sim::loss_bytes(CrossEntropy::kCompiled, 8192, 4096, 128256, 1) == doctest::Approx(T * (2 * h + 4 * V)));
  // fused: Megatron's theoretical_memory_usage.py, 4 s b h (1 + V / h), over tp.
  CHECK(planck::sim::loss_bytes(CrossEntropy::kFused, 8192, 4096, 128256, 2) == doctest::Approx(4 * T * (h + V) / 2));
  // te: Transformer Engine's CrossEntropyFunction.forward (transformer_engine/pytorch/
  // cross_entropy.py@02965d2) saves its bf16 input, the logits, 2 bytes each, in place of the
  // fused kernel's fp32 copy (4 bytes); the head's share as fused.
  CHECK(planck::sim::loss_bytes(CrossEntropy::kTe, 8192, 4096, 128256, 2) == doctest::Approx(T * (4 * h + 2 * V) / 2));
  CHECK(planck::core::parse_cross_entropy("te") == CrossEntropy::kTe);
}

TEST_CASE("cross_entropy_defaults_follow_the_stack") {
  planck::core::Training tr;
  CHECK(planck::core::cross_entropy_of(tr) == CrossEntropy::kFused);  // megatron
  tr.stack = planck::core::Stack::kTorchtitanCompile;
  CHECK(planck::core::cross_entropy_of(tr) == CrossEntropy::kCompiled);
  tr.stack = planck::core::Stack::kTorchtitanEager;
  CHECK(planck::core::cross_entropy_of(tr) == CrossEntropy::kEager);
  tr.stack = planck::core::Stack::kNanotron;
  CHECK(planck::core::cross_entropy_of(tr) == CrossEntropy::kFused);
  tr.cross_entropy = CrossEntropy::kEager;
  CHECK(planck::core::cross_entropy_of(tr) == CrossEntropy::kEager);
}

TEST_CASE("memory_loss_moves_with_the_cross_entropy") {
  const auto eager = memory_of(fsdp8(R"(, "stack": "torchtitan_eager")"));
  const auto compiled = memory_of(fsdp8(R"(, "stack": "torchtitan_compile")"));
  const double V = 128256, T = 8192;
  CHECK(eager.loss - compiled.loss == doctest::Approx(8 * T * V).epsilon(1e-9));
  CHECK(eager.peak_allocated - compiled.peak_allocated == doctest::Approx(8 * T * V).epsilon(1e-9));
}

TEST_CASE("full_bf16_training_keeps_no_master_copy") {
  // torchtitan's training.dtype = "bfloat16" (#1646): parameters, gradients and AdamW's two states
  // in bf16 with no fp32 master: 2 + 2 + 2 x 2 bytes a parameter where mixed precision (bf16
  // compute, fp32 master, states and gradients) keeps 2 + 4 + 4 + 2 x 4.
  const auto mixed = memory_of(fsdp8(R"(, "param_dtype": "bf16", "reduce_dtype": "fp32")"));
  const auto full = memory_of(
      fsdp8(R"(, "param_dtype": "bf16", "reduce_dtype": "bf16", "master_dtype": "none", "optimizer_state_dtype": "bf16")"));
  CHECK(full.optimizer == doctest::Approx(mixed.optimizer * 4.0 / 12.0).epsilon(1e-9));
  CHECK(full.grads < mixed.grads);
}

TEST_CASE("op_sac_recomputes_the_routed_experts_grouped_gemms") {
  // torchtitan's MoE models' _op_sac_save_list (models/{deepseek_v3,qwen3,llama4}/infra/
  // parallelize.py@238fa99) holds aten.mm but not torch._grouped_mm: of wq, wk, wv, wo, the router
  // (five aten.mm) the 1st, 3rd and 5th are saved; the two routed-expert GEMMs always re-run.
  using planck::sim::Gemm;
  const std::vector<Gemm> gemms = {{1, 1, 1}, {2, 1, 1}, {3, 1, 1}, {4, 1, 1}, {5, 1, 1}, {6, 1, 1, 8}, {7, 1, 1, 8}};
  const auto moe = planck::sim::op_sac_gemms(gemms, true);
  REQUIRE(moe.saved.size() == 3);
  CHECK(moe.saved[0].m == 1);
  CHECK(moe.saved[1].m == 3);
  CHECK(moe.saved[2].m == 5);
  CHECK(moe.recomputed.size() == 4);
  // A dense layer: every other GEMM, as before.
  const auto dense = planck::sim::op_sac_gemms(gemms, false);
  CHECK(dense.saved.size() == 4);
  CHECK(dense.saved.back().m == 7);
}

TEST_CASE("fsdp2_all_gather_stream_and_live_buffer") {
  // torchtitan (FSDP2): the copy-in stream caches its two largest consecutive gathers (the root,
  // embedding + head of 2 x 128256 x 4096 parameters, then a block) while one block's buffer is
  // live at the peak: gather_pool = max(root, block) in bf16.
  const auto tt = memory_of(fsdp8(R"(, "stack": "torchtitan_compile")"));
  const double root = 2 * 128256.0 * 4096 + 4096;
  const double block = t::llama_layer_params(4096, 14336, 32, 8, 128);
  CHECK(static_cast<double>(tt.gather_pool) == doctest::Approx(2 * std::max(root, block)).epsilon(1e-6));
  // The same layout priced as Megatron's stack has no FSDP2 buffers (one block less gathered) and
  // keeps a bf16 parameter shard beside the fp32 main-weight shard, which FSDP2 does not (below).
  const auto mg = memory_of(fsdp8(R"(, "stack": "megatron", "cross_entropy": "compiled")"));
  CHECK(mg.gather_pool == 0);
  const double total = 32 * block + root;
  CHECK(static_cast<double>(tt.params - mg.params) == doctest::Approx(2 * block - 2 * total / 8).epsilon(1e-6));
}

TEST_CASE("torch_fsdp_keeps_the_fp32_shard_as_the_master_copy") {
  // FSDP2 (fully_shard with MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=bf16)) keeps each
  // sharded parameter in its original fp32 and casts to bf16 for the all-gather; after the
  // reduce-scatter the bf16 gradient shard is cast back to the parameter's dtype
  // (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py foreach_reduce: `target_dtype =
  // orig_dtype`, `_to_dtype_if_needed(reduce_output, target_dtype)`). Per sharded parameter with
  // AdamW: fp32 shard 4 (the master the optimizer steps) + fp32 gradient 4 + m, v 8 = 16 bytes
  // over 8 ranks, where DeepSpeed ZeRO-3 / Megatron-FSDP keep b_p + b_g + 12 (ZeRO paper §3.1).
  const double root = 2 * 128256.0 * 4096 + 4096;
  const double block = t::llama_layer_params(4096, 14336, 32, 8, 128);
  const double total = 32 * block + root;
  const auto tt = memory_of(fsdp8(R"(, "stack": "torchtitan_compile", "reduce_dtype": "bf16")"));
  CHECK(static_cast<double>(tt.optimizer) == doctest::Approx(12 * total / 8).epsilon(1e-6));
  // grads: the fp32 shard, plus one block's unsharded bf16 gradient as the reduce-scatter input.
  CHECK(static_cast<double>(tt.grads) == doctest::Approx(4 * total / 8 + 2 * block).epsilon(1e-6));
  // params: only what is gathered in bf16 (root, the block in use, the prefetched one and
  // FSDP2's live all-gather buffer), no persistent 16-bit shard.
  CHECK(static_cast<double>(tt.params) == doctest::Approx(2 * (root + 3 * block)).epsilon(1e-6));
  const auto ds = memory_of(fsdp8(R"(, "stack": "deepspeed", "reduce_dtype": "bf16", "cross_entropy": "compiled")"));
  CHECK(static_cast<double>(ds.optimizer) == doctest::Approx(12 * total / 8).epsilon(1e-6));
  CHECK(static_cast<double>(ds.grads) == doctest::Approx(2 * total / 8 + 2 * block).epsilon(1e-6));
  // A model trained in bf16 with no master (torchtitan training.dtype = "bfloat16") keeps its
  // bf16 shard: 2 + 2 + 8 over 8.
  const auto pure =
      memory_of(fsdp8(R"(, "stack": "torchtitan_compile", "reduce_dtype": "bf16", "master_dtype": "none")"));
  CHECK(static_cast<double>(pure.optimizer) == doctest::Approx(8 * total / 8).epsilon(1e-6));
  CHECK(static_cast<double>(pure.params) == doctest::Approx(2 * total / 8 + 2 * (root + 3 * block)).epsilon(1e-6));
}

TEST_CASE("nccl_buffers_and_outside_the_allocator") {
  // One FSDP group of 8 inside an H100 node: 32 ring channels, one receive connection each with
  // LL (8 x 512 x 8 x 16), LL128 (120 x 640 x 8 x 8) and Simple (4 MiB) buffers, plus NVLS:
  // 16 channels x 2 x (128 KiB x 8 steps) x 8 heads (NVIDIA/nccl src/init.cc, transport/nvls.cc).
  const auto m = memory_of(fsdp8(R"(, "stack": "torchtitan_compile")"));
  const double ring = 32 * (8.0 * 512 * 8 * 16 + 120.0 * 640 * 8 * 8 + 4 * kMiB);
  const double nvls = 16.0 * 2 * (128.0 * 1024 * 8) * 8;
  CHECK(static_cast<double>(m.nccl_buffers) == doctest::Approx(ring + nvls));
  CHECK(m.cuda_context == static_cast<std::int64_t>(512 * kMiB));
  CHECK(m.workspaces == static_cast<std::int64_t>(2 * 32 * kMiB));  // Hopper: 4096 x 8 x 1024, two handles
  CHECK(m.peak == m.peak_allocated + m.gather_pool + m.fragmentation + m.cuda_context + m.nccl_buffers);
  CHECK(m.required == m.peak_allocated + m.fragmentation + m.cuda_context + m.nccl_buffers);
  // A100 (no FP8 tensor cores): the pre-Hopper workspace, ":4096:2:16:8" = 8,519,680 bytes.
  const auto a = memory_of(fsdp8(R"(, "stack": "torchtitan_compile")", "\"a100-80g\""));
  CHECK(a.workspaces == 2 * 8519680);
}

TEST_CASE("te_fp8_weight_caches_under_megatron") {
  // Transformer Engine keeps each FP8 linear's FP8 weight and its transpose across micro-batches:
  // 2 bytes per local layer weight (here: all 32 layers, not sharded because the cache holds the
  // gathered weight's casts).
  auto plan = [](const char* fp8) {
    return R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8, "gpu": "h100-sxm"},
      "mesh": {"dims": ["dp"], "shape": [8]}, "parallelism": {"data_parallel": "zero1"}, "model": "llama3-8b",
      "training": {"seq_len": 8192, "micro_batch": 1, "grad_accumulation": 1, "activation_checkpointing": "full",
                   "stack": "megatron", "fp8": ")" + std::string(fp8) + R"("}})";
  };
  const auto bf16 = memory_of(plan("none")), fp8 = memory_of(plan("tensorwise"));
  const double layers = 32 * t::llama_layer_params(4096, 14336, 32, 8, 128);
  CHECK(static_cast<double>(fp8.params - bf16.params) == doctest::Approx(2 * layers).epsilon(1e-6));
}

TEST_CASE("reserved_peak_is_capped_by_the_device") {
  planck::sim::Memory m;
  m.peak_allocated = 70LL << 30;
  m.persistent = 20LL << 30;
  m.gather_pool = 4LL << 30;
  m.cuda_context = 1LL << 29;
  m.nccl_buffers = 1LL << 29;
  m.capacity = 100LL << 30;
  // Unconstrained: allocated + 10% of the 50 GiB allocated within the step + the gather pool.
  CHECK(planck::sim::reserved_at(m, 0.1) == (79LL << 30));
  // The device leaves 78 - 1 = 77 GiB: the allocator releases its caches down to that.
  m.capacity = 78LL << 30;
  CHECK(planck::sim::reserved_at(m, 0.1) == (77LL << 30));
  // Never below what must stay resident (allocated + fragmentation).
  m.capacity = 60LL << 30;
  CHECK(planck::sim::reserved_at(m, 0.1) == (75LL << 30));
  CHECK(planck::sim::memory_exceeds(m) == false);  // `required` is memory()'s to fill; 0 here
}

TEST_CASE("memory_exceeds_counts_the_context_and_nccl") {
  // Llama 3 8B on a GPU sized to its allocated peak: the CUDA context and NCCL's buffers no
  // longer fit, so memory-exceeds holds even though every tensor would.
  const auto m = memory_of(fsdp8(R"(, "stack": "torchtitan_compile")"));
  const std::string gpu = R"({"preset": "h100-sxm", "memory_bytes": )" + std::to_string(m.peak_allocated + (1 << 20)) + "}";
  const auto tight = memory_of(fsdp8(R"(, "stack": "torchtitan_compile")", gpu));
  CHECK(tight.peak_allocated < tight.capacity);
  CHECK(planck::sim::memory_exceeds(tight));
}

TEST_CASE("te_fp8_saves_linear_inputs_in_one_byte") {
  // Megatron with Transformer Engine FP8, no recompute: each layer keeps the QKV and MLP inputs,
  // the attention output and the down projection's input as FP8 casts, half of a bf16 tensor
  // each: 3 T h + T f bytes less per layer (T = 8192 tokens, h = 4096, f = 14336, tp 1).
  auto plan = [](const char* fp8) {
    return R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8, "gpu": "h100-sxm"},
      "mesh": {"dims": ["dp"], "shape": [8]},
      "parallelism": {"data_parallel": "zero1", "fp8_param_gather": true}, "model": "llama3-8b",
      "training": {"seq_len": 8192, "micro_batch": 1, "grad_accumulation": 1, "activation_checkpointing": "none",
                   "stack": "megatron", "fp8": ")" + std::string(fp8) + R"("}})";
  };
  const auto bf16 = memory_of(plan("none")), fp8 = memory_of(plan("tensorwise"));
  const double T = 8192, h = 4096, f = 14336;
  CHECK(static_cast<double>(bf16.activations - fp8.activations) == doctest::Approx(32 * (3 * T * h + T * f)).epsilon(1e-6));
  // fp8_param_gather: the FP8 weight and its cached transpose replace the bf16 weight.
  CHECK(fp8.params == bf16.params);
}
