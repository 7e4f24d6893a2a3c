#pragma once
// planck enumerate: every factorization of a world into pp x dp_replicate x dp_shard (x ep) x cp
// x tp valid for a model and cluster, with its data-parallel strategy and the least activation
// checkpointing that fits, simulated and ranked (docs/verify.md#exit-codes, §5 "planck-enumerate/1").

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/check/checks.h"
#include "core/plan/plan.h"
#include "sim/simulate.h"

namespace planck::sim {

// Which framework's options a layout may combine (docs/simulator.md "planck enumerate"):
// any mixes them all; megatron and torchtitan keep to what that framework runs.
enum class Framework { kAny, kMegatron, kTorchtitan };
const char* to_string(Framework f);

struct EnumerateRequest {
  std::int64_t world = 0;
  std::int64_t gpus_per_node = 8;
  std::int64_t nvlink_domain = 0;  // cluster.nvlink_domain of every layout (0: a node)
  core::ModelSpec model;
  core::GpuSpec gpu;
  std::optional<std::int64_t> global_batch;  // absent: world x micro_batch sequences (kDefault)
  std::int64_t seq_len = 8192;
  std::int64_t micro_batch = 1;
  // Try micro-batches of 1..16 sequences on layouts without a pipeline (micro_batch ignored).
  bool search_micro_batch = false;
  bool allow_cross_node_tp = false;
  // Rank by tokens per second (the default) or by step time.
  bool rank_by_throughput = true;
  // Rank layouts above memory-tight's threshold among the others instead of after them.
  bool allow_tight = false;
  Framework framework = Framework::kAny;
  SimOptions sim;
  // --plan TEMPLATE (docs/simulator.md "enumerate --plan"): every candidate is this plan with the
  // candidate's mesh and layout fields (and the request's cluster, model, gpu and batch), and
  // every rule of `checks` (verify's registry) runs on it. Absent: nothing is checked, at no cost.
  std::optional<core::Plan> base;
  const core::CheckRegistry* checks = nullptr;
  // The lightest activation checkpointing tried (a template's), then the heavier ones.
  core::Checkpointing least_checkpointing = core::Checkpointing::kNone;
  // The gradient sync every layout runs (a template's training.grad_sync); absent: searched.
  std::optional<core::GradSync> grad_sync;
  // training.fp8 of every layout (--fp8); absent: the template's, else none.
  std::optional<core::Fp8Recipe> fp8;
  // Called with ((tp, cp, pp) splits done, total), from one thread at a time; may be empty.
  std::function<void(std::int64_t, std::int64_t)> progress;
  // Threads that search splits side by side (0: one per core). The layouts and their order do
  // not depend on it.
  int threads = 0;
};

struct Layout {
  std::vector<std::string> dims;
  std::vector<std::int64_t> shape;
  core::DataParallel data_parallel = core::DataParallel::kNone;
  bool reshard_after_forward = true;
  bool sequence_parallel = false;
  bool async_tp = false;  // TP collectives overlapped with the GEMMs they feed (parallelism.async_tp)
  std::int64_t etp = 0;  // expert tensor parallel degree (MoE models), 0 for a dense model
  core::PipelineSchedule pipeline_schedule = core::PipelineSchedule::k1F1B;
  std::int64_t virtual_stages = 1;
  bool ep_overlap = false;  // the expert all-to-all runs beside another micro-batch (sim/ep_overlap.h)
  core::Checkpointing checkpointing = core::Checkpointing::kNone;
  // Full checkpointing narrowed to some layers (training.recompute_every: torchtitan's layer SAC;
  // recompute_num_layers: Megatron's block method); 0: every layer.
  std::int64_t recompute_every = 0, recompute_num_layers = 0;
  bool tight = false;  // peak memory above memory-tight's fraction of capacity
  std::int64_t micro_batches = 1;  // gradient-accumulation steps
  std::int64_t micro_batch = 1;    // sequences per micro-batch
  core::GradSync grad_sync = core::GradSync::kLastMicrobatch;
  double step_time_s = 0;
  double step_time_low_s = 0, step_time_high_s = 0;  // the stated interval (sim/uncertainty.h)
  double compute_time_s = 0;
  double exposed_comm_time_s = 0;
  std::int64_t memory_peak = 0;
  std::int64_t bytes_sent_per_rank = 0;
  // simulate's honest figures (SimResult): model FLOPs per rank, their rate and share of peak,
  // the bubble, and the compute split (summed over the step, bubble excluded).
  double flops_per_rank = 0, tflops_per_gpu = 0, mfu = 0, bubble_fraction = 0;
  double gemm_s = 0, attention_s = 0, memory_bound_s = 0, recompute_s = 0;
  double tokens_per_step = 0;  // world / (tp x pp x cp) x micro-batches x micro_batch x seq_len
  double tokens_per_s = 0;
  bool pareto = false;
  // With `checks`: the rules with an error on this layout's plan (empty = clean; a rejected
  // layout ranks after every clean one), those with a warning, and those that could not run.
  std::vector<std::string> rejected, warnings, unchecked;
  int nontrivial_dims() const;  // dims of size > 1
};

struct EnumerateResult {
  std::int64_t world = 0;
  std::int64_t considered = 0;  // factorizations looked at
  std::int64_t valid = 0;       // layouts (factorization x strategy) that are valid and fit
  std::int64_t global_batch = 0;      // sequences per step every layout was timed with
  bool global_batch_default = false;  // no --global-batch: world x micro_batch
  Framework framework = Framework::kAny;
  core::Fp8Recipe fp8 = core::Fp8Recipe::kNone;  // training.fp8 of every layout (--fp8 or the template's)
  bool checked = false;               // every layout went through `checks` (--plan)
  std::string template_path;          // the template's path, when checked
  std::int64_t rejected = 0;          // layouts with an error-severity finding
  std::vector<std::string> unchecked;  // rules that could not run on some layout
  double error_band = 0;  // MoE: the measured relative step-time error (sim/moe_band.h); 0 for dense models
  std::vector<Layout> layouts;  // best first: clean before rejected, comfortable before tight, tokens/s (or step time), memory, fewer dims
};

// Errors (a world or gpus_per_node < 1, a model without layers) name the value.
core::Result<EnumerateResult> enumerate(const EnumerateRequest& request);

// Output; `top` < 0 means every layout.
std::string enumerate_to_json(const EnumerateResult& r, std::int64_t top);
std::string enumerate_to_csv(const EnumerateResult& r, std::int64_t top);
std::string enumerate_to_text(const EnumerateResult& r, const EnumerateRequest& req, std::int64_t top);

}  // namespace planck::sim
