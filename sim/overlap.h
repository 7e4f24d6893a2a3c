#pragma once
// Which communication hides under which compute, as the frameworks schedule it
// (docs/simulator.md "Overlap"). Each timed collective of a step is sorted into where it sits
// on the critical path: inside every layer of a micro-batch (TP, CP, EP), on the first or last
// pipeline stage only (vocab-parallel embedding / loss), once per micro-batch per rank
// (data-parallel syncs repeated every micro-batch), once per step (gradient syncs on the last
// micro-batch, optimizer-phase gathers) or between pipeline stages (p2p). What a rule hides is
// subtracted; the rest is what sim/step_pipeline.h lays into the timeline.

#include <cstdint>
#include <vector>

#include "core/plan/plan.h"
#include "core/schedule/schedule.h"

namespace planck::sim {

// Exposed seconds of `comm_s` that runs beside `compute_s`, of which `first_s` cannot start
// before the compute needs it (the first FSDP unit's all-gather, the last DDP bucket, the first
// async-TP chunk): first + max(0, comm - first - compute).
double exposed_after_overlap(double comm_s, double first_s, double compute_s);

// One micro-batch's compute on one rank, for the rules: per layer (the busiest stage's mean
// layer) and for the whole rank (all its layers and, on the last stage, the head).
struct OverlapCompute {
  std::int64_t layers = 1;  // layers the lowering counted per-layer collectives for
  std::int64_t micro_batches = 1;
  double layer_f_gemm = 0, layer_b_gemm = 0, layer_f_attention = 0, layer_b_attention = 0;
  double rank_f = 0, rank_b = 0;
  std::int64_t tp = 1, cp = 1;
  bool async_tp = false;
  bool overlap_param_gather = false;  // zero1/zero2 updated-parameter gathers under the next forward
};

// The same seconds of exposed communication, by where they land.
struct ExposedComm {
  double layer_f = 0, layer_b = 0;  // per layer per micro-batch
  double first_f = 0, first_b = 0, last_f = 0, last_b = 0;  // per micro-batch, on that stage
  double rank_f = 0, rank_b = 0;    // per micro-batch per rank
  double step_s = 0;                // once per step, after the pipeline drains
  double p2p_s = 0;                 // one stage-to-stage send (with scatter-gather's all-gather)
};

struct TimedSlot {
  const core::ScheduledCollective* entry = nullptr;
  double time_s = 0;        // all calls of the step
  bool overlapped = false;  // set: some of it hides under compute
};

// Applies the rules to every slot (setting `overlapped`) and sums what stays exposed.
ExposedComm apply_overlap(std::vector<TimedSlot>& slots, const OverlapCompute& c);

}  // namespace planck::sim
