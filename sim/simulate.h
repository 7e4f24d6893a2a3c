#pragma once
// One plan, one step: the lowered schedule timed by the cost model, compute time from FLOPs and
// MFU, what overlaps, and memory per GPU (docs/simulator.md, "planck-sim/1"). O(1) in the world size:
// every group of a role has the same shape, so nothing loops over ranks.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/mesh/mesh.h"
#include "core/plan/plan.h"
#include "core/schedule/schedule.h"
#include "core/base/status.h"
#include "sim/cost.h"
#include "sim/memory.h"
#include "sim/topology.h"

namespace planck::sim {

// The shared MoE constants fitted to published MoE runs (sim/moe_band.h; defaults: the fit).
struct MoeConstants {
  // Grouped-GEMM efficiency relative to a dense GEMM; absent: the GPU's fitted
  // compute.grouped_gemm_scale (per generation, core/plan/presets.cc).
  std::optional<double> expert_gemm_scale;
  double layer_overhead_s;       // router + dispatch preprocessing host time per MoE layer forward (2x backward)
  // Host seconds per operation an eagerly launched MoE layer's forward issues one by one; the
  // layer's forward takes at least this x moe_layer_launches (2x backward; sim/compute.h).
  double host_launch_s;
  double ep_overlap_efficiency;  // share of the paired all-to-all the overlap really hides
};
MoeConstants fitted_moe_constants();

struct SimOptions {
  const Topology* topology = nullptr;  // measured links and compute (its gemm_scale)
  MoeConstants moe = fitted_moe_constants();
  CostOptions cost;
  // false: long pipelines (m >= 2 pp) use the closed form checked against the timeline
  // (enumerate, for speed); true: the timeline whenever it has <= kMaxTimelinePasses passes.
  bool exact_pipeline = true;
};

// What the simulate / enumerate command lines share: --topology FILE (empty = none), --nvls,
// --no-tree. Loads the profile into `storage` and points `options` at it; the error names the file.
core::Status configure_sim_options(SimOptions& options, std::optional<Topology>& storage,
                                   const std::string& topology_path, bool nvls, bool no_tree);

struct TimedCollective {
  core::ScheduledCollective entry;
  std::int64_t bytes_sent_per_rank = 0;  // all calls of the step, busiest rank
  double time_s = 0;                     // all calls of the step
  LinkClass link = LinkClass::kNvlink;
  Algorithm algorithm = Algorithm::kRing;
  bool overlapped = false;  // partly hidden under compute (sim/overlap.h: DP syncs, ring attention, async TP)
};

struct StepTime {
  std::int64_t bytes_sent_per_rank = 0;
  double comm_time_s = 0;
  double compute_time_s = 0;  // including recomputation and the pipeline bubble
  double exposed_comm_time_s = 0;
  double step_time_s = 0;
  // Where the step likely falls (sim/uncertainty.h): the published runs of the plan's stack,
  // predicted leave-one-source-out, put published / predicted between these bounds' ratios.
  double step_time_low_s = 0, step_time_high_s = 0;
  std::string interval_basis;
};

// Compute of one step on the busiest rank (docs/simulator.md "Compute model"). The four parts
// are summed over the step's micro-batches and exclude the bubble; memory_s includes the
// optimizer step. Per micro-batch: the busiest stage's layers (backward includes recompute) and
// the head, which the last stage adds.
struct ComputeBreakdown {
  double gemm_s = 0, attention_s = 0, memory_s = 0, recompute_s = 0;
  double optimizer_s = 0;
  // Offloaded states crossing the GPU's host link (memory.host_traffic at host_gbps), not
  // overlapped with compute (docs/simulator.md "Offload, optimizers and frozen weights").
  double host_s = 0;
  double bubble_s = 0;
  double layers_forward_s = 0, layers_backward_s = 0;
  double head_forward_s = 0, head_backward_s = 0;
  // Layers of the busiest rank, and how many of them full checkpointing recomputes (all of them
  // unless training.recompute_every / recompute_num_layers narrow it; 0 without full).
  std::int64_t rank_layers = 0, recomputed_layers = 0;
  // The dtype the transformer layers' linear GEMMs were priced in (fp8 under training.fp8 on a
  // GPU with FP8 tensor cores) and the FP8 recipe asked for.
  core::DType linear_dtype = core::DType::kBf16;
  core::Fp8Recipe fp8 = core::Fp8Recipe::kNone;
  // Per micro-batch, for the pipeline timeline and the overlap rules: the weight-gradient GEMMs
  // inside the backward times above (what zero-bubble schedules split off), and the GEMM /
  // attention parts of the busiest stage's layers (over `layers` layers).
  double layers_weight_grad_s = 0, head_weight_grad_s = 0;
  // Multi-token prediction (training.mtp_layers), per micro-batch on the stage holding it.
  std::int64_t mtp_layers = 0;
  double mtp_forward_s = 0, mtp_backward_s = 0, mtp_weight_grad_s = 0;
  double layers_forward_gemm_s = 0, layers_backward_gemm_s = 0;
  double layers_forward_attention_s = 0, layers_backward_attention_s = 0;
  std::int64_t layers = 0;
  std::optional<double> mfu_override;  // training.mfu was set: kernel times not used
};

struct SimResult {
  std::int64_t world = 0;
  core::Schedule schedule;  // the lowering's facts; its collectives live in `collectives`
  std::vector<TimedCollective> collectives;
  StepTime step;
  Memory memory;
  ComputeBreakdown compute;
  // Model FLOPs of one step on one rank (sim/model.h convention: no recompute, head counted),
  // over the step time; mfu = tflops_per_gpu / the BF16 peak.
  double flops_per_rank = 0;
  double tflops_per_gpu = 0;
  double mfu = 0;
  double bubble_fraction = 0;  // pipeline bubble / the busiest rank's work (timeline or closed form)
  bool pipeline_timeline = false;  // the bubble came from sim/pipeline.h's timeline
  std::vector<std::int64_t> layers_per_stage;  // transformer layers of each (virtual) stage
  // MoE models: the measured relative error of the step time (sim/moe_band.h); 0 otherwise.
  double error_band = 0;
  std::vector<std::string> notes;
};

// Needs the plan's model; the mesh must be the plan's valid mesh.
core::Result<SimResult> simulate(const core::Plan& plan, const core::Mesh& mesh, const SimOptions& options = {});

// Times a schedule already lowered (enumerate lowers once per layout and reuses this).
SimResult simulate_schedule(const core::Plan& plan, const core::Mesh& mesh, core::Schedule schedule,
                            const SimOptions& options);

// "planck-sim/1" JSON (docs/simulator.md) and a text table.
std::string sim_to_json(const SimResult& r);
std::string sim_to_text(const SimResult& r, const core::Plan& plan, const core::Mesh& mesh);

}  // namespace planck::sim
