#include "sim/memory.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

#include "core/mesh/roles.h"
#include "core/plan/pipeline_split.h"
#include "core/plan/trainable.h"
#include "sim/memory_reserved.h"
#include "sim/step_pipeline.h"

namespace planck::sim {
namespace {

bool shards_grads(core::DataParallel dp) { return shards_params(dp) || dp == core::DataParallel::kZero2; }
bool shards_optimizer(core::DataParallel dp) { return shards_grads(dp) || dp == core::DataParallel::kZero1; }

std::int64_t clamp_bytes(double b) {
  constexpr double kMax = static_cast<double>(std::numeric_limits<std::int64_t>::max() / 16);
  if (!(b > 0)) return 0;
  return b >= kMax ? static_cast<std::int64_t>(kMax) : static_cast<std::int64_t>(std::llround(b));
}

// Layers' worth of activations the busiest rank holds at once, and what the rank running the
// last stage holds (it keeps the logits too): the schedule's per-rank orders (sim/pipeline.h
// activation_peaks) over the stages' layer counts as sim/step_pipeline.h splits the model, so
// each rank's in-flight micro-batches are weighted by the layers of the stages they belong to.
struct HeldLayers {
  double layers = 0;            // the most any rank holds
  double last_rank_layers = 0;  // what the rank running the last stage holds
};

HeldLayers held_layers(const core::Plan& plan, const core::Schedule& s, std::int64_t pp, std::int64_t rank_layers) {
  const double all = static_cast<double>(rank_layers);
  if (pp <= 1 || !plan.model) {
    const double with_mtp = all + static_cast<double>(core::trained_mtp_layers(plan));
    return {with_mtp, with_mtp};
  }  // accumulation frees each micro-batch in its backward
  StageCosts c;
  c.schedule = plan.parallelism.pipeline_schedule.value_or(core::PipelineSchedule::k1F1B);
  c.pp = pp;
  c.virtual_stages = std::max(1, s.virtual_stages);
  c.micro_batches = s.micro_batches;
  c.layers = plan.model->layers;
  // Multi-token prediction layers are held on the loss stage with its layers.
  c.mtp_units = core::trained_mtp_layers(plan);
  // enumerate asks for the same few pipeline shapes across thousands of layouts: keep them.
  using Key = std::tuple<int, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t>;
  thread_local std::map<Key, HeldLayers> cache;
  const Key key{static_cast<int>(c.schedule), pp, c.virtual_stages, c.micro_batches, c.layers, c.mtp_units};
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  const PipelineInput in = pipeline_input(c);
  auto peaks = activation_peaks(in);
  if (!peaks) {
    // A shape the schedule refuses (verify reports it; simulate times it as 1f1b): 1f1b's count.
    return {all * static_cast<double>(std::min(pp, s.micro_batches)), all};
  }
  HeldLayers h;
  for (double u : peaks->units) h.layers = std::max(h.layers, u);
  const std::int64_t last = stage_rank(in.schedule, pp, static_cast<std::int64_t>(in.stages.size()) - 1);
  h.last_rank_layers = peaks->units[static_cast<std::size_t>(last)];
  if (cache.size() > 4096) cache.clear();
  cache[key] = h;
  return h;
}

}  // namespace

OptimizerBytes optimizer_bytes(const core::Training& t, bool matrix) {
  OptimizerBytes b;
  const int bp = core::dtype_bytes(t.param_dtype);
  if (bp < 4 && !t.no_master) b.master = t.master_dtype ? core::dtype_bytes(*t.master_dtype) : 4;
  const double s = core::dtype_bytes(t.optimizer_state_dtype);
  const std::string& o = (t.optimizer == "muon" && !matrix) ? std::string("adamw") : t.optimizer;
  if (o == "sgd" || o == "lion" || o == "muon")
    b.states = s;
  else if (o == "adafactor")
    b.states = 0;
  else if (o == "adam8bit")
    b.states = 2;
  else if (o == "onebit_adam")
    b.states = 3 * s;
  else
    b.states = 2 * s;  // adam, adamw, lamb
  return b;
}

double optimizer_bytes_per_param(const std::string& optimizer, int param_bytes) {
  core::Training t;
  t.optimizer = optimizer;
  t.param_dtype = param_bytes >= 4 ? core::DType::kFp32 : core::DType::kBf16;
  return optimizer_bytes(t).total();
}

ModelStates model_states(double params, double trainable, core::DataParallel dp, std::int64_t shard, int param_bytes,
                         int grad_bytes, double optimizer_bytes) {
  const double d = static_cast<double>(std::max<std::int64_t>(1, shard));
  ModelStates m;
  m.params = params * param_bytes / (shards_params(dp) ? d : 1.0);
  m.grads = trainable * grad_bytes / (shards_grads(dp) ? d : 1.0);
  m.optimizer = trainable * optimizer_bytes / (shards_optimizer(dp) ? d : 1.0);
  return m;
}

ModelStates model_states(double params, core::DataParallel dp, std::int64_t shard, int param_bytes, int grad_bytes,
                         const std::string& optimizer) {
  return model_states(params, params, dp, shard, param_bytes, grad_bytes,
                      optimizer_bytes_per_param(optimizer, param_bytes));
}

double layer_activation_bytes(const core::ModelSpec& m, bool moe_layer, const ComputeShape& shape, int act_bytes) {
  const double tokens = shape.tokens();
  const double sbh = tokens * static_cast<double>(m.hidden) * act_bytes / 2.0;  // "2sbh" = bytes
  const double t = static_cast<double>(std::max<std::int64_t>(1, shape.tp));
  const bool sp = shape.sequence_parallel && shape.tp > 1;
  const core::Checkpointing ckpt = shape.checkpointing;
  if (ckpt == core::Checkpointing::kFull) {
    // Only the layer input (2sbh) is kept; sequence parallel stores it sharded over tp
    // (Korthikanti et al. Table 2, "full recompute" row).
    return 2 * sbh / (sp ? t : 1.0);
  }
  if (ckpt == core::Checkpointing::kSelective) {
    // torchtitan op-level SAC keeps the block input, the outputs of the 1st, 3rd, 5th ... mm
    // (layer_gemms order; not the routed experts' grouped GEMMs: op_sac_gemms), the attention
    // kernel's output and, under sequence parallel, the two reduce-scatter outputs; the rest is
    // recomputed (activation_checkpoint.py _save_list).
    const double h = static_cast<double>(m.hidden);
    double elems = tokens * h / (sp ? t : 1.0);
    for (const Gemm& g : op_sac_gemms(layer_gemms(m, shape, moe_layer), moe_layer).saved) elems += g.m * g.n * g.count;
    const double v = static_cast<double>(m.kv_lora_rank > 0 ? m.v_head_dim : m.effective_head_dim());
    elems += tokens * static_cast<double>(m.heads) / t * v;
    if (sp) elems += 2 * tokens * h / t;
    return elems * act_bytes;
  }
  double ffn = static_cast<double>(m.ffn_hidden);
  if (moe_layer) {
    // Each token's activations pass through its top-k routed experts and the shared ones.
    const double moe_ffn = static_cast<double>(m.moe_ffn_hidden > 0 ? m.moe_ffn_hidden : m.ffn_hidden);
    ffn = moe_ffn * static_cast<double>(std::max<std::int64_t>(1, m.experts_per_token) + m.shared_experts);
  }
  const double sbf = sbh * ffn / static_cast<double>(m.hidden);
  // Bytes per layer in units of sbh, split into what TP leaves whole without SP (u) and what
  // TP divides (dv). The attention core's own s^2 terms are added below for standard attention.
  const double kv = m.kv_lora_rank > 0 ? 1.0
                                       : static_cast<double>(m.kv_heads > 0 ? m.kv_heads : m.heads) /
                                             static_cast<double>(m.heads);
  double u, dv;
  if (m.gated_mlp) {
    // Llama-style layer (docs/sources/simulator.md §3.2, derived): residual inputs to both RMSNorms 4sbh and
    // their outputs (QKV / MLP inputs) 4sbh stay whole; Q 2sbh, K,V 4g sbh, attention output
    // 2sbh, gate, up and silu(gate)*up 6sbf are tp-split.
    u = 8 * sbh;
    dv = (4 + 4 * kv) * sbh + 6 * sbf;
  } else {
    // GPT layer, Korthikanti §4.1 without the attention-core terms: LayerNorms 4sbh, dropout
    // masks 2sbh, attention/MLP inputs 4sbh stay whole (the "10"); Q,K,V,out-proj input 8sbh and
    // the GeLU input/output 4sbf are tp-split (the "24/t" at f = 4h).
    u = 10 * sbh;
    dv = 8 * sbh + 4 * sbf;
  }
  if (shape.fp8_saved_inputs && act_bytes == 2) {
    // Transformer Engine keeps each FP8 linear's input as its FP8 cast for the weight gradient
    // (te.LayerNormLinear's ln_out, te.Linear's inputmat): the QKV and MLP inputs (whole), the
    // attention output and the second MLP matrix's input (tp-split) at 1 byte instead of 2, a
    // saving of half of each 2 sbh (2 sbf) tensor.
    u -= 2 * sbh;
    dv -= sbh + sbf;
  }
  if (ckpt == core::Checkpointing::kSelectiveAttention) {
    // Megatron's recompute modules (training.recompute_modules) drop what they re-make: the
    // output-discarding ones (layernorm, moe_act, mla_up_proj) their output, and with it the FP8
    // cast a Transformer Engine linear would have kept of it (Megatron tells the module to save
    // its original input instead); the checkpointed ones (mlp, shared_experts, moe) their insides.
    const bool fp8_casts = shape.fp8_saved_inputs && act_bytes == 2;
    const core::RecomputeModules& r = shape.recompute;
    if (r.layernorm) u -= (fp8_casts ? 2 : 4) * sbh;              // both norms' outputs
    if (r.mla_up_proj && m.kv_lora_rank > 0) dv -= (2 + 4 * kv) * sbh;  // q, k, v
    const double act_out = (fp8_casts ? 1 : 2) * sbf;            // the activation's output (fc2's input)
    const double mlp_all = (m.gated_mlp ? 6 : 4) * sbf - (fp8_casts ? sbf : 0);
    if (moe_layer && r.moe) {
      // `moe` checkpoints the whole MoE layer (moe_layer.py moe_layer_recompute): of its inside
      // only its input is kept, which the layer's MLP input already counts.
      dv -= mlp_all;
    } else if (moe_layer) {
      const double k = static_cast<double>(std::max<std::int64_t>(1, m.experts_per_token));
      const double shared = static_cast<double>(m.shared_experts);
      if (r.moe_act) dv -= act_out * k / (k + shared);
      if (r.shared_experts) dv -= mlp_all * shared / (k + shared);
    } else if (r.mlp) {
      dv -= mlp_all;
    }
    u = std::max(0.0, u);
    dv = std::max(0.0, dv);
  }
  double scores = 0;
  if (shape.attention == core::Attention::kStandard && ckpt == core::Checkpointing::kNone) {
    // Korthikanti Table 2's 5as^2b: softmax output (2 bytes), dropout mask (1) and dropout
    // output (2) per score, tp-split by heads; without dropout only the softmax output.
    const double per_score = m.biases ? 2.0 * act_bytes + 1 : act_bytes;
    scores = per_score * static_cast<double>(shape.micro_batch) * static_cast<double>(m.heads) / t *
             (static_cast<double>(shape.seq_len) / static_cast<double>(std::max<std::int64_t>(1, shape.cp))) *
             static_cast<double>(shape.seq_len);
  }
  return (sp ? (u + dv) / t : u + dv / t) + scores;
}

Memory memory(const core::Plan& plan, const core::Mesh& mesh, const core::Schedule& s) {
  Memory out;
  if (!plan.model) return out;
  const core::ModelSpec& m = *plan.model;
  const core::Training tr = plan.training.value_or(core::Training{});
  const core::Degrees d = core::degrees(mesh);
  const core::DataParallel dp = s.data_parallel;
  // The gradient buffer: grad_accum_dtype (BF16_Optimizer's fp32 copy) where stated, else the
  // dtype gradients are reduced in.
  const int bp = core::dtype_bytes(tr.param_dtype);
  const int bg = core::dtype_bytes(tr.grad_accum_dtype.value_or(tr.reduce_dtype));
  const SyncGroups g = sync_groups(plan, mesh);
  const core::ExpertDegrees& ed = g.experts;
  const core::RankParams rp = core::rank_params(m, d.pp, d.tp, ed.ep, ed.etp);

  const bool dp_role = dp == core::DataParallel::kNone || dp == core::DataParallel::kDdp;
  const std::int64_t d_dense = dp_role ? g.dense_dp : g.dense_fsdp;
  const std::int64_t d_exp = dp_role ? g.experts_dp : g.experts_fsdp;
  // Frozen weights keep no gradient or optimizer state; LoRA adapters (whole per layer, split
  // over tp like the layer) train beside them. Muon leaves the root (embedding, head) to AdamW.
  const bool frozen = core::base_frozen(tr);
  const double k = optimizer_bytes(tr).total(), k_root = optimizer_bytes(tr, false).total();
  const double dense_total = rp.dense_total();
  const double k_dense = dense_total > 0 ? ((dense_total - rp.root) * k + rp.root * k_root) / dense_total : k;
  // torch FSDP (FSDP1's FlatParameter, FSDP2's fully_shard) keeps a sharded parameter in its
  // original dtype and casts it to param_dtype for each all-gather (MixedPrecisionPolicy), and
  // casts the reduced gradient back to that dtype (torch/distributed/fsdp/_fully_shard/
  // _fsdp_collectives.py foreach_reduce, `_to_dtype_if_needed(reduce_output, orig_dtype)`): the
  // fp32 shard is the master copy the optimizer steps, no 16-bit shard sits beside it, and the
  // sharded gradient is in the master's dtype whatever reduce_dtype is. Trainable shards cost
  // master + master + states (16 with AdamW), counted here as optimizer (master, states) and grads;
  // frozen weights keep the dtype they were loaded in. DeepSpeed ZeRO-3 and Megatron-FSDP keep
  // both (b_p + b_g + K).
  const double master = optimizer_bytes(tr).master;
  const bool shard_is_master = shards_params(dp) && master > 0 && core::fsdp_runtime(plan) == core::FsdpRuntime::kFsdp2;
  auto states = [&](double n, double trainable, std::int64_t shard, double opt) {
    if (!shard_is_master || trainable <= 0) return model_states(n, trainable, dp, shard, bp, bg, opt);
    ModelStates ms = model_states(n - trainable, 0, dp, shard, bp, 0, 0);
    const ModelStates t = model_states(trainable, trainable, dp, shard, 0, static_cast<int>(master), opt);
    ms.grads += t.grads;
    ms.optimizer += t.optimizer;
    return ms;
  };
  const ModelStates dense = states(dense_total, frozen ? 0.0 : dense_total, d_dense, k_dense);
  const ModelStates exp = states(rp.expert_total(), frozen ? 0.0 : rp.expert_total(), d_exp, k);
  const double lora_params = core::lora_params(m, tr, rp.dense_layers, rp.moe_layers, d.tp);
  const ModelStates lora = states(lora_params, lora_params, d_dense, k);
  double params = dense.params + exp.params + lora.params, grads = dense.grads + exp.grads + lora.grads;
  double optimizer = dense.optimizer + exp.optimizer + lora.optimizer;
  // Offload (docs/simulator.md "Offload, optimizers and frozen weights"): the optimizer's master weights and states, with the
  // gradient partition they update when gradients are sharded, live in host memory; the GPU
  // sends that partition's gradients and receives its updated parameters every step. Offloaded
  // parameters (ZeRO-3 offload_param, FSDP2 CPUOffloadPolicy) are copied in for each forward and
  // backward of every micro-batch; only the gathered working set stays on the GPU.
  double offloaded = 0, host = 0;
  // Parameters of this rank's optimizer shard: dense ones over the dense group, routed experts
  // over their expert-data-parallel group.
  auto over = [&](std::int64_t group) {
    return static_cast<double>(shards_optimizer(dp) ? std::max<std::int64_t>(1, group) : 1);
  };
  const double opt_shard_params = (frozen ? 0.0 : dense_total) / over(d_dense) +
                                  (frozen ? 0.0 : rp.expert_total()) / over(d_exp) + lora_params / over(d_dense);
  if (tr.offload_optimizer != core::OffloadDevice::kNone) {
    offloaded += optimizer;
    optimizer = 0;
    if (shards_grads(dp)) {
      offloaded += grads;
      grads = 0;
    }
    host += opt_shard_params * (bg + bp);
  }
  if (tr.offload_params != core::OffloadDevice::kNone && shards_params(dp)) {
    offloaded += params;
    const double passes = plan.parallelism.reshard_after_forward ? 2.0 : 1.0;
    host += params * passes * static_cast<double>(std::max<std::int64_t>(1, s.micro_batches));
    params = 0;
  }

  // The states on the GPU before the FSDP working set is added: made once, kept every step.
  const double persistent = params + optimizer;

  if (shards_params(dp) && d_dense * d_exp > 1) {
    // FSDP working set: the root stays unsharded (FSDP2 reshard_after_forward=None for the root);
    // with resharding, the block in use plus the prefetched one are gathered (docs/sources/simulator.md
    // §3.1); without it every block stays gathered from its forward to its backward. Plus one
    // block's unsharded gradient as the reduce-scatter input.
    const double block = std::max(rp.dense_layers > 0 ? rp.dense_layer : 0.0,
                                  rp.moe_layers > 0 ? rp.moe_layer_dense + rp.moe_layer_experts : 0.0);
    // Under torch.distributed.pipelining a backward leaves its units gathered until the stage's
    // next forward (or REDUCE_GRAD), so the stage's last backward ends with every block gathered
    // either way (core/schedule/schedule.cc, the FSDP gather count); Megatron-FSDP and DeepSpeed
    // release each unit after its pass, pipeline or not (core::fsdp_runtime).
    const bool two_blocks = plan.parallelism.reshard_after_forward &&
                            (d.pp <= 1 || core::fsdp_runtime(plan) != core::FsdpRuntime::kFsdp2);
    const double blocks = two_blocks ? 2 * block : rp.total() - rp.root;
    params += (rp.root + blocks) * bp;
    // FSDP2 gathers into a flat buffer on its all-gather copy-in stream and copies out into the
    // unsharded parameters; the buffer of the last gathered unit stays alive until the next
    // unit's copy-out (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py foreach_all_gather,
    // _fsdp_param_group.py all_gather_state), so one block's buffer is live at any time.
    if (fsdp2_buffers(plan)) params += block * bp;
    if (!frozen) grads += block * bg;
    // set_requires_gradient_sync(False) accumulates unsharded gradients across micro-batches
    // (FSDP2 unsharded_accumulated_grad, in reduce dtype) until the last one's reduce-scatter.
    if (!frozen && s.micro_batches > 1 && s.grad_sync == core::GradSync::kLastMicrobatch) grads += rp.total() * bg;
  }

  // Activations on the busiest rank (held_layers), or on the rank of the last stage with its
  // logits.
  const ComputeShape shape = compute_shape(plan, mesh, s);
  const std::int64_t tokens = std::max<std::int64_t>(1, s.seq_len / std::max<std::int64_t>(1, d.cp)) * s.micro_batch;
  const int ba = bp;
  ComputeShape whole = shape;
  whole.checkpointing = core::Checkpointing::kNone;
  auto layers_bytes = [&](const ComputeShape& sh) {
    double b = 0;
    if (rp.dense_layers > 0) b += static_cast<double>(rp.dense_layers) * layer_activation_bytes(m, false, sh, ba);
    if (rp.moe_layers > 0) b += static_cast<double>(rp.moe_layers) * layer_activation_bytes(m, true, sh, ba);
    return b;
  };
  double per_mb = layers_bytes(shape);
  // Partial full recompute: the recomputed layers keep their input, the others everything.
  const std::int64_t recomputed = core::recomputed_layers(tr, rp.layers(), s.virtual_stages);
  if (tr.activation_checkpointing == core::Checkpointing::kFull && recomputed < rp.layers()) {
    const double share = static_cast<double>(recomputed) / static_cast<double>(std::max<std::int64_t>(1, rp.layers()));
    per_mb = share * per_mb + (1 - share) * layers_bytes(whole);
  }
  double recompute_ws = 0;
  if (tr.activation_checkpointing != core::Checkpointing::kNone &&
      (tr.activation_checkpointing != core::Checkpointing::kFull || recomputed > 0)) {
    // Recomputing one layer rebuilds its activations for its backward.
    recompute_ws = layer_activation_bytes(m, m.is_moe(), whole, ba) - layer_activation_bytes(m, m.is_moe(), shape, ba);
  }
  // Output layer and loss on the last stage, vocab-parallel over tp (loss_bytes); each
  // multi-token prediction depth computes its own logits and loss too.
  const double logits = loss_bytes(core::cross_entropy_of(tr), tokens, m.hidden, m.vocab, d.tp) *
                        static_cast<double>(1 + core::trained_mtp_layers(plan));
  const HeldLayers held = held_layers(plan, s, d.pp, rp.layers());
  const double per_layer = per_mb / static_cast<double>(std::max<std::int64_t>(1, rp.layers()));
  const double activations =
      std::max(per_layer * held.layers, per_layer * held.last_rank_layers + logits) + recompute_ws;

  // Transformer Engine keeps each FP8 linear's weight cast (FP8 copy and its transpose, 1 byte
  // each) across the micro-batches of a step (te.Linear weight workspaces, cached while
  // is_first_microbatch is passed): 2 bytes per local linear weight under Megatron with FP8 and
  // bf16 primary weights. With FP8 primary weights (fp8_param_gather) the weight itself is the
  // FP8 copy (1 byte in place of 2) and only the transpose is cached: no extra bytes.
  double te_fp8 = 0;
  if (tr.fp8 != core::Fp8Recipe::kNone && !plan.parallelism.fp8_param_gather && tr.stack == core::Stack::kMegatron &&
      plan.cluster.gpu.fp8_tflops > 0) {
    te_fp8 = 2.0 * (rp.total() - rp.root);
    params += te_fp8;
  }

  out.params = clamp_bytes(params);
  out.grads = clamp_bytes(grads);
  out.optimizer = clamp_bytes(optimizer);
  out.offloaded = clamp_bytes(offloaded);
  out.host_traffic = clamp_bytes(host);
  out.activations = clamp_bytes(activations);
  out.loss = clamp_bytes(logits);
  out.peak_allocated = clamp_bytes(params + grads + optimizer + activations);
  out.capacity = plan.cluster.gpu.memory_bytes;
  // What stays allocated from step to step (the parameter shards and optimizer states: made once,
  // never freed) against what is allocated and freed within a step (sim/memory_reserved.h).
  out.persistent = clamp_bytes(persistent + te_fp8);
  allocator_view(plan, mesh, s, g, out);
  return out;
}

bool narrow_recompute(core::Plan& plan, const core::Mesh& mesh, const core::Schedule& schedule, bool block,
                      double limit) {
  core::Training& t = *plan.training;
  t.recompute_every.reset();
  t.recompute_num_layers.reset();
  if (!plan.model || t.activation_checkpointing != core::Checkpointing::kFull) return false;
  const core::Degrees d = core::degrees(mesh);
  const core::ExpertDegrees ed = core::expert_degrees(plan, mesh);
  const std::int64_t layers = core::rank_params(*plan.model, d.pp, d.tp, ed.ep, ed.etp).layers();
  const std::int64_t chunks = std::max(1, schedule.virtual_stages);
  std::optional<std::int64_t>& field = block ? t.recompute_num_layers : t.recompute_every;
  auto fits = [&](std::int64_t n) {
    field = n;
    const Memory m = memory(plan, mesh, schedule);
    return !memory_exceeds(m) && static_cast<double>(m.peak) <= limit;
  };
  // Block: N in [1, per chunk - 1], the smallest that fits; every: N in [2, layers], the largest.
  std::int64_t lo = block ? 1 : 2, hi = block ? (layers + chunks - 1) / chunks - 1 : layers;
  std::optional<std::int64_t> best;
  while (lo <= hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    const bool ok = fits(mid);
    if (ok) best = mid;
    if (ok == block)
      hi = mid - 1;
    else
      lo = mid + 1;
  }
  field = best;
  return best.has_value();
}

}  // namespace planck::sim
