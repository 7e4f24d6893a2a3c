#include "sim/overlap.h"

#include <algorithm>

namespace planck::sim {
namespace {

bool data_parallel_role(const std::string& role) { return role == "dp" || role == "fsdp" || role == "replicate"; }

// Per-phase sums of one kind of collective: all seconds and the longest single call.
struct Sum {
  double total = 0, longest_call = 0;
  void add(const TimedSlot& s) {
    total += s.time_s;
    const auto calls = std::max<std::int64_t>(1, s.entry->calls_per_step);
    longest_call = std::max(longest_call, s.time_s / static_cast<double>(calls));
  }
};

}  // namespace

double exposed_after_overlap(double comm_s, double first_s, double compute_s) {
  first_s = std::min(std::max(0.0, first_s), comm_s);
  return first_s + std::max(0.0, comm_s - first_s - std::max(0.0, compute_s));
}

ExposedComm apply_overlap(std::vector<TimedSlot>& slots, const OverlapCompute& c) {
  ExposedComm out;
  const double m = static_cast<double>(std::max<std::int64_t>(1, c.micro_batches));
  const double per_layer = m * static_cast<double>(std::max<std::int64_t>(1, c.layers));
  double tp_f = 0, tp_b = 0, cp_f = 0, cp_b = 0;
  Sum dp_mb_f, dp_mb_b, dp_once_f, dp_once_b, param_gather;
  double p2p_f = 0, p2p_b = 0, p2p_calls = 0;
  for (TimedSlot& s : slots) {
    const core::ScheduledCollective& e = *s.entry;
    const bool fwd = e.phase == core::Phase::kForward, bwd = e.phase == core::Phase::kBackward;
    if (!fwd && !bwd) {
      if (c.overlap_param_gather && data_parallel_role(e.role) && e.op == core::CollOp::kAllGather) {
        s.overlapped = true;
        param_gather.add(s);
        continue;
      }
      out.step_s += s.time_s;  // optimizer-phase gathers and step-phase syncs follow the step
      continue;
    }
    if (e.role == "pp") {
      (fwd ? p2p_f : p2p_b) += s.time_s;
      if (e.op == core::CollOp::kSendRecv && fwd) p2p_calls = static_cast<double>(std::max<std::int64_t>(1, e.calls_per_step));
      continue;
    }
    if (data_parallel_role(e.role)) {
      s.overlapped = true;
      Sum& sum = e.micro_batches > 1 ? (fwd ? dp_mb_f : dp_mb_b) : (fwd ? dp_once_f : dp_once_b);
      sum.add(s);
      continue;
    }
    if (e.stages != core::StageScope::kEvery) {
      // Vocab-parallel embedding / loss collectives: exposed, on their stage only.
      const double t = s.time_s / m;
      if (e.stages == core::StageScope::kFirst) (fwd ? out.first_f : out.first_b) += t;
      else (fwd ? out.last_f : out.last_b) += t;
      continue;
    }
    const double t = s.time_s / per_layer;
    if (e.role == "tp") {
      s.overlapped = c.async_tp;
      (fwd ? tp_f : tp_b) += t;
    } else if (e.role == "cp") {
      s.overlapped = true;
      (fwd ? cp_f : cp_b) += t;
    } else {
      (fwd ? out.layer_f : out.layer_b) += t;  // expert all-to-all and anything else: exposed
    }
  }
  // Tensor parallel: exposed unless async TP, which splits each matmul into tp chunks so all
  // but the first chunk's transfer runs under the previous chunk's GEMM (torchtitan
  // enable_async_tensor_parallel, PyTorch micro-pipeline TP; Wang et al. ASPLOS'23).
  const double n_tp = static_cast<double>(std::max<std::int64_t>(1, c.tp));
  out.layer_f += c.async_tp ? exposed_after_overlap(tp_f, tp_f / n_tp, c.layer_f_gemm) : tp_f;
  out.layer_b += c.async_tp ? exposed_after_overlap(tp_b, tp_b / n_tp, c.layer_b_gemm) : tp_b;
  // Ring attention: each of the cp-1 K/V hops runs under the attention of the block already
  // held (Liu et al. 2023; Megatron context_parallel), so (cp-1)/cp of the attention hides them.
  const double n_cp = static_cast<double>(std::max<std::int64_t>(1, c.cp));
  out.layer_f += exposed_after_overlap(cp_f, 0, c.layer_f_attention * (n_cp - 1) / n_cp);
  out.layer_b += exposed_after_overlap(cp_b, 0, c.layer_b_attention * (n_cp - 1) / n_cp);
  // Data-parallel syncs: FSDP prefetches the next unit's all-gather under the current unit's
  // compute (FSDP2 implicit prefetch), DDP / ZeRO / FSDP reduce each bucket / unit as its
  // gradients are ready; one call (the first gather, the last bucket) cannot hide.
  out.rank_f = exposed_after_overlap(dp_mb_f.total / m, dp_mb_f.longest_call, c.rank_f);
  out.rank_b = exposed_after_overlap(dp_mb_b.total / m, dp_mb_b.longest_call, c.rank_b);
  out.step_s += exposed_after_overlap(dp_once_f.total, dp_once_f.longest_call, c.rank_f);
  out.step_s += exposed_after_overlap(dp_once_b.total, dp_once_b.longest_call, c.rank_b);
  // Megatron --overlap-param-gather: after the optimizer step only the first bucket's all-gather
  // is waited for; each forward pre-hook starts the next bucket's, so the rest runs under the
  // first micro-batch's forward (megatron/core/distributed/distributed_data_parallel.py).
  out.step_s += exposed_after_overlap(param_gather.total, param_gather.longest_call, c.rank_f);
  // Pipeline p2p: one hop = the send plus, with scatter-gather, the all-gather on arrival;
  // forward and backward hops averaged (the timeline has one hop time).
  if (p2p_calls > 0) out.p2p_s = (p2p_f + p2p_b) / (2 * p2p_calls);
  return out;
}

}  // namespace planck::sim
