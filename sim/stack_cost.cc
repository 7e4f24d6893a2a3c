#include "sim/stack_cost.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "sim/compute.h"
#include "sim/memory_reserved.h"

namespace planck::sim {

namespace {

// Bytes per element each op moves, eager PyTorch against one fused kernel (read + write of the
// bf16 tensor = 4 bytes):
// - RMSNorm: ATen's rms_norm composite runs in float for a bf16 input (aten/src/ATen/native/
//   layer_norm.cpp rms_norm_symint: upcast, pow, mean, rsqrt, mul, downcast, mul by the weight):
//   2+4 + 4+4 + 4 + 4+4 + 4+2 + 2+2 = 36 bytes, against 4 fused. LayerNorm is one native kernel
//   either way (F.layer_norm), so LayerNorm models pay nothing here.
// - rotary embedding (torchtitan's apply_rotary_emb and HF's rotate_half both upcast / build
//   temporaries): upcast 2+4, complex multiply 4+4, downcast 4+2 = 20 bytes, against 4 fused.
// - SwiGLU: silu(gate) 2+2, then gate * up 2+2+2 = 10 bytes per ffn element, against 6 fused
//   (Megatron bias_swiglu_fusion, Inductor). GeLU is one kernel either way. Residual adds are one
//   kernel either way (2 reads, 1 write).
constexpr double kRmsNormEagerBytes = 36, kRmsNormFusedBytes = 4;
constexpr double kRopeEagerBytes = 20, kRopeFusedBytes = 4;
constexpr double kSwigluEagerBytes = 10, kSwigluFusedBytes = 6;

// FlashAttention-3 and cuDNN against FlashAttention-2, forward, causal, head dim 128, H100 SXM5
// (Dao-AILab/flash-attention@0251105a assets/flash3_fp16_fwd.png, tests/data/published/kernels.md
// §2.3), TFLOP/s at seq 512 .. 16k: FA3 292 423 521 579 602 616, cuDNN 315 410 484 518 529 539,
// FA2 191 260 298 319 333 335. The backward is assumed to gain as the forward does (no readable
// backward chart was found).
constexpr double kSeq[] = {512, 1024, 2048, 4096, 8192, 16384};
constexpr double kFa3[] = {292, 423, 521, 579, 602, 616};
constexpr double kCudnn[] = {315, 410, 484, 518, 529, 539};
constexpr double kFa2[] = {191, 260, 298, 319, 333, 335};

// FlashAttention-1 against FlashAttention-2, forward + backward, causal, head dim 128
// (Dao-AILab/flash-attention@0251105a assets/flash2_{a100,h100}_fwd_bwd_benchmark.png,
// tests/data/published/kernels.md §2.1-2.2), TFLOP/s at seq 512 .. 16k.
constexpr double kFa1A100[] = {55, 62, 69, 76, 80, 83};
constexpr double kFa2A100[] = {99, 133, 155, 173, 182, 189};
constexpr double kFa1H100[] = {98, 109, 108, 126, 135, 137};
constexpr double kFa2H100[] = {163, 221, 265, 294, 308, 328};

// The same charts at head dims 64 and 256 (causal; tests/data/published/kernels.md §2.1-2.3): the
// forward + backward FA1 / FA2 charts at 64 against their 128 rows above, and the forward H100
// chart (FA3, cuDNN, FA2) at 64 and 256 against its 128 rows.
constexpr double kFa2A100D64[] = {88, 119, 140, 156, 165, 171};
constexpr double kFa2H100D64[] = {141, 192, 232, 257, 273, 284};
constexpr double kFa1A100D64[] = {58, 70, 77, 87, 92, 97};
constexpr double kFa1H100D64[] = {104, 123, 136, 138, 149, 156};
constexpr double kFa2D256[] = {208, 251, 278, 293, 297, 298};
constexpr double kFa3D64[] = {197, 265, 371, 420, 460, 473};
constexpr double kFa3D256[] = {286, 427, 537, 612, 628, 642};
constexpr double kCudnnD64[] = {225, 288, 334, 363, 379, 388};
constexpr double kCudnnD256[] = {308, 391, 450, 483, 497, 509};

double ratio_at(const double (&kernel)[6], double q, const double (&base)[6] = kFa2) {
  const double x = std::clamp(std::log2(q), std::log2(kSeq[0]), std::log2(kSeq[5]));
  std::size_t i = 0;
  while (i + 2 < std::size(kSeq) && std::log2(kSeq[i + 1]) < x) ++i;
  const double u = (x - std::log2(kSeq[i])) / (std::log2(kSeq[i + 1]) - std::log2(kSeq[i]));
  const double a = kernel[i] / base[i], b = kernel[i + 1] / base[i + 1];
  return a + u * (b - a);
}

}  // namespace

double attention_head_dim_factor(const core::GpuSpec& gpu, core::AttentionKernel kernel, double head_dim, double q) {
  if (head_dim <= 0) return 1.0;
  // The Hopper kernels (FA3, cuDNN) price as FA2 on parts without them, as in the speedup.
  const bool hopper = gpu.fp8_tflops > 0;
  double at64 = 1, at256 = 1;
  if (kernel == core::AttentionKernel::kFa1) {
    at64 = hopper ? ratio_at(kFa1H100D64, q, kFa1H100) : ratio_at(kFa1A100D64, q, kFa1A100);
  } else if (hopper && kernel == core::AttentionKernel::kFa3) {
    at64 = ratio_at(kFa3D64, q, kFa3), at256 = ratio_at(kFa3D256, q, kFa3);
  } else if (hopper && kernel == core::AttentionKernel::kCudnn) {
    at64 = ratio_at(kCudnnD64, q, kCudnn), at256 = ratio_at(kCudnnD256, q, kCudnn);
  } else {
    // FA2 (and SDPA's flash backend): its forward + backward chart of the part at 64, the H100
    // forward chart at 256 (no A100 chart goes past 128).
    at64 = hopper ? ratio_at(kFa2H100D64, q, kFa2H100) : ratio_at(kFa2A100D64, q, kFa2A100);
    at256 = ratio_at(kFa2D256, q, kFa2);
  }
  const double x = std::clamp(std::log2(head_dim), 6.0, 8.0);
  return x <= 7 ? at64 + (x - 6) * (1 - at64) : 1 + (x - 7) * (at256 - 1);
}

double eager_extra_layer_bytes(const core::ModelSpec& m, const ComputeShape& s, double act_bytes) {
  const double t = static_cast<double>(std::max<std::int64_t>(1, s.tp));
  const double tokens = s.tokens();
  const double h = static_cast<double>(m.hidden);
  const double scale = act_bytes / 2;  // the byte counts above are for a 2-byte activation
  double extra = 0;
  if (s.eager_ops.norm && !m.uses_layer_norm()) {
    const double region = tokens * h / (s.sequence_parallel ? t : 1.0);
    extra += 2 * region * (kRmsNormEagerBytes - kRmsNormFusedBytes);
  }
  if (s.eager_ops.rope && m.position_embeddings == 0) {
    const double hd = static_cast<double>(m.effective_head_dim());
    const double kv = static_cast<double>(m.kv_heads > 0 ? m.kv_heads : m.heads);
    extra += tokens * (static_cast<double>(m.heads) + kv) * hd / t * (kRopeEagerBytes - kRopeFusedBytes);
  }
  if (s.eager_ops.swiglu && m.gated_mlp && !m.is_moe()) {
    extra += tokens * static_cast<double>(m.ffn_hidden) / t * (kSwigluEagerBytes - kSwigluFusedBytes);
  }
  return extra * scale;
}

FsdpCopyBytes fsdp2_copy_bytes(const core::Plan& plan, const core::Schedule& s) {
  FsdpCopyBytes b;
  if (!fsdp2_buffers(plan)) return b;
  const core::Training t = plan.training.value_or(core::Training{});
  const double m = static_cast<double>(std::max<std::int64_t>(1, s.micro_batches));
  const double bp = core::dtype_bytes(t.param_dtype);
  for (const core::ScheduledCollective& c : s.collectives) {
    if (c.role != "fsdp" || c.group_size <= 1) continue;
    const double bytes = static_cast<double>(c.bytes_per_call) * static_cast<double>(c.calls_per_step) / m;
    if (c.op == core::CollOp::kAllGather) {
      (c.phase == core::Phase::kForward ? b.forward : b.backward) += 2 * bytes;
    } else if (c.op == core::CollOp::kReduceScatter) {
      b.backward += bytes * (1 + bp / static_cast<double>(std::max(1, c.dtype_bytes)));
    }
  }
  return b;
}

double attention_kernel_speedup(const core::GpuSpec& gpu, core::AttentionKernel kernel, double q) {
  // FA1 was measured on both generations: the A100 ratios for parts without FP8 tensor cores.
  if (kernel == core::AttentionKernel::kFa1) {
    return gpu.fp8_tflops > 0 ? ratio_at(kFa1H100, q, kFa2H100) : ratio_at(kFa1A100, q, kFa2A100);
  }
  // FA3 and cuDNN's fast paths are Hopper kernels (wgmma, TMA); planck's presets with FP8
  // tensor cores are the Hopper and Blackwell parts.
  if (gpu.fp8_tflops <= 0) return 1.0;
  switch (kernel) {
    case core::AttentionKernel::kFa3: return ratio_at(kFa3, q);
    case core::AttentionKernel::kCudnn: return ratio_at(kCudnn, q);
    case core::AttentionKernel::kFa2:
    case core::AttentionKernel::kFa1:
    case core::AttentionKernel::kSdpa: return 1.0;
  }
  return 1.0;
}

}  // namespace planck::sim
