#pragma once
// The schedule: a plan lowered once into the collectives one optimizer step performs.
// sim/ times it, exec/ runs it, viz/ draws it (docs/simulator.md for the fields).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/schedule/collectives.h"
#include "core/mesh/mesh.h"
#include "core/plan/plan.h"
#include "core/base/status.h"

namespace planck::core {

enum class Phase { kForward, kBackward, kOptimizer, kStep };
const char* phase_name(Phase p);  // "forward", "backward", "optimizer", "step"

// Which pipeline stages run a collective: every stage (per layer, or per stage for p2p and data-
// parallel syncs), only the first (the vocab-parallel embedding) or only the last (the loss).
enum class StageScope { kEvery, kFirst, kLast };
const char* stage_scope_name(StageScope s);  // "every", "first", "last"

struct ScheduledCollective {
  std::string role;               // fsdp, replicate, dp, tp, pp, cp, ep
  std::vector<std::string> dims;  // mesh order
  CollOp op = CollOp::kAllReduce;
  Phase phase = Phase::kStep;
  std::int64_t group_size = 1;
  std::int64_t groups = 1;
  std::int64_t bytes_per_call = 0;  // nccl-tests size convention (collectives.h)
  std::int64_t calls_per_step = 0;  // all micro-batches of one optimizer step
  int dtype_bytes = 2;              // element size of the buffer
  std::string what;                 // e.g. "parameter all-gather, one per FSDP unit"
  // The calls repeat in each of this many micro-batches (the step's k), or run once per step (1):
  // what the simulator's overlap rules hide a collective under (docs/simulator.md "Overlap").
  std::int64_t micro_batches = 1;
  StageScope stages = StageScope::kEvery;
  // All-to-all only, > 0: the bytes one rank sends across nodes per call when the dispatch sends
  // one copy per destination node and forwards inside it (node-limited routing; sim/cost.h).
  std::int64_t inter_node_bytes_per_call = 0;
  // All-to-all over a group spanning nodes: the bytes one rank moves over NVLink per call, at the
  // same time as the inter-node bytes (sim/moe_dispatch.h); 0 with inter_node_bytes_per_call 0.
  std::int64_t intra_node_bytes_per_call = 0;
};

struct Schedule {
  std::int64_t world = 1;
  std::int64_t micro_batches = 1;  // per optimizer step per data-parallel rank
  // The training facts the lowering resolved (defaults filled in), for sim/ and viz/.
  DataParallel data_parallel = DataParallel::kNone;
  GradSync grad_sync = GradSync::kLastMicrobatch;
  std::int64_t seq_len = 8192;     // training.seq_len, or 8192 (enumerate's default) when absent
  std::int64_t micro_batch = 1;
  int virtual_stages = 1;          // model chunks per pipeline rank (zbv: 2)
  std::vector<ScheduledCollective> collectives;
  std::vector<std::string> notes;  // assumptions the lowering made
};

// Lowers a loaded plan whose mesh is valid. Needs the plan's model (error Status otherwise).
Result<Schedule> lower(const Plan& plan, const Mesh& mesh);

// The same lowering with training.grad_sync replaced (what-if for sync-every-microbatch).
Result<Schedule> lower(const Plan& plan, const Mesh& mesh, GradSync grad_sync);

// Model chunks per pipeline rank: 1 without pp or for gpipe/1f1b, 2 for zbv and dualpipev (V-shape,
// torch pipelining ScheduleZBVZeroBubble / ScheduleDualPipeV), parallelism.virtual_stages for the interleaved schedules.
int pipeline_chunks(const Plan& plan, std::int64_t pp);

// Micro-batches per optimizer step and rank: training.grad_accumulation, else global_batch /
// (micro_batch x dp_degree); nullopt when the plan states neither.
std::optional<std::int64_t> micro_batches_per_step(const Plan& plan, const Mesh& mesh);

// Parameters held by the busiest rank before data-parallel sharding: the pipeline stage with the
// most layers plus the larger of embedding / head, divided by tp (routed experts by the expert-
// parallel group size ep and the expert tensor-parallel degree etp instead). Norms and
// routers are counted as if tp-split too (a rounding error: h per layer). Shared by the lowering
// and sim/'s memory model so both see the same bytes.
struct RankParams {
  std::int64_t dense_layers = 0;  // dense-MLP layers on the busiest stage
  std::int64_t moe_layers = 0;    // MoE layers on the busiest stage
  double dense_layer = 0;         // one dense layer, / tp
  double moe_layer_dense = 0;     // attention + norms + shared experts + router of an MoE layer, / tp
  double moe_layer_experts = 0;   // routed experts of an MoE layer on this rank, / (ep x etp)
  double root = 0;                // embedding / head / final norm on this stage, / tp
  double dense_total() const {
    return static_cast<double>(dense_layers) * dense_layer + static_cast<double>(moe_layers) * moe_layer_dense + root;
  }
  double expert_total() const { return static_cast<double>(moe_layers) * moe_layer_experts; }
  double total() const { return dense_total() + expert_total(); }
  std::int64_t layers() const { return dense_layers + moe_layers; }
};
RankParams rank_params(const ModelSpec& model, std::int64_t pp, std::int64_t tp, std::int64_t ep, std::int64_t etp);

// Token rows one rank sends per all-to-all: tokens x top_k (dropless), or with a capacity factor
// every one of the experts' buffers padded to ceil(tokens x top_k / experts x cf).
std::int64_t dispatched_rows(std::int64_t tokens, std::int64_t top_k, std::int64_t experts,
                             std::optional<double> capacity_factor);

// Who runs a plan's sharded data parallelism, where the frameworks differ in how often they
// gather and reduce (docs/simulator.md "FSDP runtimes"): Megatron-FSDP (training.stack megatron
// stated) and DeepSpeed ZeRO-3 gather each unit for every micro-batch's forward and backward,
// pipeline or not, and Megatron-FSDP's sharded gradients are reduce-scattered every micro-batch
// (megatron_fsdp.py grad_reduce_every_bprop for optim_grads / optim_grads_params); torch FSDP2
// (the default) follows torch.distributed.pipelining under a pipeline (gathered once per step).
enum class FsdpRuntime { kFsdp2, kMegatronFsdp, kDeepSpeed };
FsdpRuntime fsdp_runtime(const Plan& plan);

// The bytes an all-gather of `params` moves per parameter: 1 under parallelism.fp8_param_gather
// with FP8 linears (Megatron --fp8-param-gather, torchtitan enable_fsdp_float8_all_gather: the
// transformer blocks' weights travel as FP8), else param_dtype's. The root (embedding, head,
// norms) always travels in param_dtype.
int gathered_param_bytes(const Plan& plan, bool root);

// The dims a data-parallel role ("dp", "fsdp", "replicate") synchronises a parameter class over:
// role_dims() for dense parameters (the innermost role spans ep: expert-parallel ranks see
// different tokens, so dense gradients reduce across them, as Megatron's data-parallel group
// contains them), and only its expert-data-parallel dims for routed experts.
std::vector<std::string> param_sync_dims(const Plan& plan, const Mesh& mesh, std::string_view role, bool dense);

}  // namespace planck::core
