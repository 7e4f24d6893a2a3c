#pragma once
// Pipeline schedules as timelines: each rank runs its schedule's ordered list of forward (F),
// backward (B: the full backward, or only the input gradient when W is split off) and
// weight-gradient (W) actions; an action starts when its rank is free and its input has arrived
// (the previous stage's F, the next stage's B, plus one p2p hop when the two stages sit on
// different ranks). The per-rank orders follow torch.distributed.pipelining (schedules.py:
// Schedule1F1B, ScheduleGPipe, ScheduleInterleaved1F1B, ScheduleInterleavedZeroBubble,
// ScheduleZBVZeroBubble, ScheduleDualPipeV), which for interleaved 1F1B is Megatron-LM's order
// (schedules.py forward_backward_pipelining_with_interleaving). Pure functions, no plan needed.

#include <cstdint>
#include <vector>

#include "core/base/status.h"
#include "core/plan/plan.h"

namespace planck::sim {

// One micro-batch through one virtual stage (a chunk of layers). When backward_weight_s is 0 the
// schedule runs a full backward of backward_input_s; zero-bubble schedules split it into B and W.
struct StageTimes {
  double forward_s = 0;
  double backward_input_s = 0;
  double backward_weight_s = 0;
  double activation_units = 1;  // what one in-flight micro-batch of this stage holds (e.g. layers)
};

struct PipelineInput {
  core::PipelineSchedule schedule = core::PipelineSchedule::k1F1B;
  std::int64_t pp = 1;
  std::int64_t virtual_stages = 1;  // chunks per rank; zbv and dualpipev need 2
  std::int64_t micro_batches = 1;
  std::vector<StageTimes> stages;   // pp x virtual_stages entries in model order (stage 0 = embedding)
  double p2p_s = 0;                 // one activation or gradient send between two ranks
  bool makespan_only = false;       // true: no actions recorded, no activation peaks (pricing only)
};

// One action as it ran: for drawing the timeline (planck report).
struct PipelineAction {
  std::int64_t rank = 0, stage = 0, micro_batch = 0;
  char op = 'F';  // 'F' forward, 'B' backward (input gradient when W is split off), 'W' weight gradient
  double start_s = 0, end_s = 0;
};

struct PipelineTimeline {
  double makespan_s = 0;                    // first action start to last action end
  std::vector<double> busy_s;               // per rank: time spent computing
  std::vector<double> peak_activation;      // per rank: max sum of activation_units held at once
  std::vector<std::int64_t> peak_in_flight;  // per rank: max (stage, micro-batch) pairs held
  // Mean over ranks of idle / makespan: (p-1)/(m+p-1) for 1F1B with equal stages.
  double bubble_fraction = 0;
  std::vector<PipelineAction> actions;  // in the order they were scheduled
};

// Which rank runs global stage s: "loop" placement s mod pp for interleaved schedules, "v"
// placement (stage s and 2pp-1-s on one rank) for zbv and dualpipev (torch pipelining
// generate_stage_to_rank_mapping).
std::int64_t stage_rank(core::PipelineSchedule schedule, std::int64_t pp, std::int64_t stage);

// The shape rules each schedule imposes (stage count, virtual stages, micro-batches); the error
// names the values and the rule.
core::Status check_pipeline_shape(const PipelineInput& in);

// Per rank, the most activation_units (and (stage, micro-batch) pairs) it holds at once: an F adds
// its stage's units, the B frees them (the W when the schedule splits it off). The count follows
// from the rank's own order alone, so this equals the timeline's peaks without timing it. The
// orders repeat every v x group steps once warmed up, so more than 3 pp micro-batches (a
// multiple of pp, keeping the group at pp) are scanned as 3 pp: the same peaks, O(pp^2 v) work.
struct ActivationPeaks {
  std::vector<double> units;
  std::vector<std::int64_t> in_flight;
};
core::Result<ActivationPeaks> activation_peaks(const PipelineInput& in);

// Checks the shape and runs the timeline.
core::Result<PipelineTimeline> simulate_pipeline(const PipelineInput& in);

// Makespan of a schedule whose stages all take the same times (f, b, w per chunk, p2p = 0):
// m v (f+b+w) + (p-1) x hop, hop = f+b for gpipe / 1f1b / interleaved_1f1b (Narayanan et al.
// SC'21 §2.2: bubble (p-1)(tf+tb)/v with tf = v f), f+b-w for ZB-H1 (interleaved_zb with v = 1;
// Qi et al. ICLR'24 §3.1). Checked against simulate_pipeline on a sweep in the tests.
double equal_stage_makespan(core::PipelineSchedule schedule, std::int64_t pp, std::int64_t v, std::int64_t m,
                            double f, double b, double w);

}  // namespace planck::sim
