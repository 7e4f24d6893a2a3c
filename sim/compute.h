#pragma once
// Compute time per kernel (docs/simulator.md, "Compute model"): for one transformer layer and one
// micro-batch on one rank, the GEMMs with their shapes after tensor / context / expert
// parallelism split them, the attention kernel, and the memory-bound kernels (norms, residual
// adds, activations, rotary embedding, softmax / dropout of standard attention) timed by HBM
// bandwidth; forward, backward and what activation checkpointing recomputes. Pure functions of
// (model, GPU, shape): O(1) in the world size.

#include <cstdint>
#include <utility>
#include <vector>

#include "core/mesh/roles.h"
#include "core/plan/plan.h"
#include "core/schedule/schedule.h"

namespace planck::sim {

// Achieved fraction of the dense peak for one GEMM C[m,n] = A[m,k] B[k,n]:
// gemm_max x f(m) f(n) f(k), f(x) = x / (x + gemm_half_dim). Small dimensions (a thin TP shard,
// few tokens per expert) fill fewer tiles and waves and run below the large-shape ceiling.
double gemm_efficiency(const core::ComputeCurve& curve, double m, double n, double k);

// Seconds of one GEMM of `dtype` inputs: 2mnk / (peak(dtype) x efficiency x scale), and never
// less than moving its operands and result through HBM. peak(fp8) is fp8_tflops where the GPU
// has FP8 tensor cores, else bf16_tflops; fp32 runs at bf16_tflops / 2 (TF32). `scale` is a
// measured profile's correction (1 = the preset's curve). This is the one price of a matmul:
// MoE expert GEMMs and calibration use it too.
double gemm_seconds(const core::GpuSpec& gpu, double m, double n, double k, core::DType dtype, double scale = 1.0);

// Seconds to read and write `bytes` through HBM at hbm_efficiency x hbm_gbps (0 when the GPU
// gives no hbm_gbps).
double memory_seconds(const core::GpuSpec& gpu, double bytes);

struct KernelTimes {
  double gemm_s = 0, attention_s = 0, memory_s = 0;
  double flops = 0;  // FLOPs executed (causal attention: the half that runs)
  double total_s() const { return gemm_s + attention_s + memory_s; }
  KernelTimes& operator+=(const KernelTimes& o);
};
KernelTimes operator*(KernelTimes t, double f);

// One micro-batch through one layer (or the head) on one rank.
struct PassTimes {
  KernelTimes forward, backward, recompute;  // recompute runs inside the backward
  PassTimes& operator+=(const PassTimes& o);
};
PassTimes operator*(PassTimes t, double f);

// What one rank computes for one micro-batch.
struct ComputeShape {
  std::int64_t micro_batch = 1;
  std::int64_t seq_len = 1;  // full sequence; each cp rank holds seq_len / cp of it
  std::int64_t tp = 1, cp = 1;
  // The expert-parallel group (ep x cp, x tp when etp = 1: core::expert_degrees) and the expert
  // tensor-parallel degree; routed_split: how many ranks share one rank's tokens when routing
  // (tp under sequence parallel or when tp folds into EP, else 1).
  std::int64_t ep = 1, etp = 1, routed_split = 1;
  bool sequence_parallel = false;
  core::DType dtype = core::DType::kBf16;  // parameters and activations: the head, attention
  // The transformer layers' linear GEMMs: fp8 under training.fp8 (each input and output gradient
  // cast to FP8 on the way), else `dtype`.
  core::DType linear_dtype = core::DType::kBf16;
  core::Attention attention = core::Attention::kFlash;
  core::Checkpointing checkpointing = core::Checkpointing::kNone;
  core::Stack stack = core::Stack::kMegatron;  // training.stack
  // Under selective_attention, the sub-modules recomputed (training.recompute_modules).
  core::RecomputeModules recompute;
  // training.stack runs the memory-bound ops as PyTorch's eager ops (sim/stack_cost.h), and the
  // fused attention kernel of training.attention_kernel.
  core::EagerOps eager_ops;
  // Transformer Engine's FP8 linears save their inputs as FP8 for the backward (training.fp8
  // under the megatron stack, on a GPU with FP8 tensor cores): sim/memory.cc.
  bool fp8_saved_inputs = false;
  core::AttentionKernel attention_kernel = core::AttentionKernel::kFa2;
  double gemm_scale = 1.0;
  // Rows of the busiest rank's experts over the balanced mean: the capacity factor (every expert
  // buffer padded to it) or, dropless, parallelism.expert_imbalance (the slowest rank sets the pace).
  double expert_rows_scale = 1.0;
  // Fitted to published MoE runs (sim/moe_band.h, SimOptions::moe): the grouped GEMMs' efficiency
  // relative to a dense GEMM of the same shape; the host time an MoE layer's router and dispatch
  // preprocessing add to a micro-batch's forward (twice that backward), 0 where CUDA graphs replay
  // them; and the host seconds per operation of an MoE layer launched one by one, 0 where the
  // whole layer replays from a graph (moe_host_times): the layer's forward takes at least that x
  // moe_layer_launches (twice that backward).
  double expert_gemm_scale = 1.0;
  double moe_layer_overhead_s = 0;
  double moe_host_launch_s = 0;
  double tokens() const;  // micro_batch x seq_len / cp
};
// The operations the host issues one by one for an eagerly launched MoE layer's forward, whose
// count sets the layer's least time while the dispatcher's device-to-host copy of the per-expert
// token counts keeps the host from queueing ahead: kMoeLayerFixedLaunches for the layer's own path
// (attention block, dispatch, sort, pad, activation, unpad, combine, unpermute), plus, per local
// expert, one GEMM launch for each of fc1 and fc2 (Transformer Engine's GroupedLinear issues one
// GEMM per expert through general_grouped_gemm) and, under FP8, one input quantization for each
// (its per-expert fused_multi_quantize and weight-workspace loop): 2 per expert in BF16, 4 in FP8.
// torchtitan runs all of a rank's experts in one torch._grouped_mm per linear
// (torchtitan/models/common/moe.py): nothing per expert.
inline constexpr double kMoeLayerFixedLaunches = 32;
double moe_layer_launches(const core::ModelSpec& m, const ComputeShape& s);

// What of an MoE layer's host time training.cuda_graphs leaves on the host, as the
// (overhead, seconds per launch) pair ComputeShape takes: Megatron-Core replays the router and the token
// dispatcher's preprocessing (its device-to-host copy of the per-expert token counts included)
// from a graph under --cuda-graph-modules moe_router moe_preprocess, the whole MoE block under
// moe, the whole layer under layer (its empty module list) and the step under full_iteration
// (megatron/core/transformer/transformer_config.py cuda_graph_modules; token_dispatcher.py
// moves the copy out of the graph: cuda_dtoh_point "before_ep_alltoall").
std::pair<double, double> moe_host_times(const core::Training& training, double overhead_s, double launch_s);

// The shape of a plan lowered into `schedule` on `mesh` (gemm_scale 1).
ComputeShape compute_shape(const core::Plan& plan, const core::Mesh& mesh, const core::Schedule& schedule);

// One GEMM of a layer's forward, in execution order (torchtitan's separate wq, wk, wv, wo, w1,
// w3, w2; GPT: wq, wk, wv, wo, w1, w2; MoE: attention, router, shared and routed experts).
struct Gemm {
  double m = 0, n = 0, k = 0;
  double count = 1;     // how many of this shape (routed experts on this rank)
  bool linear = true;   // a linear layer FP8 recipes quantise (the MoE router, the head are not)
  bool same_input = false;  // its input was cast for an earlier GEMM of the layer (wk, wv; w3; MLA kv-down)
  double scale = 1.0;       // efficiency relative to a dense GEMM of the shape (routed experts' grouped GEMMs)
  double flops() const { return 2 * m * n * k * count; }
};
std::vector<Gemm> layer_gemms(const core::ModelSpec& model, const ComputeShape& shape, bool moe_layer);
// torchtitan's op-level SAC over one layer's GEMMs (torchtitan/distributed/activation_checkpoint.py
// _get_custom_policy with the models' _op_sac_save_list, @238fa99): the outputs of the 1st, 3rd,
// 5th ... aten.mm are saved, the others re-run; the routed experts' torch._grouped_mm is in no
// model's save list (deepseek_v3, qwen3, llama4 infra/parallelize.py), so it always re-runs and
// does not advance the mm count.
struct OpSacGemms {
  std::vector<Gemm> saved, recomputed;
};
OpSacGemms op_sac_gemms(const std::vector<Gemm>& gemms, bool moe_layer);

PassTimes layer_times(const core::ModelSpec& model, const core::GpuSpec& gpu, const ComputeShape& shape,
                      bool moe_layer);
// Final norm, output head and cross-entropy loss (the last stage).
PassTimes head_times(const core::ModelSpec& model, const core::GpuSpec& gpu, const ComputeShape& shape);
// One multi-token prediction depth for one micro-batch (DeepSeek-V3 §2.2; Megatron
// MultiTokenPredictionLayer): the two input norms and the 2h -> h projection of the concatenated
// hidden state and next-token embedding, one transformer layer of the model's routed kind (MoE
// for an MoE model), and the shared output head and loss again.
PassTimes mtp_times(const core::ModelSpec& model, const core::GpuSpec& gpu, const ComputeShape& shape);
// One optimizer step over `params` parameters held by this rank (AdamW in mixed precision reads
// and writes ~32 bytes per parameter: bf16 param and fp32 grad, master, m, v).
KernelTimes optimizer_times(const core::GpuSpec& gpu, double params);

}  // namespace planck::sim
