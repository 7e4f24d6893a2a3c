#include "core/schedule/schedule.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/base/saturating.h"
#include "core/plan/pipeline_split.h"
#include "core/plan/presets.h"
#include "core/plan/trainable.h"
#include "core/mesh/placement.h"
#include "core/mesh/roles.h"
#include "core/schedule/ep_dispatch.h"
#include "core/schedule/lowering.h"

// The one lowering of a plan into the collectives of one optimizer step (docs/simulator.md). Each
// strategy follows where its framework communicates; formulas from
// docs/sources/simulator.md §2, sources cited at each emitter.

namespace planck::core {
namespace {

using lowering::ceil_div;
using lowering::Lowering;
using lowering::to_bytes;

constexpr std::int64_t kDefaultSeqLen = 8192;

}  // namespace

std::int64_t dispatched_rows(std::int64_t tokens, std::int64_t top_k, std::int64_t experts,
                             std::optional<double> capacity_factor) {
  const std::int64_t routed = sat_mul(tokens, std::max<std::int64_t>(1, top_k));
  if (!capacity_factor || experts <= 0) return routed;
  // capacity = ceil(tokens x k / experts x cf) per expert, every expert buffer padded to it
  // (Megatron moe_utils.py get_capacity with moe_pad_expert_input_to_capacity; DeepSpeed
  // sharded_moe.py _capacity, its E x C x M dispatch tensor).
  const double cap = std::ceil(static_cast<double>(routed) / static_cast<double>(experts) * *capacity_factor);
  return sat_mul(experts, static_cast<std::int64_t>(std::max(1.0, cap)));
}

const char* stage_scope_name(StageScope s) {
  switch (s) {
    case StageScope::kEvery: return "every";
    case StageScope::kFirst: return "first";
    case StageScope::kLast: return "last";
  }
  return "every";
}

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::kForward: return "forward";
    case Phase::kBackward: return "backward";
    case Phase::kOptimizer: return "optimizer";
    case Phase::kStep: return "step";
  }
  return "step";
}

RankParams rank_params(const ModelSpec& m, std::int64_t pp, std::int64_t tp, std::int64_t ep, std::int64_t etp) {
  RankParams r;
  const ParamCounts c = param_counts(m);
  pp = std::max<std::int64_t>(1, pp);
  const double t = static_cast<double>(std::max<std::int64_t>(1, tp));
  const double e = static_cast<double>(std::max<std::int64_t>(1, ep));
  const double et = static_cast<double>(std::max<std::int64_t>(1, etp));
  const std::int64_t moe_total = m.moe_layer_count();
  const std::int64_t dense_total = m.layers - moe_total;
  // Busiest stage: stages take ceil(L / pp) consecutive layers (torchtitan's and Megatron's even
  // split); the one with the most MoE layers (the heavier), by the model's layer pattern:
  // dense_layers leading dense layers, then every moe_layer_freq-th layer MoE. Llama 4's
  // alternating layers give each stage half MoE layers, not a stage of MoE layers only.
  const std::int64_t per_stage = (m.layers + pp - 1) / pp;
  const std::int64_t freq = std::max<std::int64_t>(1, m.moe_layer_freq);
  // MoE layers among the first n layers (0-based indices below n).
  auto moe_before = [&](std::int64_t n) -> std::int64_t {
    if (moe_total == 0 || n <= m.dense_layers) return 0;
    return std::min(moe_total, (n - m.dense_layers) / freq);
  };
  r.moe_layers = 0;
  r.dense_layers = 0;
  for (std::int64_t first = 0; first < m.layers; first += per_stage) {
    const std::int64_t end = std::min(m.layers, first + per_stage);
    const std::int64_t moe = moe_before(end) - moe_before(first);
    if (moe > r.moe_layers || (moe == r.moe_layers && end - first - moe > r.dense_layers)) {
      r.moe_layers = moe;
      r.dense_layers = end - first - moe;
    }
  }
  r.dense_layer = c.per_layer_dense / t;
  if (m.is_moe()) {
    const double routed = static_cast<double>(m.experts) * c.expert;
    r.moe_layer_dense = (c.per_layer_moe - routed) / t;
    r.moe_layer_experts = routed / (e * et);
  }
  const double final_norm = c.total - c.embedding - c.head - static_cast<double>(dense_total) * c.per_layer_dense -
                            static_cast<double>(moe_total) * c.per_layer_moe;
  // pp = 1: one stage holds embedding, head and final norm. pp > 1: the first stage the
  // embedding, the last the head (and, when tied, its own copy of the embedding, as Megatron).
  const double head = m.tied_embeddings ? c.embedding : c.head;
  r.root = (pp == 1 ? c.embedding + c.head + final_norm : std::max(c.embedding, head + final_norm)) / t;
  return r;
}

std::vector<std::string> param_sync_dims(const Plan& plan, const Mesh& mesh, std::string_view role, bool dense) {
  std::vector<std::string> dims = role_dims(plan, mesh, role).value_or(std::vector<std::string>{});
  if (dense) return dims;
  // Routed experts synchronise over the part of the role that holds the same expert shard: the
  // expert-data-parallel dims (Megatron expt_dp_group, torchtitan efsdp, DeepSpeed EDP).
  const auto edp = expert_data_parallel_dims(plan, mesh);
  std::vector<std::string> out;
  for (const auto& d : dims) {
    if (std::find(edp.begin(), edp.end(), d) != edp.end()) out.push_back(d);
  }
  return out;
}

FsdpRuntime fsdp_runtime(const Plan& plan) {
  if (!plan.training || !plan.training->stack_given) return FsdpRuntime::kFsdp2;
  switch (plan.training->stack) {
    case Stack::kMegatron: return FsdpRuntime::kMegatronFsdp;
    case Stack::kDeepspeed:
    case Stack::kMegatronDeepspeed: return FsdpRuntime::kDeepSpeed;
    default: return FsdpRuntime::kFsdp2;
  }
}

int gathered_param_bytes(const Plan& plan, bool root) {
  const Training tr = plan.training.value_or(Training{});
  // FP8 all-gathers need FP8 weights, which no framework makes on a GPU without FP8 tensor cores
  // (verify's fp8-unsupported).
  if (!root && plan.parallelism.fp8_param_gather && tr.fp8 != Fp8Recipe::kNone && plan.cluster.gpu.fp8_tflops > 0) {
    return 1;
  }
  return dtype_bytes(tr.param_dtype);
}

int pipeline_chunks(const Plan& plan, std::int64_t pp) {
  if (pp <= 1) return 1;
  const auto sched = plan.parallelism.pipeline_schedule.value_or(PipelineSchedule::k1F1B);
  // V-shape: two chunks per rank (torch pipelining ScheduleZBVZeroBubble, ScheduleDualPipeV)
  if (sched == PipelineSchedule::kZbv || sched == PipelineSchedule::kDualPipeV) return 2;
  if (sched == PipelineSchedule::kInterleaved1F1B || sched == PipelineSchedule::kInterleavedZb) {
    return static_cast<int>(std::max<std::int64_t>(1, plan.parallelism.virtual_stages));
  }
  return 1;
}

std::optional<std::int64_t> micro_batches_per_step(const Plan& plan, const Mesh& mesh) {
  if (!plan.training) return std::nullopt;
  const Training& tr = *plan.training;
  if (tr.grad_accumulation) return std::max<std::int64_t>(1, *tr.grad_accumulation);
  if (!tr.global_batch) return std::nullopt;
  const std::int64_t per_pass = sat_mul(std::max<std::int64_t>(1, tr.micro_batch), degrees(mesh).dp_degree());
  return std::max<std::int64_t>(1, *tr.global_batch / std::max<std::int64_t>(1, per_pass));
}

Result<Schedule> lower(const Plan& plan, const Mesh& mesh) {
  return lower(plan, mesh, plan.training ? plan.training->grad_sync : GradSync::kLastMicrobatch);
}

Result<Schedule> lower(const Plan& plan, const Mesh& mesh, GradSync grad_sync) {
  if (!plan.model) return Status::error("the plan has no model: add \"model\": \"llama3-8b\" (or another preset)");
  const ModelSpec& m = *plan.model;
  if (m.layers <= 0 || m.hidden <= 0 || m.heads <= 0) {
    return Status::error("model '" + m.name + "' needs layers, hidden and heads >= 1 (got layers " +
                         std::to_string(m.layers) + ", hidden " + std::to_string(m.hidden) + ", heads " +
                         std::to_string(m.heads) + ")");
  }
  const Training tr = plan.training.value_or(Training{});
  const Degrees d = degrees(mesh);
  Schedule s;
  s.world = mesh.world();
  s.data_parallel = effective_data_parallel(plan, mesh);
  const FsdpRuntime runtime = fsdp_runtime(plan);
  const bool sharded_params = s.data_parallel == DataParallel::kFsdp || s.data_parallel == DataParallel::kZero3;
  if (runtime == FsdpRuntime::kMegatronFsdp && sharded_params && grad_sync != GradSync::kEveryMicrobatch) {
    // Megatron-FSDP keeps only gradient shards: its no_sync() cannot defer the reduce-scatter.
    s.notes.push_back("Megatron-FSDP (training.stack megatron, fsdp) reduce-scatters its sharded gradients every "
                      "micro-batch (megatron_fsdp.py grad_reduce_every_bprop): grad_sync " +
                      std::string(grad_sync == GradSync::kLastMicrobatch ? "last_microbatch" : "last_microbatch_replicate") +
                      " has no effect");
    grad_sync = GradSync::kEveryMicrobatch;
  }
  s.grad_sync = grad_sync;
  s.seq_len = tr.seq_len.value_or(kDefaultSeqLen);
  s.micro_batch = std::max<std::int64_t>(1, tr.micro_batch);
  s.virtual_stages = pipeline_chunks(plan, d.pp);
  if (!tr.seq_len) s.notes.push_back("training.seq_len absent: assumed 8192");
  if (auto k = micro_batches_per_step(plan, mesh)) s.micro_batches = *k;
  const std::int64_t k = s.micro_batches;
  const int bp = dtype_bytes(tr.param_dtype), bg = dtype_bytes(tr.reduce_dtype), ba = bp;
  const bool every = grad_sync == GradSync::kEveryMicrobatch;
  const bool rs_every = every || grad_sync == GradSync::kLastMicrobatchReplicate;
  Lowering lo(mesh, s);

  const ExpertDegrees ed = expert_degrees(plan, mesh);
  const RankParams rp = rank_params(m, d.pp, d.tp, ed.ep, ed.etp);
  const std::int64_t layers = rp.layers();

  lower_data_parallel(plan, mesh, {k, bp, bg, every, rs_every, rp, runtime}, lo);
  const DataParallel dp = s.data_parallel;

  if (tr.lora_rank > 0 && dp != DataParallel::kNone) {
    // LoRA adapters' gradients, all-reduced once a step over the data-parallel ranks (small
    // enough that their sharding does not change the volume much).
    std::vector<std::string> dims = param_sync_dims(plan, mesh, dp == DataParallel::kDdp ? "dp" : "fsdp", true);
    for (const auto& r : param_sync_dims(plan, mesh, "replicate", true)) {
      if (std::find(dims.begin(), dims.end(), r) == dims.end()) dims.push_back(r);
    }
    const double adapters = lora_params(m, tr, rp.dense_layers, rp.moe_layers, d.tp);
    lo.repeats(1);
    lo.add("dp", dims, CollOp::kAllReduce, Phase::kBackward, to_bytes(adapters, bg), 1, bg,
           "LoRA adapter gradient all-reduce");
  }

  // --- tensor parallel (Megatron), per layer per micro-batch -----------------------------
  const std::int64_t seq_cp = std::max<std::int64_t>(1, s.seq_len / std::max<std::int64_t>(1, d.cp));
  const std::int64_t tokens = sat_mul(seq_cp, s.micro_batch);
  const std::int64_t act = sat_mul(sat_mul(tokens, m.hidden), ba);  // A = (s/cp) b h b_a
  const bool sp = plan.parallelism.sequence_parallel;
  const std::vector<std::string> tp{"tp"};
  const std::int64_t lk = sat_mul(layers, k);
  // Full recompute re-runs a layer's forward, collectives included, in its backward: on every
  // layer, or on the share recompute_every / recompute_num_layers leave (core/plan/plan.h).
  const std::int64_t recomputed = recomputed_layers(tr, layers, s.virtual_stages);
  const bool full_ckpt = recomputed > 0;
  // Backward calls per step: `per_layer` on each of `of` layers of the rank, plus `again` on each
  // recomputed one, in every micro-batch.
  auto bwd_calls = [&](std::int64_t per_layer, std::int64_t again, std::int64_t of) {
    const std::int64_t re = layers > 0 ? sat_mul(recomputed, of) / layers : 0;
    return sat_mul(sat_add(sat_mul(per_layer, of), sat_mul(again, re)), k);
  };
  lo.repeats(k);  // everything below runs in every micro-batch
  if (d.tp > 1) {
    if (!sp) {
      // Narayanan et al. SC'21 §3.2: 2 all-reduces forward (attention out-proj, MLP down-proj),
      // 2 backward (input grads of QKV and FC1).
      lo.add("tp", tp, CollOp::kAllReduce, Phase::kForward, act, sat_mul(2, lk), ba, "row-parallel output all-reduce");
      lo.add("tp", tp, CollOp::kAllReduce, Phase::kBackward, act, bwd_calls(2, 2, layers), ba,
             full_ckpt ? "column-parallel input-grad all-reduce + recomputed forward"
                       : "column-parallel input-grad all-reduce");
      lo.repeats(k, StageScope::kFirst);
      lo.add("tp", tp, CollOp::kAllReduce, Phase::kForward, act, k, ba, "vocab-parallel embedding all-reduce");
    } else {
      // Korthikanti et al. §4.2.2: each all-reduce becomes all-gather + reduce-scatter; Megatron-
      // Core re-gathers the sequence-sharded input in backward for the weight gradient
      // (megatron/core/tensor_parallel/layers.py LinearWithGradAccumulationAndAsyncCommunication).
      // A dense layer has two such regions (attention, MLP). An MoE layer under expert parallelism
      // routes its sequence-sharded tokens as they are: only the attention (and a TP-split shared
      // expert) gathers over tp; the routed experts' tokens travel in the dispatch (and the etp
      // collectives below when etp > 1). Megatron: MoELayer hands the SP-sharded hidden states to
      // the router and token dispatcher (megatron/core/transformer/moe/moe_layer.py,
      // token_dispatcher.py gathers over the *expert* TP group only); torchtitan: the MoE
      // wrapper's desired input layout is the sequence-parallel one when EP is on
      // (torchtitan/models/common/moe_sharding.py _moe_sharding_config).
      const std::int64_t regions = [&] {
        if (ed.ep <= 1 || rp.moe_layers <= 0) return sat_mul(2, layers);
        return sat_add(sat_mul(2, rp.dense_layers), sat_mul(m.shared_experts > 0 ? 2 : 1, rp.moe_layers));
      }();
      const std::int64_t rk = sat_mul(regions, k);
      lo.add("tp", tp, CollOp::kAllGather, Phase::kForward, act, rk, ba, "sequence-parallel all-gather");
      lo.add("tp", tp, CollOp::kReduceScatter, Phase::kForward, act, rk, ba, "sequence-parallel reduce-scatter");
      // Per region: backward 2 all-gathers (output grad, input re-gather) and 1 reduce-scatter,
      // and a recomputed layer's forward again (1 + 1); bwd_calls spreads them over the layers.
      const std::int64_t per_layer_num = regions, per_layer_den = std::max<std::int64_t>(1, layers);
      auto region_bwd = [&](std::int64_t per_region, std::int64_t again_per_region) {
        const std::int64_t re = layers > 0 ? sat_mul(recomputed, per_layer_num) / per_layer_den : 0;
        return sat_mul(sat_add(sat_mul(per_region, per_layer_num), sat_mul(again_per_region, re)), k);
      };
      lo.add("tp", tp, CollOp::kAllGather, Phase::kBackward, act, region_bwd(2, 1), ba,
             "grad all-gather + input re-gather for weight grads");
      lo.add("tp", tp, CollOp::kReduceScatter, Phase::kBackward, act, region_bwd(1, 1), ba,
             "input-grad reduce-scatter");
      lo.repeats(k, StageScope::kFirst);
      lo.add("tp", tp, CollOp::kReduceScatter, Phase::kForward, act, k, ba, "vocab-parallel embedding reduce-scatter");
    }
    // Only the first stage embeds and only the last computes the loss (Megatron builds the
    // vocab-parallel embedding on pre_process stages and the output layer on post_process ones).
    lo.repeats(k, StageScope::kLast);
    // Vocab-parallel cross-entropy: max, sum-exp and target logit, fp32 per token
    // (megatron/core/tensor_parallel/cross_entropy.py).
    lo.add("tp", tp, CollOp::kAllReduce, Phase::kForward, sat_mul(tokens, 4), sat_mul(3, k), 4, "vocab-parallel cross-entropy");
  }
  lo.repeats(k);

  // --- pipeline parallel p2p ---------------------------------------------------------------
  if (d.pp > 1) {
    // Megatron schedules.py get_tensor_shapes: (seq/cp [/tp with SP], mbs, h). A middle stage
    // sends k activations forward and k gradients backward; interleaving multiplies both by v
    // (Narayanan §2.2). With pp = 2 no stage is in the middle: the busiest sends (2v-1)/(2v).
    // Without sequence parallelism Megatron's scatter-gather (scatter_gather_tensors_in_pipeline,
    // p2p_communication.py) sends 1/tp of the tensor from each TP rank and all-gathers it over
    // tp on arrival; with it the tensor is already split by tp.
    const bool scatter = !sp && d.tp > 1 && plan.parallelism.pp_scatter_gather.value_or(true);
    const std::int64_t p2p = act / (sp || scatter ? std::max<std::int64_t>(1, d.tp) : 1);
    const std::int64_t calls = sat_mul(k, s.virtual_stages);
    lo.add("pp", {"pp"}, CollOp::kSendRecv, Phase::kForward, p2p, calls, ba, "activations to the next stage");
    lo.add("pp", {"pp"}, CollOp::kSendRecv, Phase::kBackward, p2p, calls, ba, "activation grads to the previous stage");
    if (scatter) {
      lo.add("pp", tp, CollOp::kAllGather, Phase::kForward, act, calls, ba, "scatter-gather: re-assemble received activations");
      lo.add("pp", tp, CollOp::kAllGather, Phase::kBackward, act, calls, ba, "scatter-gather: re-assemble received grads");
    }
  }

  // --- context parallel: ring attention K/V exchange ---------------------------------------
  if (d.cp > 1) {
    // Megatron context_parallel.rst: K/V chunks circulate in a ring, cp-1 steps forward, again in
    // backward plus the dK/dV chunks back (docs/sources/simulator.md §2.4). MLA exchanges the up-projected
    // per-head K (nope + rope) and V.
    const std::int64_t tpd = std::max<std::int64_t>(1, d.tp);
    std::int64_t kv_elems;
    if (m.kv_lora_rank > 0) {
      kv_elems = std::max<std::int64_t>(1, m.heads / tpd) * (m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim);
    } else {
      const std::int64_t kvh = m.kv_heads > 0 ? m.kv_heads : m.heads;
      kv_elems = 2 * std::max<std::int64_t>(1, kvh / tpd) * m.effective_head_dim();
    }
    const std::int64_t kvc = sat_mul(sat_mul(tokens, kv_elems), ba);
    const std::int64_t steps = sat_mul(lk, d.cp - 1);
    lo.add("cp", {"cp"}, CollOp::kSendRecv, Phase::kForward, kvc, steps, ba, "ring-attention K/V chunk");
    lo.add("cp", {"cp"}, CollOp::kSendRecv, Phase::kBackward, kvc, sat_mul(bwd_calls(2, 1, layers), d.cp - 1), ba,
           "K/V re-circulation and dK/dV chunks");
  }

  // --- expert parallel: token dispatch and combine ---------------------------------------
  if (ed.ep > 1 && rp.moe_layers > 0) {
    const std::vector<std::string> ep_dims = expert_parallel_dims(plan, mesh);
    // Each rank routes its own tokens: its seq/cp share, split over tp when sequence parallel or
    // when tp folds into EP (etp = 1; torchtitan's ReordererSequenceParallel, Megatron's SP).
    const bool split_tp = sp || ed.etp == 1;
    const std::int64_t t_rank = std::max<std::int64_t>(1, tokens / (split_tp ? std::max<std::int64_t>(1, d.tp) : 1));
    const std::int64_t rows = dispatched_rows(t_rank, m.experts_per_token, m.experts, plan.parallelism.expert_capacity_factor);
    // The busiest rank receives expert_imbalance x the mean (dropless); a capacity factor pads
    // every rank to the same volume instead.
    const double imbalance = plan.parallelism.expert_capacity_factor ? 1.0 : plan.parallelism.expert_imbalance.value_or(1.0);
    const std::int64_t bytes = to_bytes(static_cast<double>(rows) * static_cast<double>(m.hidden) * imbalance, ba);
    const MoeDispatcher disp = effective_dispatcher(plan);
    // Megatron's `moe` recompute module re-runs every MoE layer's forward, dispatch and combine
    // included, in its backward (moe_layer.py moe_layer_recompute: the whole route -> dispatch ->
    // experts -> combine under tensor_parallel.checkpoint); full recompute already counts its layers.
    const bool moe_recompute = tr.activation_checkpointing == Checkpointing::kSelectiveAttention &&
                               recompute_modules_of(tr).moe;
    const std::int64_t moe_again = moe_recompute ? sat_mul(rp.moe_layers, k) : 0;  // per dispatch collective
    if (disp == MoeDispatcher::kAllGather) {
      // Megatron MoEAllGatherTokenDispatcher (token_dispatcher.py): the expert group all-gathers
      // every rank's tokens (not their routed copies) and each keeps its experts' rows; the
      // combine reduce-scatters the outputs back; backward swaps the two.
      const std::int64_t n = mesh.groups(ep_dims).group_size();
      const std::int64_t gathered = sat_mul(sat_mul(sat_mul(t_rank, m.hidden), ba), n);
      const std::int64_t per_layer = sat_mul(rp.moe_layers, k);
      lo.add("ep", ep_dims, CollOp::kAllGather, Phase::kForward, gathered, per_layer, ba, "token all-gather (dispatch)");
      lo.add("ep", ep_dims, CollOp::kReduceScatter, Phase::kForward, gathered, per_layer, ba,
             "expert-output reduce-scatter (combine)");
      const std::int64_t bwd = sat_add(bwd_calls(1, 1, rp.moe_layers), moe_again);
      lo.add("ep", ep_dims, CollOp::kAllGather, Phase::kBackward, gathered, bwd, ba, "output-grad all-gather");
      lo.add("ep", ep_dims, CollOp::kReduceScatter, Phase::kBackward, gathered, bwd, ba,
             full_ckpt || moe_recompute ? "input-grad reduce-scatter + recomputed forward" : "input-grad reduce-scatter");
    } else {
      // One all-to-all to dispatch and one to combine per MoE layer per micro-batch; backward
      // runs both again on the gradients (Megatron token_dispatcher.py alltoall workflow,
      // torchtitan all_to_all_single of routed tokens; docs/plan-format.md, docs/sources/simulator.md §2.5).
      const std::int64_t calls = sat_mul(sat_mul(rp.moe_layers, k), 2);
      lo.add("ep", ep_dims, CollOp::kAllToAll, Phase::kForward, bytes, calls, ba, "token dispatch + combine");
      lo.add("ep", ep_dims, CollOp::kAllToAll, Phase::kBackward, bytes,
             sat_add(bwd_calls(2, 2, rp.moe_layers), sat_mul(2, moe_again)), ba,
             full_ckpt || moe_recompute ? "grad dispatch + combine + recomputed forward" : "grad dispatch + combine");
      // Multi-token prediction: each depth runs one more MoE layer on the stage that holds the loss
      // (Megatron builds MultiTokenPredictionBlock with the post-process stage), dispatching its
      // tokens the same way (core::trained_mtp_layers).
      if (const std::int64_t mtp = trained_mtp_layers(plan); mtp > 0) {
        lo.repeats(k, StageScope::kLast);
        lo.add("ep", ep_dims, CollOp::kAllToAll, Phase::kForward, bytes, sat_mul(sat_mul(mtp, k), 2), ba,
               "MTP layer token dispatch + combine");
        lo.add("ep", ep_dims, CollOp::kAllToAll, Phase::kBackward, bytes,
               sat_mul(sat_mul(mtp, k), full_ckpt || moe_recompute ? 4 : 2), ba,
               "MTP layer grad dispatch + combine");
        lo.repeats(k);
      }
      if (const DispatchSplit split = dispatch_split(plan, mesh, ep_dims, t_rank, bytes, ba); split.inter_node > 0) {
        for (auto& c : s.collectives) {
          if (c.role == "ep" && c.op == CollOp::kAllToAll) {
            c.inter_node_bytes_per_call = split.inter_node;
            c.intra_node_bytes_per_call = split.intra_node;
          }
        }
        s.notes.push_back(split.note);
      }
    }
    if (ed.etp > 1 && d.tp > 1) {
      // Megatron alltoall dispatcher with expert TP: all-gather the received tokens over the ETP
      // group after the dispatch, reduce-scatter before the combine; backward swaps them.
      const std::int64_t gathered = sat_mul(bytes, ed.etp);
      const std::int64_t per_layer = sat_mul(rp.moe_layers, k);
      lo.add("etp", tp, CollOp::kAllGather, Phase::kForward, gathered, per_layer, ba, "routed-token all-gather");
      lo.add("etp", tp, CollOp::kReduceScatter, Phase::kForward, gathered, per_layer, ba, "expert-output reduce-scatter");
      lo.add("etp", tp, CollOp::kAllGather, Phase::kBackward, gathered, bwd_calls(1, 1, rp.moe_layers), ba,
             "output-grad all-gather");
      lo.add("etp", tp, CollOp::kReduceScatter, Phase::kBackward, gathered, bwd_calls(1, 1, rp.moe_layers), ba,
             "input-grad reduce-scatter");
    }
    if (!plan.parallelism.expert_capacity_factor) {
      s.notes.push_back("dropless routing: all-to-all bytes assume a balanced router (tokens x top-k rows per rank)");
    }
  }
  return s;
}

}  // namespace planck::core
