// training.stack and training.attention_kernel (sim/stack_cost.h): the extra bytes eager PyTorch
// ops move, and the attention kernels' published throughput against FlashAttention-2.

#include <doctest/doctest.h>

#include <cmath>

#include "core/plan/presets.h"
#include "sim/compute.h"
#include "sim/stack_cost.h"
#include "sim_test_util.h"

namespace {

planck::sim::ComputeShape shape(std::int64_t tokens, std::int64_t tp) {
  planck::sim::ComputeShape s;
  s.micro_batch = 1;
  s.seq_len = tokens;
  s.tp = tp;
  s.eager_ops = {true, true, true};
  return s;
}

}  // namespace

TEST_CASE("sim_eager_ops_move_the_bytes_of_their_unfused_passes") {
  const auto llama = *planck::core::model_preset("llama3-8b");  // RMSNorm, RoPE, SwiGLU
  const auto gpu = *planck::core::gpu_preset("h100-sxm");
  for (std::int64_t tp : {1, 2, 8}) {
    const double T = 8192, h = 4096, f = 14336, q = 32 * 128, kv = 8 * 128, t = static_cast<double>(tp);
    // Per bf16 element, eager minus fused: RMSNorm 36 - 4 (two per layer, h wide), rotary
    // 20 - 4 over q and k, SwiGLU 10 - 6 over the ffn width split by tp.
    const double expected = 2 * T * h * 32 + T * (q + kv) / t * 16 + T * f / t * 4;
    CAPTURE(tp);
    CHECK(planck::sim::eager_extra_layer_bytes(llama, shape(8192, tp), 2) == doctest::Approx(expected));
    // The layer's forward memory-bound time grows by exactly those bytes at HBM speed, the
    // backward by twice them.
    const auto eager = shape(8192, tp);
    auto fused_shape = eager;
    fused_shape.eager_ops = {};
    const auto fused = planck::sim::layer_times(llama, gpu, fused_shape, false);
    const auto unfused = planck::sim::layer_times(llama, gpu, eager, false);
    CHECK(unfused.forward.memory_s - fused.forward.memory_s ==
          doctest::Approx(planck::sim::memory_seconds(gpu, expected)));
    CHECK(unfused.backward.memory_s - fused.backward.memory_s ==
          doctest::Approx(2 * planck::sim::memory_seconds(gpu, expected)));
    CHECK(unfused.forward.gemm_s == fused.forward.gemm_s);
  }
  // LayerNorm (PyTorch's one fused kernel), learned positions (no rotary) and GeLU: nothing extra.
  auto mpt = llama;
  mpt.layer_norm = true;
  mpt.position_embeddings = 2048;
  mpt.gated_mlp = false;
  CHECK(planck::sim::eager_extra_layer_bytes(mpt, shape(2048, 1), 2) == 0);
}

TEST_CASE("sim_nanotron_runs_only_swiglu_eagerly") {
  // nanotron's Llama: TritonRMSNorm and flash-attn's fused rotary kernel, SwiGLU as act(gate) * up
  // (huggingface/nanotron@c2528430 src/nanotron/models/llama.py): only SwiGLU's 10 - 6 bytes per
  // ffn element are extra.
  const auto ops = planck::core::stack_eager_ops(planck::core::Stack::kNanotron);
  CHECK(!ops.norm);
  CHECK(!ops.rope);
  CHECK(ops.swiglu);
  const auto llama = *planck::core::model_preset("llama3-8b");
  auto s = shape(8192, 2);
  s.eager_ops = ops;
  CHECK(planck::sim::eager_extra_layer_bytes(llama, s, 2) == doctest::Approx(8192.0 * 14336 / 2 * 4));
  CHECK(!planck::core::stack_eager_ops(planck::core::Stack::kMegatron).any());
  CHECK(!planck::core::stack_eager_ops(planck::core::Stack::kTorchtitanCompile).any());
  const auto eager = planck::core::stack_eager_ops(planck::core::Stack::kTorchtitanEager);
  CHECK((eager.norm && eager.rope && eager.swiglu));
}

TEST_CASE("sim_attention_kernels_follow_their_published_curves") {
  const auto h100 = *planck::core::gpu_preset("h100-sxm");
  const auto a100 = *planck::core::gpu_preset("a100-80g");
  using K = planck::core::AttentionKernel;
  // tests/data/published/kernels.md §2.1-2.3, causal head dim 128, at the charts' own points.
  CHECK(planck::sim::attention_kernel_speedup(h100, K::kFa2, 4096) == 1.0);
  CHECK(planck::sim::attention_kernel_speedup(h100, K::kSdpa, 4096) == 1.0);
  CHECK(planck::sim::attention_kernel_speedup(h100, K::kFa3, 4096) == doctest::Approx(579.0 / 319));
  CHECK(planck::sim::attention_kernel_speedup(h100, K::kCudnn, 16384) == doctest::Approx(539.0 / 335));
  CHECK(planck::sim::attention_kernel_speedup(h100, K::kFa1, 8192) == doctest::Approx(135.0 / 308));
  CHECK(planck::sim::attention_kernel_speedup(a100, K::kFa1, 2048) == doctest::Approx(69.0 / 155));
  // Between two points: linear in log2(seq); beyond the charts: the end point.
  CHECK(planck::sim::attention_kernel_speedup(a100, K::kFa1, 2896) ==
        doctest::Approx(69.0 / 155 + (std::log2(2896.0) - 11) * (76.0 / 173 - 69.0 / 155)).epsilon(1e-9));
  CHECK(planck::sim::attention_kernel_speedup(a100, K::kFa1, 65536) == doctest::Approx(83.0 / 189));
  // FA3 and cuDNN's fast paths are Hopper kernels: on A100 the FA2 curve stays.
  CHECK(planck::sim::attention_kernel_speedup(a100, K::kFa3, 4096) == 1.0);
}

TEST_CASE("sim_attention_head_dims_follow_the_kernels_published_charts") {
  const auto h100 = *planck::core::gpu_preset("h100-sxm");
  const auto a100 = *planck::core::gpu_preset("a100-80g");
  using K = planck::core::AttentionKernel;
  namespace s = planck::sim;
  // tests/data/published/kernels.md §2.1-2.3, causal, TFLOP/s at head dim 64 / 256 over 128.
  CHECK(s::attention_head_dim_factor(h100, K::kCudnn, 128, 4096) == 1.0);
  CHECK(s::attention_head_dim_factor(h100, K::kCudnn, 64, 4096) == doctest::Approx(363.0 / 518));
  CHECK(s::attention_head_dim_factor(h100, K::kCudnn, 256, 2048) == doctest::Approx(450.0 / 484));
  CHECK(s::attention_head_dim_factor(h100, K::kFa3, 64, 16384) == doctest::Approx(473.0 / 616));
  CHECK(s::attention_head_dim_factor(h100, K::kFa2, 64, 16384) == doctest::Approx(284.0 / 328));
  CHECK(s::attention_head_dim_factor(h100, K::kSdpa, 256, 1024) == doctest::Approx(251.0 / 260));
  CHECK(s::attention_head_dim_factor(a100, K::kFa2, 64, 512) == doctest::Approx(88.0 / 99));
  CHECK(s::attention_head_dim_factor(a100, K::kFa1, 64, 4096) == doctest::Approx(87.0 / 76));
  // cuDNN off Hopper prices as FA2 (A100's chart); FA1 has no chart above 128.
  CHECK(s::attention_head_dim_factor(a100, K::kCudnn, 64, 512) == doctest::Approx(88.0 / 99));
  CHECK(s::attention_head_dim_factor(h100, K::kFa1, 256, 4096) == 1.0);
  // Between dims linear in log2(d): MLA's 192 (DeepSeek-V3's query-key head) and GPT-OSS's 64.
  CHECK(s::attention_head_dim_factor(h100, K::kCudnn, 192, 4096) ==
        doctest::Approx(1 + (std::log2(192.0) - 7) * (483.0 / 518 - 1)).epsilon(1e-9));
  CHECK(s::attention_head_dim_factor(h100, K::kCudnn, 32, 4096) == doctest::Approx(363.0 / 518));
}

TEST_CASE("sim_fsdp2_copy_passes_move_the_gathered_and_reduced_bytes") {
  // torchtitan (FSDP2) over 8 GPUs, Llama 3 8B, one micro-batch: every unit gathered in the
  // forward, the 32 blocks again in the backward (reshard_after_forward; never the root), every
  // unit reduce-scattered in fp32. Copy-out reads the gathered bf16 buffer and writes the
  // unsharded parameters (2 x 2 bytes a parameter); the reduce-scatter copy-in reads the bf16
  // gradient and writes it as fp32 (2 + 4) (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py).
  namespace t = planck::sim::test;
  auto plan = t::plan_from(R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8},
    "mesh": {"dims": ["dp"], "shape": [8]}, "parallelism": {"data_parallel": "fsdp"}, "model": "llama3-8b",
    "training": {"seq_len": 8192, "micro_batch": 1, "grad_accumulation": 1, "stack": "torchtitan_compile"}})");
  auto mesh = t::mesh_of(plan);
  const auto s = t::lower_ok(plan, mesh);
  const double block = t::llama_layer_params(4096, 14336, 32, 8, 128);
  const double root = 2 * 128256.0 * 4096 + 4096;
  const double P = 32 * block + root;
  const auto b = planck::sim::fsdp2_copy_bytes(plan, s);
  CHECK(b.forward == doctest::Approx(4 * P).epsilon(1e-6));
  CHECK(b.backward == doctest::Approx(4 * 32 * block + 6 * P).epsilon(1e-6));
  // A stated megatron stack runs Megatron-FSDP (core::fsdp_runtime), not FSDP2: nothing.
  plan.training->stack = planck::core::Stack::kMegatron;
  plan.training->stack_given = true;
  CHECK(planck::sim::fsdp2_copy_bytes(plan, s).forward == 0);
}
