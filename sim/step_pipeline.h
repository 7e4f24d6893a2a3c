#pragma once
// A step's pipeline: the per-micro-batch costs of one rank (compute from sim/compute.h, the
// communication the overlap rules leave exposed, sim/overlap.h) laid out over the pipeline
// stages as torchtitan splits a model, then run through the schedule's timeline
// (sim/pipeline.h) or, for enumerate and very long pipelines, the closed form checked against
// it (docs/simulator.md "Step time").

#include <cstdint>
#include <vector>

#include "core/base/status.h"
#include "core/plan/plan.h"
#include "sim/pipeline.h"

namespace planck::sim {

// Seconds of one micro-batch on one rank.
struct StageCosts {
  core::PipelineSchedule schedule = core::PipelineSchedule::k1F1B;
  std::int64_t pp = 1, virtual_stages = 1, micro_batches = 1;
  std::int64_t layers = 1;                      // transformer layers of the whole model
  double layer_f = 0, layer_b = 0, layer_w = 0;  // one layer; layer_b includes layer_w
  double first_f = 0, first_b = 0;              // the first stage adds (embedding collectives)
  double last_f = 0, last_b = 0, last_w = 0;    // the last stage adds (norm, head, loss); last_b includes last_w
  double rank_f = 0, rank_b = 0;                // each rank adds per micro-batch (split over its chunks)
  double p2p_s = 0;                             // one send between two pipeline ranks
  // Megatron's split (core/plan/pipeline_split.h) when the plan gives one: layers of each of the
  // pp x v stages, and the stages holding the embedding (first_*) and the head and loss (last_*).
  // Empty: stage_layers, the embedding on the first stage, the loss on the last.
  std::vector<std::int64_t> split;
  std::int64_t embedding_stage = 0, loss_stage = -1;
  // Multi-token prediction (training.mtp_layers): what its layers, projection, head and loss add
  // to the stage holding them (-1: the loss stage, where Megatron builds them without a layout);
  // mtp_b includes mtp_w. mtp_units: their layers, for the activations that stage holds.
  double mtp_f = 0, mtp_b = 0, mtp_w = 0;
  std::int64_t mtp_stage = -1, mtp_units = 0;
};

// Layers of each stage: c.split when it has pp x v entries, else stage_layers.
std::vector<std::int64_t> stage_split(const StageCosts& c);

// Transformer layers of each of `stages` stages: L / stages each when that divides (Megatron-LM,
// which requires it unless --decoder-first/last-pipeline-num-layers are given); otherwise as
// torchtitan's generate_llm_fqn_per_model_part
// (torchtitan/distributed/pipeline_parallel.py) splits them: the embedding and the output
// head count as one layer each, the L + 2 units are spread evenly, the first (L + 2) mod stages
// stages take one more, and the first and last stages give up a layer to the embedding / head.
// Llama-3-405B (126 layers) over 16 stages: 7, 8 x 14, 7, the split of Llama 3 §3.3.2.
std::vector<std::int64_t> stage_layers(std::int64_t layers, std::int64_t stages);

// The timeline's input: pp x v stages in model order.
PipelineInput pipeline_input(const StageCosts& c);

// Makespan without running the timeline: m x the busiest rank's work per micro-batch, plus
// (pp - 1) fill-and-drain hops of the mean chunk (f + b for gpipe / 1f1b / interleaved_1f1b,
// Narayanan et al. SC'21 §2.2; f + b - w, b the input-gradient part, for interleaved_zb, zbv
// and dualpipev, Qi et al. ICLR'24 §3.1) and two p2p sends per hop; with m < pp,
// (m + pv - 1) chunk passes. Tests bound its gap to the timeline over a sweep with m >= 2 pp,
// equal and unequal stages (tests/sim/sim_step_pipeline_test.cc).
double closed_form_makespan(const PipelineInput& in);

// Seconds of one micro-batch on the rank with the most work (all its stages' passes).
double busiest_rank_per_micro_batch(const PipelineInput& in);

struct PipelineStep {
  double makespan_s = 0;
  double busiest_s = 0;         // the busiest rank's work (compute and exposed in-stage comm)
  double bubble_s = 0;          // makespan - busiest_s
  double bubble_fraction = 0;   // bubble_s / busiest_s: (p-1)/m for 1f1b with equal stages
  bool timeline = false;        // false: the closed form
  std::vector<std::int64_t> layers_per_stage;
};

// More passes than this run the closed form (simulate stays well under 1 ms per plan).
inline constexpr std::int64_t kMaxTimelinePasses = 200000;

// Runs sim/pipeline.h when the pipeline has at most kMaxTimelinePasses passes and either
// use_timeline is set or m < 2 pp (where the closed form is not checked); else the closed form.
// The shape is checked either way (check_pipeline_shape).
core::Result<PipelineStep> pipeline_step(const StageCosts& c, bool use_timeline);

}  // namespace planck::sim
