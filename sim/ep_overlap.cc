#include "sim/ep_overlap.h"

#include <algorithm>

namespace planck::sim {
namespace {

PairedShare refused(std::string why) {
  PairedShare out;
  out.why_not = std::move(why);
  return out;
}

}  // namespace

PairedShare ep_overlap_share(const core::Plan& plan, std::int64_t pp, std::int64_t v, std::int64_t m) {
  using PS = core::PipelineSchedule;
  const PS schedule = plan.parallelism.pipeline_schedule.value_or(PS::k1F1B);
  // Absent: on where the schedule runs it by default (DualPipe; torchtitan's
  // pipeline_parallel_expert_parallel_overlap = true), off elsewhere (Megatron's flag is opt-in).
  const bool asked = plan.parallelism.ep_overlap.value_or(pp > 1 && schedule == PS::kDualPipeV);
  if (!asked) return {};
  const auto ckpt = plan.training ? plan.training->activation_checkpointing : core::Checkpointing::kNone;
  if (ckpt == core::Checkpointing::kFull) {
    return refused("full activation checkpointing (Megatron asserts recompute_granularity != \"full\" with "
                   "--overlap-moe-expert-parallel-comm)");
  }
  if (m < 1) return refused("no micro-batches");
  const double dm = static_cast<double>(m);
  PairedShare out;
  if (pp <= 1) {
    out.share = (dm - 1) / dm;  // combined_1f1b_schedule_for_no_pipelining
    return out;
  }
  switch (schedule) {
    case PS::kInterleaved1F1B: {
      if (v < 2) {
        return refused("interleaved_1f1b with 1 virtual stage (Megatron asks for virtual pipeline stages when pp > 1)");
      }
      // get_pp_rank_microbatches on rank 0 with the overlap's extra warm-up micro-batch and the
      // default microbatch_group_size_per_vp_stage = pp.
      const double total = dm * static_cast<double>(v);
      const double warmup = static_cast<double>(2 * (pp - 1) + (v - 1) * pp + 1);
      out.share = std::max(0.0, total - warmup) / total;
      return out;
    }
    case PS::kDualPipeV: {
      const double pairs = 2.0 * static_cast<double>(m - 2 * pp + 1) + static_cast<double>(pp - 1);
      out.share = std::clamp(pairs / (2 * dm), 0.0, 1.0);
      return out;
    }
    case PS::kGpipe:
    case PS::k1F1B:
    case PS::kZbv:
    case PS::kInterleavedZb: break;
  }
  return refused(std::string("pipeline schedule ") + core::to_string(schedule) +
                 " does not pair one micro-batch's forward with another's backward (use interleaved_1f1b with "
                 "virtual stages, or dualpipev)");
}

double ep_overlap_exposed_s(double paired_share, double a2a_forward_s, double a2a_backward_s,
                            double compute_forward_s, double compute_backward_s) {
  const double s = std::clamp(paired_share, 0.0, 1.0);
  const double comm = a2a_forward_s + a2a_backward_s;
  const double compute = compute_forward_s + compute_backward_s;
  return (1 - s) * comm + s * std::max(0.0, comm - compute);
}

}  // namespace planck::sim
