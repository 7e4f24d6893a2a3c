#include "sim/sim_checks.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "core/base/str_cat.h"
#include "core/schedule/schedule.h"
#include "core/schedule/step_bytes.h"
#include "core/base/format.h"
#include "core/plan/presets.h"
#include "sim/format.h"
#include "sim/memory.h"
#include "sim/model.h"

namespace planck::sim {
namespace {

using core::Diagnostic;
using core::Severity;

constexpr double kTightFraction = kMemoryTightFraction;

// pipeline-bubble fires above this bubble, as a fraction of the ideal compute time
// (bubble_fraction): the bubble then adds more than half again to the step, a third of it idle.
constexpr double kBubbleThreshold = 0.5;

std::int64_t ring_bytes(const core::Plan& plan, const core::Mesh& mesh, const core::Schedule& s) {
  return core::step_bytes(s, mesh, core::link_domain(plan.cluster)).total;
}

std::string percent(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * f);
  return buf;
}

std::string memory_parts(const Memory& m) {
  return "allocated " + core::format_bytes(m.peak_allocated) + ": params " + core::format_bytes(m.params) +
         ", grads " + core::format_bytes(m.grads) + ", optimizer " + core::format_bytes(m.optimizer) +
         ", activations " + core::format_bytes(m.activations) + "; allocator caches and fragmentation " +
         core::format_bytes(m.gather_pool + m.fragmentation) + "; CUDA context and NCCL " +
         core::format_bytes(m.cuda_context + m.nccl_buffers);
}

// What would shrink the peak, from what the plan does now.
std::string memory_hint(const core::Plan& plan, const core::Schedule& s) {
  const auto ckpt = plan.training ? plan.training->activation_checkpointing : core::Checkpointing::kNone;
  std::string hint = "shard more state (fsdp over more ranks, or zero1/zero2), ";
  if (ckpt != core::Checkpointing::kFull) {
    hint += std::string("raise activation_checkpointing from ") + core::to_string(ckpt) + ", ";
  }
  if (s.micro_batch > 1) hint += "lower micro_batch (" + std::to_string(s.micro_batch) + "), ";
  hint += "or add tp / pp / cp; `planck enumerate` lists layouts that fit";
  return hint;
}

void check_memory(const core::CheckContext& ctx, core::Diagnostics& out) {
  const core::Plan& plan = ctx.plan;
  if (!plan.model || !ctx.mesh || !plan.training || !plan.training->seq_len) return;
  auto schedule = core::lower(plan, *ctx.mesh);
  if (!schedule) return;
  const Memory m = memory(plan, *ctx.mesh, *schedule);
  if (m.capacity <= 0) return;
  const double frac = static_cast<double>(m.peak) / static_cast<double>(m.capacity);
  if (frac <= kTightFraction) return;
  const bool exceeds = memory_exceeds(m);
  Diagnostic d;
  d.rule = exceeds ? "memory-exceeds" : "memory-tight";
  d.severity = exceeds ? Severity::kError : Severity::kWarning;
  const double need = static_cast<double>(exceeds ? m.required : m.peak) / static_cast<double>(m.capacity);
  d.message = "predicted peak memory " + core::format_bytes(exceeds ? m.required : m.peak) + " per GPU (" +
              memory_parts(m) + ") is " + percent(need) + " of " + plan.cluster.gpu.name + "'s " +
              core::format_bytes(m.capacity) +
              (plan.gpu_given ? ""
                              : " (the plan names no GPU: " + plan.cluster.gpu.name +
                                    " assumed; give --gpu or cluster.gpu)") +
              (exceeds ? ": what must stay resident does not fit, whatever the allocator releases"
                       : ": less than 10% headroom; the allocator will release its caches and retry (slower "
                         "steps, and an out-of-memory error when fragmentation grows)");
  d.pointer = "/model";
  d.hint = memory_hint(plan, *schedule);
  d.witness = core::Witness{{}, {}, {{"peak_bytes", m.peak}, {"required_bytes", m.required},
                                     {"capacity_bytes", m.capacity}, {"allocated_bytes", m.peak_allocated},
                                     {"reserved_bytes", m.peak_reserved}, {"params_bytes", m.params},
                                     {"grads_bytes", m.grads}, {"optimizer_bytes", m.optimizer},
                                     {"activations_bytes", m.activations}}};
  out.add(std::move(d));
}

void check_sync(const core::CheckContext& ctx, core::Diagnostics& out) {
  const core::Plan& plan = ctx.plan;
  if (!plan.model || !ctx.mesh || !plan.training) return;
  if (plan.training->grad_sync != core::GradSync::kEveryMicrobatch) return;
  auto every = core::lower(plan, *ctx.mesh, core::GradSync::kEveryMicrobatch);
  if (!every) return;
  const core::DataParallel dp = every->data_parallel;
  // ZeRO-2 reduce-scatters every micro-batch by design (DeepSpeed stage_1_and_2.py), and a plan
  // without data parallelism has nothing to sync.
  if (dp == core::DataParallel::kZero2 || dp == core::DataParallel::kNone) return;
  if (every->micro_batches <= 1) return;
  // Where gradients are sharded (fsdp, zero3, hsdp), the per-micro-batch reduce-scatter is what
  // keeps them sharded: deferring it accumulates unsharded gradients. That is a memory trade, not
  // a mistake, unless the unsharded gradients fit: the rule proposes last_microbatch only when its
  // peak stays under memory-tight's threshold, else (hsdp) last_microbatch_replicate, which keeps
  // the reduce-scatter and defers only the all-reduce across replicas, else nothing.
  const bool sharded_grads =
      dp == core::DataParallel::kFsdp || dp == core::DataParallel::kZero3 || dp == core::DataParallel::kHsdp;
  // DeepSpeed ZeRO-3 cannot defer its reduce-scatter (engine.no_sync() asserts on stages 2 and 3,
  // runtime/engine.py): the alternative is ZeRO stage 1, whole parameters and gradients with the
  // optimizer state sharded, syncing once per step.
  const bool zero3 = dp == core::DataParallel::kZero3;
  core::Plan stage1;
  if (zero3) {
    stage1 = plan;
    stage1.parallelism.data_parallel = core::DataParallel::kZero1;
  }
  const core::Plan& alt_plan = zero3 ? stage1 : plan;
  auto alt_sync = core::GradSync::kLastMicrobatch;
  auto last = core::lower(alt_plan, *ctx.mesh, alt_sync);
  if (!last) return;
  const Memory m_every = memory(plan, *ctx.mesh, *every), m_last = memory(alt_plan, *ctx.mesh, *last);
  const bool last_fits =
      m_last.capacity <= 0 || static_cast<double>(m_last.peak) <= kTightFraction * static_cast<double>(m_last.capacity);
  if (sharded_grads && !last_fits) {
    if (dp != core::DataParallel::kHsdp) return;
    alt_sync = core::GradSync::kLastMicrobatchReplicate;
    last = core::lower(plan, *ctx.mesh, alt_sync);
    if (!last) return;
  }
  const std::int64_t b_every = ring_bytes(plan, *ctx.mesh, *every), b_last = ring_bytes(alt_plan, *ctx.mesh, *last);
  const std::int64_t extra = b_every - b_last;
  if (extra <= 0) return;
  const std::int64_t extra_mem = alt_sync == core::GradSync::kLastMicrobatch ? m_last.peak - m_every.peak : 0;
  const std::string k = std::to_string(every->micro_batches);
  const std::string alt_name = zero3 ? "ZeRO stage 1 syncing on the last"
                               : alt_sync == core::GradSync::kLastMicrobatch ? "last_microbatch"
                                                                             : "last_microbatch_replicate";
  Diagnostic d;
  d.rule = "sync-every-microbatch";
  d.severity = Severity::kWarning;
  d.message = std::string(core::to_string(dp)) + " synchronises gradients on every one of " + k +
              " micro-batches: each rank sends " + std::to_string(b_every) + " bytes per step instead of " +
              std::to_string(b_last) + " with " + alt_name + ", " + std::to_string(extra) + " bytes (" +
              core::format_bytes(extra) + ") more per step";
  d.pointer = "/training/grad_sync";
  std::string hint;
  if (alt_sync == core::GradSync::kLastMicrobatchReplicate) {
    hint =
        "set \"grad_sync\": \"last_microbatch_replicate\" (FSDP2 set_requires_all_reduce(False) on all but the "
        "last micro-batch): reduce-scatter every micro-batch, all-reduce across replicas only on the last; "
        "last_microbatch would not fit (" +
        core::format_bytes(m_last.peak) + " peak per GPU)";
  } else if (zero3) {
    hint = "DeepSpeed defers no ZeRO-3 gradient sync (engine.no_sync() refuses stages 2 and 3): set \"data_parallel\": "
           "\"zero1\" and \"grad_sync\": \"last_microbatch\" (ZeRO stage 1, whole parameters and gradients, the "
           "optimizer state sharded)";
  } else if (dp == core::DataParallel::kDdp) {
    hint = "set \"grad_sync\": \"last_microbatch\" (DDP no_sync() on the first " +
           std::to_string(every->micro_batches - 1) + " micro-batches)";
  } else {
    // Megatron-FSDP's no_sync() has no effect while gradients are sharded (optim_grads,
    // optim_grads_params): its "optim" strategy keeps whole gradients and syncs once per step.
    // DeepSpeed's no_sync() refuses ZeRO stages 2 and 3; stage 1 keeps whole gradients.
    hint =
        "set \"grad_sync\": \"last_microbatch\" (FSDP2: set_requires_gradient_sync(False) on all but the last "
        "micro-batch; Megatron-FSDP: --data-parallel-sharding-strategy optim, since no_sync() does not defer "
        "sharded gradients; DeepSpeed: ZeRO stage 1)";
  }
  if (extra_mem > 0) {
    hint += std::string("; it keeps unsharded ") + (zero3 ? "parameters and gradients" : "gradients") + ": +" +
            core::format_bytes(extra_mem) + " peak per GPU";
  }
  if (dp == core::DataParallel::kHsdp && alt_sync == core::GradSync::kLastMicrobatch) {
    hint += "; or \"last_microbatch_replicate\" (set_requires_all_reduce(False)): reduce-scatter every micro-batch, "
            "all-reduce only on the last";
  }
  d.hint = hint;
  d.witness = core::Witness{{}, {}, {{"extra_bytes_per_step", extra}, {"bytes_per_step", b_every},
                                     {"bytes_per_step_last_microbatch", b_last},
                                     {"micro_batches", every->micro_batches}}};
  out.add(std::move(d));
}

// Fewer micro-batches than pipeline stages leaves stages idle (torchtitan warns "Number of
// microbatches ... is less than the total number of stages ... may result in a bubble"), and a
// bubble above kBubbleThreshold wastes a third of the step even when every stage gets work.
void check_bubble(const core::CheckContext& ctx, core::Diagnostics& out) {
  const core::Plan& plan = ctx.plan;
  const std::int64_t pp = ctx.mesh->size("pp");
  if (pp <= 1) return;
  const auto m = core::micro_batches_per_step(plan, *ctx.mesh);
  if (!m) return;
  const std::int64_t v = core::pipeline_chunks(plan, pp), stages = pp * v;
  const auto sched = plan.parallelism.pipeline_schedule.value_or(core::PipelineSchedule::k1F1B);
  const double bubble = bubble_fraction(sched, pp, v, *m);
  const bool idle = *m < stages;
  if (!idle && bubble <= kBubbleThreshold) return;
  char frac[32];
  std::snprintf(frac, sizeof frac, "%.2f", bubble);
  std::string msg = core::str_cat(std::to_string(*m), *m == 1 ? " micro-batch" : " micro-batches",
                                  " per step through pp ", std::to_string(pp), " x ", std::to_string(v),
                                  v == 1 ? " chunk" : " chunks", " per rank = ", std::to_string(stages), " stages (",
                                  core::to_string(sched), "): ");
  if (idle) {
    msg += core::str_cat("fewer micro-batches than stages, so at most ", std::to_string(*m), " of the ",
                         std::to_string(stages), " stages work at any moment; ");
  }
  msg += core::str_cat("the pipeline bubble is ", frac, " of the ideal compute time");
  core::Diagnostic d;
  d.rule = "pipeline-bubble";
  d.severity = Severity::kWarning;
  d.message = std::move(msg);
  d.pointer = plan.training && plan.training->grad_accumulation ? "/training/grad_accumulation"
              : plan.training && plan.training->global_batch   ? "/training/global_batch"
                                                               : "/mesh/shape";
  // Interleaved 1F1B's bubble (p-1)/(v m) is at most kBubbleThreshold = 1/2 from m >= 2(p-1)/v.
  const std::int64_t want = std::max<std::int64_t>(stages, (2 * (pp - 1) + v - 1) / v);
  d.hint = core::str_cat("raise the micro-batches per step to at least ", std::to_string(want)) +
           " (a larger global_batch or a smaller micro_batch), lower pp, or use an interleaved or zero-bubble "
           "pipeline_schedule";
  d.witness = core::Witness{{}, {}, {{"micro_batches", *m}, {"pp", pp}, {"virtual_stages", v}}};
  out.add(std::move(d));
}

// FP8 on a GPU without FP8 tensor cores (compute capability below 8.9: A100), or MX blocks without
// MX tensor cores: Transformer Engine's fp8_autocast asserts check_fp8_support() / MXFP8 support at
// start-up; torchtitan's Float8 converter raises ValueError below SM89 unless float8.emulate
// (components/quantization/float8.py, since pytorch/torchtitan#1214, 2025-05-28; before it warned
// and ran bf16).
void check_fp8(const core::CheckContext& ctx, core::Diagnostics& out) {
  const core::Plan& plan = ctx.plan;
  if (!plan.training || plan.training->fp8 == core::Fp8Recipe::kNone) return;
  const core::GpuSpec& gpu = plan.cluster.gpu;
  const bool mx = plan.training->fp8 == core::Fp8Recipe::kMxfp8;
  const bool no_fp8 = gpu.fp8_tflops <= 0;
  if (!no_fp8 && (!mx || core::mx_tensor_cores(gpu))) return;
  Diagnostic d;
  d.rule = "fp8-unsupported";
  // A verdict on a GPU the plan does not name rests on the assumption: a warning that says so.
  d.severity = plan.gpu_given ? Severity::kError : Severity::kWarning;
  d.pointer = "/training/fp8";
  d.message = std::string("training.fp8 ") + core::to_string(plan.training->fp8) + " on " + gpu.name +
              (plan.gpu_given ? "" : " (the plan names no GPU: " + gpu.name + " assumed; give --gpu or cluster.gpu)") +
              (no_fp8 ? ", which has no FP8 tensor cores: Transformer Engine refuses FP8 at start-up, and torchtitan "
                        "raises unless float8.emulate (it ran bf16 with a warning before 2025-05-28)"
                      : ", which has FP8 but no MX tensor cores: Transformer Engine refuses MXFP8 at start-up, and "
                        "torchtitan's MX converter raises below SM100") +
              "; simulate prices the linears " + (no_fp8 ? "in bf16" : "as FP8");
  d.hint = no_fp8 ? "run in bf16 (drop training.fp8), or give a GPU with FP8 tensor cores (h100-sxm, b200, mi300x)"
                  : "use tensorwise or blockwise scaling here, or give a GPU with MX tensor cores (b200, mi355x)";
  out.add(std::move(d));
}

}  // namespace

std::optional<std::int64_t> sync_extra_bytes_per_step(const core::Plan& plan, const core::Mesh& mesh) {
  auto now = core::lower(plan, mesh);
  auto last = core::lower(plan, mesh, core::GradSync::kLastMicrobatch);
  if (!now || !last) return std::nullopt;
  return ring_bytes(plan, mesh, *now) - ring_bytes(plan, mesh, *last);
}

void add_sim_checks(core::CheckRegistry& registry) {
  core::Check mem;
  mem.name = "memory";
  // Activations scale with the sequence: without training.seq_len the verdict would rest on an
  // assumed length, so the rules need it (checks-skipped names them).
  mem.rules = {{"memory-exceeds", Severity::kError, "predicted peak memory per GPU exceeds its capacity",
                {core::kInputModel, core::kInputSeqLen}},
               {"memory-tight", Severity::kWarning, "predicted peak memory per GPU above 90% of its capacity",
                {core::kInputModel, core::kInputSeqLen}}};
  mem.run = check_memory;
  registry.add(std::move(mem));
  core::Check sync;
  sync.name = "grad-sync";
  sync.rules = {{"sync-every-microbatch", Severity::kWarning,
                 "gradients synchronised on every micro-batch while accumulating (bytes per step it costs)", {core::kInputModel}}};
  sync.run = check_sync;
  registry.add(std::move(sync));
  core::Check bubble;
  bubble.name = "pipeline";
  bubble.rules = {{"pipeline-bubble", Severity::kWarning,
                   "fewer micro-batches per step than pp x virtual stages, or a pipeline bubble above 0.5 of the "
                   "ideal compute time",
                   {core::kInputGlobalBatch}}};
  bubble.run = check_bubble;
  registry.add(std::move(bubble));
  core::Check fp8;
  fp8.name = "fp8";
  fp8.rules = {{"fp8-unsupported", Severity::kError,
                "training.fp8 on a GPU without FP8 tensor cores (or MX scaling without MX tensor cores)", {}}};
  fp8.needs_mesh = false;
  fp8.run = check_fp8;
  registry.add(std::move(fp8));
}

}  // namespace planck::sim
