#include "sim/compute.h"

#include <algorithm>

#include "sim/stack_cost.h"

namespace planck::sim {
namespace {

double peak_flops(const core::GpuSpec& gpu, core::DType dtype) {
  const double bf16 = gpu.bf16_tflops * 1e12;
  switch (dtype) {
    case core::DType::kFp8: return gpu.fp8_tflops > 0 ? gpu.fp8_tflops * 1e12 : bf16;
    case core::DType::kFp32: return bf16 / 2;
    case core::DType::kBf16:
    case core::DType::kFp16: return bf16;
  }
  return bf16;
}

double kv_heads(const core::ModelSpec& m) { return static_cast<double>(m.kv_heads > 0 ? m.kv_heads : m.heads); }

// Forward and backward of the GEMMs: backward is the data gradient dX = dY W^T (m, k, n) and
// the weight gradient dW = X^T dY (k, n, m).
PassTimes time_gemms(const std::vector<Gemm>& gemms, const core::GpuSpec& gpu, const ComputeShape& s) {
  PassTimes p;
  for (const Gemm& g : gemms) {
    const core::DType dt = g.linear ? s.linear_dtype : s.dtype;
    const double scale = s.gemm_scale * g.scale;
    p.forward.gemm_s += g.count * gemm_seconds(gpu, g.m, g.n, g.k, dt, scale);
    p.backward.gemm_s += g.count * (gemm_seconds(gpu, g.m, g.k, g.n, dt, scale) + gemm_seconds(gpu, g.k, g.n, g.m, dt, scale));
    p.forward.flops += g.flops();
    p.backward.flops += 2 * g.flops();
  }
  return p;
}

// The attention core, forward and backward, on this rank's heads and queries.
PassTimes attention_times(const core::ModelSpec& m, const core::GpuSpec& gpu, const ComputeShape& s) {
  const double heads = static_cast<double>(m.heads) / static_cast<double>(std::max<std::int64_t>(1, s.tp));
  const double b = static_cast<double>(s.micro_batch);
  const double sq = static_cast<double>(s.seq_len) / static_cast<double>(std::max<std::int64_t>(1, s.cp));
  const double skv = static_cast<double>(s.seq_len);
  const double qk = m.kv_lora_rank > 0 ? static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim)
                                       : static_cast<double>(m.effective_head_dim());
  const double v = m.kv_lora_rank > 0 ? static_cast<double>(m.v_head_dim) : qk;
  PassTimes p;
  if (s.attention == core::Attention::kFlash) {
    // Causal: the fused kernel skips the masked half. FlashAttention's benchmark counts forward
    // 2 s^2 (d_qk + d_v) per head halved for causal, backward 2.5x forward; its charts give
    // TFLOP/s on that count (benchmarks/benchmark_flash_attention.py).
    const double fwd = 2.0 * b * heads * sq * skv * (qk + v) * 0.5;
    const core::ComputeCurve& c = gpu.compute;
    const double eff = c.attention_max * sq / (sq + c.attention_half_seq) * s.gemm_scale *
                       attention_kernel_speedup(gpu, s.attention_kernel, sq) *
                       attention_head_dim_factor(gpu, s.attention_kernel, qk, sq);
    const double rate = peak_flops(gpu, core::DType::kBf16) * std::min(1.0, eff);
    p.forward.attention_s = fwd / rate;
    p.backward.attention_s = 2.5 * fwd / rate;
    p.forward.flops = fwd;
    p.backward.flops = 2.5 * fwd;
    return p;
  }
  // Standard attention: batched QK^T and AV over the full s x s scores (the mask is applied
  // after the matmul), then scale + mask + softmax and dropout as separate memory-bound passes.
  // Not linear layers: they stay in param_dtype under FP8 recipes (TE's attention is BF16).
  const std::vector<Gemm> gemms = {{sq, skv, qk, b * heads, false}, {sq, v, skv, b * heads, false}};
  p = time_gemms(gemms, gpu, s);
  for (KernelTimes* k : {&p.forward, &p.backward}) {
    k->attention_s = k->gemm_s;
    k->gemm_s = 0;
  }
  const double scores = b * heads * sq * skv;
  const bool dropout = m.biases;  // GPT-style layers train with attention dropout
  const double act = core::dtype_bytes(s.dtype == core::DType::kFp8 ? core::DType::kBf16 : s.dtype);
  // Forward: softmax reads and writes the scores; dropout reads them, writes output and mask.
  const double fwd_bytes = scores * (2 * act + (dropout ? 2 * act + 1 : 0));
  p.forward.memory_s = memory_seconds(gpu, fwd_bytes);
  p.backward.memory_s = memory_seconds(gpu, 2 * fwd_bytes);
  return p;
}

// Bytes the memory-bound kernels of one layer's forward move: two norms (read + write), two
// residual adds (two reads, one write; GPT's fused bias-dropout-add also writes a 1-byte mask),
// rotary embedding on q and k (rotary models), the MLP activation (SwiGLU: two reads, one
// write; GeLU: one read, one write). Sequence parallel shards the norm / residual region by tp.
double layer_memory_bytes(const core::ModelSpec& m, const ComputeShape& s, bool moe_layer, double act) {
  const double t = static_cast<double>(std::max<std::int64_t>(1, s.tp));
  const double tokens = s.tokens();
  const double h = static_cast<double>(m.hidden);
  const double region = tokens * h / (s.sequence_parallel ? t : 1.0);
  double elems = region * (2 * 2 + 2 * 3);
  double bytes = 0;
  if (m.biases) bytes += 2 * region;  // dropout masks
  if (m.position_embeddings == 0) {
    const double hd = static_cast<double>(m.effective_head_dim());
    elems += 2 * tokens * (static_cast<double>(m.heads) + kv_heads(m)) * hd / t;
  }
  double ffn = static_cast<double>(m.ffn_hidden);
  if (moe_layer) {
    const double moe_ffn = static_cast<double>(m.moe_ffn_hidden > 0 ? m.moe_ffn_hidden : m.ffn_hidden);
    ffn = moe_ffn * static_cast<double>(std::max<std::int64_t>(1, m.experts_per_token) + m.shared_experts);
  }
  elems += (m.gated_mlp ? 3 : 2) * tokens * ffn / t;
  return elems * act + bytes;
}

// FP8 casts of one layer's linear GEMMs (training.fp8): forward, each distinct input (q, k and v
// share theirs, as do a gated MLP's gate and up projections) is read in bf16 and written as an
// FP8 copy plus the transposed FP8 copy the weight gradient needs (Hopper's FP8 tensor cores take
// K-major operands; Transformer Engine's fused cast_transpose): 2 + 1 + 1 bytes an element.
// Backward, each output gradient the same way. Weights are cast once a step and cached across
// micro-batches (TE's is_first_microbatch), left out here.
std::pair<double, double> fp8_cast_bytes(const std::vector<Gemm>& gemms) {
  double fwd = 0, bwd = 0;
  for (const Gemm& g : gemms) {
    if (!g.linear) continue;
    if (!g.same_input) fwd += 4 * g.m * g.k * g.count;
    bwd += 4 * g.m * g.n * g.count;
  }
  return {fwd, bwd};
}

}  // namespace

double gemm_efficiency(const core::ComputeCurve& c, double m, double n, double k) {
  auto f = [&](double x) { return x / (x + c.gemm_half_dim); };
  return c.gemm_max * f(m) * f(n) * f(k);
}

double gemm_seconds(const core::GpuSpec& gpu, double m, double n, double k, core::DType dtype, double scale) {
  if (m <= 0 || n <= 0 || k <= 0) return 0;
  core::ComputeCurve curve = gpu.compute;
  if (dtype == core::DType::kFp8 && gpu.fp8_tflops > 0) curve.gemm_max = curve.fp8_gemm_max;
  const double eff = std::min(1.0, gemm_efficiency(curve, m, n, k) * scale);
  const double compute = 2 * m * n * k / (peak_flops(gpu, dtype) * eff);
  const double bytes = (m * k + k * n + m * n) * core::dtype_bytes(dtype);
  return std::max(compute, memory_seconds(gpu, bytes));
}

double memory_seconds(const core::GpuSpec& gpu, double bytes) {
  const double bw = gpu.hbm_gbps * 1e9 * gpu.compute.hbm_efficiency;
  return bw > 0 ? bytes / bw : 0;
}

KernelTimes& KernelTimes::operator+=(const KernelTimes& o) {
  gemm_s += o.gemm_s;
  attention_s += o.attention_s;
  memory_s += o.memory_s;
  flops += o.flops;
  return *this;
}

KernelTimes operator*(KernelTimes t, double f) {
  t.gemm_s *= f;
  t.attention_s *= f;
  t.memory_s *= f;
  t.flops *= f;
  return t;
}

PassTimes& PassTimes::operator+=(const PassTimes& o) {
  forward += o.forward;
  backward += o.backward;
  recompute += o.recompute;
  return *this;
}

PassTimes operator*(PassTimes t, double f) {
  t.forward = t.forward * f;
  t.backward = t.backward * f;
  t.recompute = t.recompute * f;
  return t;
}

ComputeShape compute_shape(const core::Plan& plan, const core::Mesh& mesh, const core::Schedule& schedule) {
  const core::Training tr = plan.training.value_or(core::Training{});
  const core::Degrees d = core::degrees(mesh);
  const core::ExpertDegrees ed = core::expert_degrees(plan, mesh);
  ComputeShape s;
  s.micro_batch = schedule.micro_batch;
  s.seq_len = schedule.seq_len;
  s.tp = d.tp;
  s.cp = d.cp;
  s.ep = ed.ep;
  s.etp = ed.etp;
  s.sequence_parallel = plan.parallelism.sequence_parallel && d.tp > 1;
  // The same split the lowering's dispatch bytes use (core/schedule/schedule.cc).
  s.routed_split = d.tp > 1 && (s.sequence_parallel || ed.etp == 1) ? d.tp : 1;
  s.dtype = tr.param_dtype;
  // FP8 linears need FP8 tensor cores (Transformer Engine refuses FP8 without them).
  const bool fp8 = tr.fp8 != core::Fp8Recipe::kNone && plan.cluster.gpu.fp8_tflops > 0;
  s.linear_dtype = fp8 ? core::DType::kFp8 : tr.param_dtype;
  s.attention = tr.attention;
  s.checkpointing = tr.activation_checkpointing;
  s.eager_ops = core::stack_eager_ops(tr.stack);
  s.fp8_saved_inputs = fp8 && tr.stack == core::Stack::kMegatron;
  s.attention_kernel = core::attention_kernel_of(tr);
  s.recompute = core::recompute_modules_of(tr);
  s.stack = tr.stack;
  s.expert_rows_scale = plan.parallelism.expert_capacity_factor.value_or(plan.parallelism.expert_imbalance.value_or(1.0));
  return s;
}

double moe_layer_launches(const core::ModelSpec& m, const ComputeShape& s) {
  const double local_experts =
      static_cast<double>(std::max<std::int64_t>(1, m.experts)) / static_cast<double>(std::max<std::int64_t>(1, s.ep));
  const bool grouped_mm = s.stack == core::Stack::kTorchtitanEager || s.stack == core::Stack::kTorchtitanCompile;
  const double per_expert = grouped_mm ? 0 : s.linear_dtype == core::DType::kFp8 ? 4 : 2;
  return kMoeLayerFixedLaunches + per_expert * std::max(1.0, local_experts);
}

std::pair<double, double> moe_host_times(const core::Training& training, double overhead_s, double launch_s) {
  auto has = [&](const char* g) {
    return std::find(training.cuda_graphs.begin(), training.cuda_graphs.end(), g) != training.cuda_graphs.end();
  };
  if (has("layer") || has("full_iteration") || (has("attn") && has("moe"))) return {0.0, 0.0};
  if (has("moe") || has("moe_router")) return {0.0, launch_s};
  return {overhead_s, launch_s};
}

double ComputeShape::tokens() const {
  return static_cast<double>(micro_batch) * static_cast<double>(seq_len) /
         static_cast<double>(std::max<std::int64_t>(1, cp));
}

namespace {

// The attention block's linear GEMMs (q, k, v, output; MLA's down and up projections).
std::vector<Gemm> attention_gemms(const core::ModelSpec& m, const ComputeShape& s) {
  const double t = static_cast<double>(std::max<std::int64_t>(1, s.tp));
  const double T = s.tokens();
  const double h = static_cast<double>(m.hidden);
  const double heads = static_cast<double>(m.heads) / t;
  std::vector<Gemm> out;
  if (m.kv_lora_rank > 0) {
    // Multi-head latent attention: the down projections are replicated across tp, the up
    // projections split by heads (Megatron MLASelfAttention).
    const double qk = static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim);
    if (m.q_lora_rank > 0) {
      out.push_back({T, static_cast<double>(m.q_lora_rank), h});
      out.push_back({T, heads * qk, static_cast<double>(m.q_lora_rank)});
    } else {
      out.push_back({T, heads * qk, h});
    }
    out.push_back({T, static_cast<double>(m.kv_lora_rank + m.qk_rope_head_dim), h, 1, true, true});
    out.push_back({T, heads * static_cast<double>(m.qk_nope_head_dim + m.v_head_dim),
                   static_cast<double>(m.kv_lora_rank)});
    out.push_back({T, h, heads * static_cast<double>(m.v_head_dim)});
  } else {
    const double hd = static_cast<double>(m.effective_head_dim());
    const double kv = std::max(1.0, kv_heads(m) / t);
    out.push_back({T, heads * hd, h});  // wq
    out.push_back({T, kv * hd, h, 1, true, true});  // wk
    out.push_back({T, kv * hd, h, 1, true, true});  // wv
    out.push_back({T, h, heads * hd});  // wo
  }
  return out;
}

// The MLP's GEMMs: a dense layer's, or an MoE layer's router, shared experts and routed experts.
std::vector<Gemm> mlp_gemms(const core::ModelSpec& m, const ComputeShape& s, bool moe_layer) {
  const double t = static_cast<double>(std::max<std::int64_t>(1, s.tp));
  const double T = s.tokens();
  const double h = static_cast<double>(m.hidden);
  std::vector<Gemm> out;
  const double in = m.gated_mlp ? 2 : 1;
  if (!moe_layer) {
    const double f = static_cast<double>(m.ffn_hidden) / t;
    out.push_back({T, f, h});  // w1 (gate)
    if (m.gated_mlp) out.push_back({T, f, h, 1, true, true});  // w3 (up)
    out.push_back({T, h, f});  // w2 (down)
    return out;
  }
  const double experts = static_cast<double>(m.experts);
  const double moe_f = static_cast<double>(m.moe_ffn_hidden > 0 ? m.moe_ffn_hidden : m.ffn_hidden);
  out.push_back({T, experts, h, 1, false});  // router (kept in high precision by FP8 recipes)
  if (m.shared_experts > 0) {
    // Shared experts are a dense MLP, split by tp like one.
    const double fs = moe_f / t * static_cast<double>(m.shared_experts);
    out.push_back({T, in * fs, h});
    out.push_back({T, h, fs});
  }
  // Routed experts: this rank holds experts / ep of them, each split by etp; each sees, on
  // average, the tokens the ep group routes (every member routes T / routed_split tokens top-k
  // over all experts), gathered over the etp group when etp > 1 and the tokens were split.
  const double ep = static_cast<double>(std::max<std::int64_t>(1, s.ep));
  const double etp = static_cast<double>(std::max<std::int64_t>(1, s.etp));
  const double split = static_cast<double>(std::max<std::int64_t>(1, s.routed_split));
  const double routed = T / split * (split > 1 ? etp : 1.0);
  const double local = experts / ep;
  const double f = moe_f / etp;
  const double per_expert = routed * ep * static_cast<double>(std::max<std::int64_t>(1, m.experts_per_token)) / experts *
                            s.expert_rows_scale;
  out.push_back({per_expert, in * f, h, local, true, false, s.expert_gemm_scale});
  out.push_back({per_expert, h, f, local, true, false, s.expert_gemm_scale});
  return out;
}

}  // namespace

std::vector<Gemm> layer_gemms(const core::ModelSpec& m, const ComputeShape& s, bool moe_layer) {
  std::vector<Gemm> out = attention_gemms(m, s);
  const std::vector<Gemm> mlp = mlp_gemms(m, s, moe_layer);
  out.insert(out.end(), mlp.begin(), mlp.end());
  return out;
}

OpSacGemms op_sac_gemms(const std::vector<Gemm>& gemms, bool moe_layer) {
  OpSacGemms out;
  // layer_gemms puts an MoE layer's two routed-expert GEMMs last.
  const std::size_t mm = moe_layer && gemms.size() >= 2 ? gemms.size() - 2 : gemms.size();
  for (std::size_t i = 0; i < gemms.size(); ++i) {
    (i < mm && i % 2 == 0 ? out.saved : out.recomputed).push_back(gemms[i]);
  }
  return out;
}

namespace {

// Permutation of one MoE layer pass: the routed copies gathered into expert order and scattered
// back (Megatron's permute / unpermute, torchtitan's generate_permute_indices): T x top-k rows of
// h read and written each way, and the T tokens read / written at the ends.
double permute_bytes(const core::ModelSpec& m, const ComputeShape& s, double act) {
  const double rows = s.tokens() / static_cast<double>(std::max<std::int64_t>(1, s.routed_split));
  const double copies = rows * static_cast<double>(std::max<std::int64_t>(1, m.experts_per_token)) * s.expert_rows_scale;
  return 2 * (2 * copies + 2 * rows) * static_cast<double>(m.hidden) * act;
}

// What Megatron's selective recompute re-runs in one layer's backward (training.recompute_modules,
// megatron/core/transformer/transformer_config.py recompute_modules): core_attn the attention core
// (QK^T, softmax, dropout, AV) from saved q, k, v (Korthikanti et al. 2022 §4.2); mla_up_proj the
// MLA q / kv up projections (their GEMMs; the rotary part is in the layer's memory-bound ops);
// layernorm both norms (read and write the rank's rows of h each); moe_act the routed experts'
// activation (read fc1's output, write fc2's input); mlp a dense layer's MLP and shared_experts an
// MoE layer's shared experts (their GEMMs and activation); moe the whole MoE layer's forward
// (moe_layer.py moe_layer_recompute: router, shared and routed experts, permutation, its host
// bookkeeping and launch floor; its dispatch and combine are the lowering's, core/schedule), which
// holds moe_act's and shared_experts' work.
KernelTimes module_recompute(const core::ModelSpec& m, const core::GpuSpec& gpu, const ComputeShape& s, bool moe_layer,
                             const PassTimes& attn, double act) {
  const core::RecomputeModules& r = s.recompute;
  KernelTimes out;
  if (r.core_attn) out += attn.forward;
  const double t = static_cast<double>(std::max<std::int64_t>(1, s.tp));
  const double T = s.tokens();
  const double h = static_cast<double>(m.hidden);
  const double in = m.gated_mlp ? 2 : 1;
  const double moe_f = static_cast<double>(m.moe_ffn_hidden > 0 ? m.moe_ffn_hidden : m.ffn_hidden);
  std::vector<Gemm> gemms;
  double bytes = 0;
  if (r.mla_up_proj && m.kv_lora_rank > 0) {
    const double heads = static_cast<double>(m.heads) / t;
    if (m.q_lora_rank > 0)
      gemms.push_back({T, heads * static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim),
                       static_cast<double>(m.q_lora_rank)});
    gemms.push_back({T, heads * static_cast<double>(m.qk_nope_head_dim + m.v_head_dim),
                     static_cast<double>(m.kv_lora_rank)});
  }
  auto mlp = [&](double f) {
    gemms.push_back({T, in * f, h});
    gemms.push_back({T, h, f});
    bytes += (in + 1) * T * f;
  };
  const bool whole_moe = r.moe && moe_layer;
  if (r.mlp && !moe_layer) mlp(static_cast<double>(m.ffn_hidden) / t);
  if (r.shared_experts && moe_layer && m.shared_experts > 0 && !whole_moe)
    mlp(moe_f / t * static_cast<double>(m.shared_experts));
  double host_s = 0;
  if (whole_moe) {
    const std::vector<Gemm> moe_gemms = mlp_gemms(m, s, true);
    gemms.insert(gemms.end(), moe_gemms.begin(), moe_gemms.end());
    if (s.linear_dtype == core::DType::kFp8 && s.dtype != core::DType::kFp8) bytes += fp8_cast_bytes(moe_gemms).first / act;
    bytes += permute_bytes(m, s, act) / act;
    bytes += (in + 1) * T * moe_f / t * static_cast<double>(m.shared_experts);  // shared experts' activation
    host_s = s.moe_layer_overhead_s;
  }
  if (!gemms.empty()) out += time_gemms(gemms, gpu, s).forward;
  if (r.layernorm) bytes += 2 * 2 * T / (s.sequence_parallel ? t : 1.0) * h;
  if ((r.moe_act || whole_moe) && moe_layer) {
    // The rows this rank's experts receive (balanced routing: the tokens it routes, x top-k).
    const double split = static_cast<double>(std::max<std::int64_t>(1, s.routed_split));
    const double etp = static_cast<double>(std::max<std::int64_t>(1, s.etp));
    const double rows = T / split * (split > 1 ? etp : 1.0) *
                        static_cast<double>(std::max<std::int64_t>(1, m.experts_per_token)) * s.expert_rows_scale;
    bytes += (in + 1) * rows * moe_f / etp;
  }
  out.memory_s += memory_seconds(gpu, bytes * act) + host_s;
  if (whole_moe) {
    // The recomputed MoE forward waits on the host's token counts as the first did.
    const double floor = s.moe_host_launch_s * moe_layer_launches(m, s);
    out.memory_s += std::max(0.0, floor - out.total_s());
  }
  return out;
}

}  // namespace

PassTimes layer_times(const core::ModelSpec& m, const core::GpuSpec& gpu, const ComputeShape& s, bool moe_layer) {
  const std::vector<Gemm> gemms = layer_gemms(m, s, moe_layer);
  PassTimes p = time_gemms(gemms, gpu, s);
  const PassTimes attn = attention_times(m, gpu, s);
  p += attn;
  const double act = core::dtype_bytes(s.dtype == core::DType::kFp8 ? core::DType::kBf16 : s.dtype);
  const double eager = eager_extra_layer_bytes(m, s, act);
  const double mem = memory_seconds(gpu, layer_memory_bytes(m, s, moe_layer, act) + eager);
  p.forward.memory_s += mem;
  p.backward.memory_s += 2 * mem;  // gradients of each input plus the saved input read back
  if (moe_layer) {
    // Permutation: the routed copies gathered into expert order and scattered back (Megatron's
    // permute / unpermute, torchtitan's generate_permute_indices): T x top-k rows of h read and
    // written each way, and the T tokens read / written at the ends; backward the same. Plus
    // the fitted fixed cost of the layer's routing bookkeeping.
    const double permute = memory_seconds(gpu, permute_bytes(m, s, act));
    p.forward.memory_s += permute + s.moe_layer_overhead_s;
    p.backward.memory_s += permute + 2 * s.moe_layer_overhead_s;
  }
  if (s.linear_dtype == core::DType::kFp8 && s.dtype != core::DType::kFp8) {
    const auto [fwd_bytes, bwd_bytes] = fp8_cast_bytes(gemms);
    p.forward.memory_s += memory_seconds(gpu, fwd_bytes);
    p.backward.memory_s += memory_seconds(gpu, bwd_bytes);
  }
  if (moe_layer) {
    // The dropless dispatcher copies the per-expert token counts to the host every layer
    // (Megatron token_dispatcher.py cuda_sync_point, DeepEP's dispatch waits on the CPU), so the
    // host cannot queue the layer's kernels ahead of the GPU: a pass takes at least the time to
    // launch them (backward launches the data- and weight-gradient kernels: twice).
    const double floor = s.moe_host_launch_s * moe_layer_launches(m, s);
    p.forward.memory_s += std::max(0.0, floor - p.forward.total_s());
    p.backward.memory_s += std::max(0.0, 2 * floor - p.backward.total_s());
  }
  switch (s.checkpointing) {
    case core::Checkpointing::kNone: break;
    case core::Checkpointing::kFull: p.recompute = p.forward; break;
    case core::Checkpointing::kSelectiveAttention:
      p.recompute = module_recompute(m, gpu, s, moe_layer, attn, act);
      break;
    case core::Checkpointing::kSelective: {
      // torchtitan's op-level SAC (torchtitan/distributed/activation_checkpoint.py
      // _get_custom_policy): saves mm outputs except every second mm, the attention kernel and
      // reduce-scatter; everything else (the 2nd, 4th, ... mm, the routed experts' grouped GEMMs
      // and every memory-bound op) re-runs (op_sac_gemms).
      p.recompute = time_gemms(op_sac_gemms(gemms, moe_layer).recomputed, gpu, s).forward;
      p.recompute.memory_s += mem;
      if (s.attention == core::Attention::kStandard) p.recompute += attn.forward;  // not a saved kernel
      break;
    }
  }
  return p;
}

PassTimes head_times(const core::ModelSpec& m, const core::GpuSpec& gpu, const ComputeShape& s) {
  const double t = static_cast<double>(std::max<std::int64_t>(1, s.tp));
  const double T = s.tokens();
  const double h = static_cast<double>(m.hidden);
  const double logits = T * static_cast<double>(m.vocab) / t;
  // The output layer stays in param_dtype under FP8 recipes (Megatron's is not a Transformer
  // Engine module; torchtitan's float8 recipes filter "output").
  PassTimes p = time_gemms({{T, static_cast<double>(m.vocab) / t, h, 1, false}}, gpu, s);
  // Final norm (read + write) and vocab-parallel cross entropy: upcast to fp32 (2 + 4 bytes a
  // logit), log-softmax (4 + 4); backward the softmax gradient (4 + 4) and downcast (4 + 2).
  const double act = core::dtype_bytes(s.dtype == core::DType::kFp8 ? core::DType::kBf16 : s.dtype);
  const double norm = 2 * T * h * act / (s.sequence_parallel ? t : 1.0);
  p.forward.memory_s += memory_seconds(gpu, norm + 14 * logits);
  p.backward.memory_s += memory_seconds(gpu, 2 * norm + 14 * logits);
  return p;
}

PassTimes mtp_times(const core::ModelSpec& m, const core::GpuSpec& gpu, const ComputeShape& s) {
  const double t = static_cast<double>(std::max<std::int64_t>(1, s.tp));
  const double h = static_cast<double>(m.hidden);
  PassTimes p = layer_times(m, gpu, s, m.is_moe());
  // eh_proj: a column-parallel linear of the concatenated [norm(embedding); norm(hidden)] (2h -> h).
  p += time_gemms({{s.tokens(), h / t, 2 * h}}, gpu, s);
  const double act = core::dtype_bytes(s.dtype == core::DType::kFp8 ? core::DType::kBf16 : s.dtype);
  const double norms = memory_seconds(gpu, 2 * 2 * s.tokens() * h * act / (s.sequence_parallel ? t : 1.0));
  p.forward.memory_s += norms;
  p.backward.memory_s += 2 * norms;
  p += head_times(m, gpu, s);
  return p;
}

KernelTimes optimizer_times(const core::GpuSpec& gpu, double params) {
  KernelTimes k;
  k.memory_s = memory_seconds(gpu, 32 * params);
  return k;
}

}  // namespace planck::sim
