// torchtitan's [training] keys -> the plan's "training" object (torchtitan train.py semantics).

#include <algorithm>
#include <cctype>
#include <string>

#include "import/torchtitan/common.h"

namespace planck::import {

// [training] batch keys (train.py): global_batch_size = -1 means local x dp degree; gradient
// accumulation = global / (local x dp degree), asserted to divide. Under PP the local batch is
// cut into local / pipeline_parallel_microbatch_size pipeline micro-batches.
namespace {

// torchao Float8 training of the linear layers (training.fp8): torchtitan turns it on with a
// model converter, "float8" and later "quantize.linear.float8" ([model] converters), whose
// recipe_name in [quantize.linear.float8] (earlier [float8]) is tensorwise by default, or rowwise
// / rowwise_with_gw_hp (torchtitan/components/quantization/float8.py); before converters it was
// [float8] enable_float8_linear, and before that [training] enable_float8_linear / enable_fp8_linear.
// Returns the recipe, "" when FP8 is off.
core::Result<std::string> read_float8(TomlReader& r, PlanBuilder& b) {
  bool float8 = false, mx = false, grouped = false;
  int line = 0;
  auto conv = r.strings_in("model", "converters");
  if (!conv) return conv.status();
  if (conv->has_value()) {
    for (const std::string& c : (*conv)->value) {
      if (c == "float8" || c == "quantize.linear.float8") {
        float8 = true;
      } else if (c == "mx" || c == "quantize.linear.mx") {
        mx = true;
      } else if (c.rfind("quantize.grouped_mm.", 0) == 0) {
        grouped = true;
      } else {
        b.unmodelled("model converter '" + c + "'", (*conv)->line, "the model is priced without it");
        continue;
      }
      line = (*conv)->line;
    }
  }
  for (auto [section, key] : {std::pair{"float8", "enable_float8_linear"}, std::pair{"training", "enable_float8_linear"},
                              std::pair{"training", "enable_fp8_linear"}}) {
    auto v = r.bool_in(section, key);
    if (!v) return v.status();
    if (v->value_or(false)) float8 = true;
  }
  if (!float8 && !mx) return std::string();
  // MX blocks of 32 (torchao MXLinear, Blackwell); otherwise torchao Float8 by recipe_name.
  std::string recipe = mx ? "mxfp8" : "tensorwise";
  for (const char* section : {"quantize.linear.float8", "float8"}) {
    if (mx) break;
    auto name = r.string_in(section, "recipe_name");
    if (!name) return name.status();
    if (!name->has_value()) continue;
    const std::string n = lower((*name)->value);
    line = (*name)->line;
    if (n == "rowwise" || n == "rowwise_with_gw_hp") {
      recipe = "rowwise";
    } else if (n != "tensorwise") {
      b.warn("float8 recipe_name '" + (*name)->value + "' is not one torchtitan defines; priced as tensorwise");
    }
    break;
  }
  if (line > 0) b.locate("/training/fp8", line);
  b.note(std::string(mx ? "MX" : "float8") + " linears (torchao " + recipe + "): training.fp8 = " + recipe +
         "; weights and activations stay in the mixed-precision dtype");
  if (!grouped) {
    b.note("an MoE model's routed experts are priced in FP8 too, though torchtitan quantises them only with a "
           "quantize.grouped_mm converter");
  }
  for (const char* section : {"quantize.linear.float8", "float8"}) {
    auto ag = r.bool_in(section, "enable_fsdp_float8_all_gather");
    if (!ag) return ag.status();
    if (ag->value_or(false)) {
      // torchao's float8 FSDP all-gather casts each linear's weight shard to FP8 before the
      // gather (torchao/float8/fsdp_utils.py WeightWithDynamicFloat8CastTensor).
      b.plan()["parallelism"]["fp8_param_gather"] = true;
      b.note("enable_fsdp_float8_all_gather: FSDP all-gathers the blocks' weights as FP8 (1 byte a parameter)");
      break;
    }
  }
  return recipe;
}

// torchtitan refuses a local batch its pipeline micro-batches do not divide, before the first step:
// pytorch/torchtitan@15a832d torchtitan/distributed/pipeline.py:123-127 (the count,
// pipeline_parallel_microbatches or pp x stages per rank; since 95677cb, 2025-01-09; before it
// torch's schedule raised "Expecting N arg_mbs" once the batch was cut into fewer chunks) and
// @d240be0 torchtitan/distributed/pipeline_parallel.py:68-71 (pipeline_parallel_microbatch_size, #1073).
core::Status refuse_microbatches(PlanBuilder& b, const std::optional<TomlInt>& local, std::int64_t local_bs,
                                 const std::optional<TomlInt>& size, const std::optional<TomlInt>& count,
                                 std::int64_t n_mb) {
  const std::string batch = local ? "[" + local->section + "] " + local->key + " " + std::to_string(local_bs)
                                  : "the local batch " + std::to_string(local_bs) + " (torchtitan's default)";
  if (size && !count) {
    return b.error(size->line, batch + " is not divisible by [" + size->section + "] " + size->key + " " +
                                   std::to_string(size->value) + ": torchtitan raises ValueError(\"Batch size ... " +
                                   "must be divisible by microbatch_size\") at start-up (pytorch/torchtitan@d240be0 "
                                   "torchtitan/distributed/pipeline_parallel.py:68-71). Fix: make the local batch a "
                                   "multiple of the micro-batch size");
  }
  const std::string what = count ? "[" + count->section + "] " + count->key + " " + std::to_string(n_mb)
                                 : std::to_string(n_mb) + " pipeline micro-batches (pipeline_parallel_microbatches "
                                   "unset: one per stage, torchtitan's default before #1073)";
  return b.error(count ? count->line : (local ? local->line : 0),
                 batch + " does not split into " + what + ": torchtitan raises ValueError(\"Batch size " +
                     std::to_string(local_bs) + " must be divisible by number of microbatches " +
                     std::to_string(n_mb) + "\") at start-up (pytorch/torchtitan@15a832d torchtitan/distributed/"
                     "pipeline.py:123-127). Fix: make the local batch a multiple of the micro-batch count, or set "
                     "pipeline_parallel_microbatches to a divisor of it");
}

}  // namespace

core::Result<nlohmann::ordered_json> read_torchtitan_training(TomlReader& r, const Degrees& d, std::int64_t dps_known) {
  PlanBuilder& b = r.builder();
  nlohmann::ordered_json t;
  auto local_new = r.int_in("training", "local_batch_size");
  if (!local_new) return local_new.status();
  auto local_old = r.int_in("training", "batch_size");
  if (!local_old) return local_old.status();
  auto global_r = r.int_in("training", "global_batch_size");
  if (!global_r) return global_r.status();
  auto seq_r = r.int_in("training", "seq_len");
  if (!seq_r) return seq_r.status();
  auto mbs_r = r.int_in("parallelism", "pipeline_parallel_microbatch_size");
  if (!mbs_r) return mbs_r.status();
  // The micro-batch count: [experimental] before #980 (2025-03), [parallelism] until #1073 (2025-04-07).
  auto nmb_r = r.first_int({"parallelism", "experimental"}, "pipeline_parallel_microbatches");
  if (!nmb_r) return nmb_r.status();

  std::optional<TomlInt> local = local_new->has_value() ? *local_new : *local_old;
  const std::int64_t local_bs = local ? local->value : 8;  // job_config default
  if (!local) b.note("local_batch_size not set: torchtitan default 8");
  const int local_line = local ? local->line : 0;
  b.locate("/training", local_line);
  b.locate("/training/micro_batch", local_line);
  b.locate("/training/grad_accumulation", local_line);
  b.locate("/training/global_batch", global_r->has_value() ? (*global_r)->line : local_line);
  if (seq_r->has_value()) b.locate("/training/seq_len", (*seq_r)->line);
  for (const auto* v : {&local, &*seq_r, &*mbs_r, &*nmb_r}) {
    if (v->has_value() && (*v)->value < 1) {
      return b.error((*v)->line,
                     "[" + (*v)->section + "] " + (*v)->key + " = " + std::to_string((*v)->value) + " must be >= 1");
    }
  }
  std::int64_t accum = 1;
  bool accum_known = dps_known != -1;
  std::optional<std::int64_t> global;
  if (global_r->has_value() && (*global_r)->value == 0) {
    return b.error((*global_r)->line, "global_batch_size = 0: torchtitan asserts global_batch_size > 0");
  }
  if (dps_known != -1) {
    auto dp = checked_mul(d.dpr, dps_known);
    auto per_step = dp ? checked_mul(local_bs, *dp) : std::nullopt;
    if (!per_step) return b.error(0, "local_batch_size x data-parallel degree overflows a 64-bit integer");
    if (!global_r->has_value() || (*global_r)->value < 0) {
      global = *per_step;
      b.note("global batch = local_batch_size " + std::to_string(local_bs) + " x dp degree " + std::to_string(*dp) +
             " = " + std::to_string(*global) + " (global_batch_size unset or -1)");
    } else {
      global = (*global_r)->value;
      if (*global % *per_step == 0) {
        accum = *global / *per_step;
        b.note("gradient accumulation = global " + std::to_string(*global) + " / (local " + std::to_string(local_bs) +
               " x dp " + std::to_string(*dp) + ") = " + std::to_string(accum) + " (torchtitan train.py)");
      } else {
        accum_known = false;
        b.warn("global_batch_size " + std::to_string(*global) + " is not a multiple of local_batch_size " +
               std::to_string(local_bs) + " x dp degree " + std::to_string(*dp) +
               ": torchtitan's assertion fails; `planck verify` reports it");
      }
    }
  } else if (global_r->has_value() && (*global_r)->value > 0) {
    global = (*global_r)->value;
  }
  if (global) t["global_batch"] = *global;

  if (d.pp > 1) {
    std::int64_t n_mb = 0;
    std::int64_t mbs = mbs_r->has_value() ? (*mbs_r)->value : 1;
    if (nmb_r->has_value()) {  // before #980: the number of micro-batches, not their size
      n_mb = (*nmb_r)->value;
      if (local_bs % n_mb == 0) mbs = local_bs / n_mb;
    } else if (!mbs_r->has_value() && d.pp_before_980) {
      // Before #1073 an unset count meant one micro-batch per pipeline stage: pp x stages per rank
      // (parallelisms/pipelining_utils.py build_pipeline_schedule since 90567fc, 2025-01-07; pp alone
      // before it, the same for single-stage schedules).
      n_mb = d.pp * d.stages_per_rank;
      if (local_bs % n_mb != 0 && local_bs % d.pp == 0) {
        // Only the later default refuses it: a file of 2024 ran with pp micro-batches.
        b.unmodelled("pipeline_parallel_microbatches (unset)", local ? local->line : 0,
                     "priced as pp " + std::to_string(d.pp) + " micro-batches (torchtitan before 2025-01-07); from "
                     "then on the default is pp x stages a rank = " + std::to_string(n_mb) + ", which the local "
                     "batch " + std::to_string(local_bs) + " does not divide (torchtitan raises ValueError)");
        n_mb = d.pp;
      }
      if (local_bs % n_mb == 0) mbs = local_bs / n_mb;
      b.note("pipeline_parallel_microbatches unset in a file of torchtitan's layout before #980: " +
             std::to_string(n_mb) + " micro-batches, one per pipeline stage (torchtitan's default until #1073, " +
             "2025-04-07" + std::string(d.stages_per_rank > 1 ? "; pp alone before 2025-01-07" : "") + ")");
    } else {
      if (!mbs_r->has_value()) {
        b.note("pipeline_parallel_microbatch_size unset: 1 (torchtitan's default since #1073, 2025-04-07; before "
               "it an unset pipeline_parallel_microbatches meant one micro-batch per stage)");
      }
      if (local_bs % mbs == 0) n_mb = local_bs / mbs;
    }
    if (n_mb == 0 || local_bs % n_mb != 0) return refuse_microbatches(b, local, local_bs, *mbs_r, *nmb_r, n_mb);
    t["micro_batch"] = mbs;
    if (accum_known) {
      t["grad_accumulation"] = accum * n_mb;
      b.note("pipeline: " + std::to_string(n_mb) + " micro-batches of " + std::to_string(mbs) + " per local batch" +
             (accum > 1 ? " x " + std::to_string(accum) + " accumulation steps" : ""));
    }
    // torch.distributed.pipelining defers the gradient reduction to each schedule.step's last backward.
    t["grad_sync"] = "last_microbatch";
  } else {
    t["micro_batch"] = local_bs;
    if (accum_known) t["grad_accumulation"] = accum;
    // train.py's train_step runs forward_backward_step per micro-batch without disabling
    // gradient sync, so FSDP/DDP reduce on every micro-batch.
    t["grad_sync"] = accum > 1 ? "every_microbatch" : "last_microbatch";
    if (accum > 1)
      b.note("grad_sync = every_microbatch: torchtitan's train_step does not disable gradient sync while accumulating");
  }
  t["seq_len"] = seq_r->has_value() ? (*seq_r)->value : 2048;
  if (!seq_r->has_value()) b.note("seq_len not set: torchtitan default 2048");

  for (const char* key : {"mixed_precision_param", "mixed_precision_reduce"}) {
    auto v = r.string_in("training", key);
    if (!v) return v.status();
    if (!v->has_value()) continue;
    auto dt = core::parse_dtype((*v)->value);
    if (!dt) return b.error((*v)->line, std::string("[training] ") + key + " = '" + (*v)->value + "' is not a dtype");
    t[std::string(key) == "mixed_precision_param" ? "param_dtype" : "reduce_dtype"] = core::to_string(*dt);
  }
  // [training] dtype = "bfloat16" (#1646, e99e16c91, 2025-09-16): the model is built in bf16
  // (train.py set_default_dtype), so parameters, gradients and optimizer states are bf16 with no
  // fp32 master copy.
  auto full = r.string_in("training", "dtype");
  if (!full) return full.status();
  if (full->has_value() && lower((*full)->value) == "bfloat16") {
    t["param_dtype"] = "bf16";
    t["reduce_dtype"] = "bf16";
    t["master_dtype"] = "none";
    t["optimizer_state_dtype"] = "bf16";
    b.locate("/training/master_dtype", (*full)->line);
    b.note("[training] dtype = \"bfloat16\": full bf16 training, parameters, gradients and optimizer states in bf16 "
           "with no fp32 master (the gradients' reduction priced in bf16 too)");
  } else if (full->has_value() && lower((*full)->value) != "float32") {
    return b.error((*full)->line, "[training] dtype = '" + (*full)->value +
                                      "' is not one of torchtitan's (bfloat16, float32)");
  }
  // [optimizer] early_step_in_backward: each parameter's step runs in its gradient's
  // post-accumulate hook and frees the gradient (OptimizersInBackwardContainer).
  auto early = r.bool_in("optimizer", "early_step_in_backward");
  if (!early) return early.status();
  if (early->value_or(false)) {
    b.unmodelled("[optimizer] early_step_in_backward", r.line_in("optimizer", "early_step_in_backward"),
                 "the optimizer steps inside the backward and frees each gradient as it is made; priced with the "
                 "whole gradient shard held until the step");
  }
  if (auto fp8 = read_float8(r, b); !fp8) {
    return fp8.status();
  } else if (!fp8->empty()) {
    t["fp8"] = *fp8;
  }
  // The stack: torch.compile fuses the memory-bound ops ([compile] enable = true in current
  // torchtitan, [training] compile = true before the [compile] section existed); eager otherwise.
  // [compile] components (pytorch/torchtitan@08b8b244, default ["model", "loss"]) says what is
  // compiled: the model (the stack) and the loss (training.cross_entropy, which the memory model
  // reads; docs/simulator.md "The loss"), e.g. Kimi K2.5's registry compiles the loss only.
  bool compiled = false;
  for (auto [section, key] : {std::pair{"compile", "enable"}, std::pair{"training", "compile"}}) {
    auto v = r.bool_in(section, key);
    if (!v) return v.status();
    if (v->value_or(false)) compiled = true;
  }
  bool model = compiled, loss = compiled;
  auto components = r.strings_in("compile", "components");
  if (!components) return components.status();
  if (compiled && components->has_value()) {
    const auto& list = (*components)->value;
    model = std::find(list.begin(), list.end(), "model") != list.end();
    loss = std::find(list.begin(), list.end(), "loss") != list.end();
  }
  t["stack"] = model ? "torchtitan_compile" : "torchtitan_eager";
  if (loss != model) t["cross_entropy"] = loss ? "compiled" : "eager";
  // [training] enable_cpu_offload: FSDP2's CPUOffloadPolicy on every fully_shard
  // (torchtitan/distributed/fsdp.py): parameter shards, gradients and optimizer states in host
  // memory, the optimizer step on the CPU.
  auto offload = r.bool_in("training", "enable_cpu_offload");
  if (!offload) return offload.status();
  if (offload->value_or(false)) {
    t["offload_optimizer"] = "cpu";
    t["offload_params"] = "cpu";
    b.note("enable_cpu_offload: FSDP2 CPUOffloadPolicy, parameter shards, gradients and optimizer states in host "
           "memory (the host link priced per step)");
  }
  // LoRA (a registry's LoRAConverter, registry.cc): adapters train, weights frozen.
  auto lora = r.int_in("lora", "rank");
  if (!lora) return lora.status();
  if (lora->has_value() && (*lora)->value > 0) {
    t["lora_rank"] = (*lora)->value;
    b.note("LoRA rank " + std::to_string((*lora)->value) + ": base weights frozen, adapters trained");
    auto targets = r.strings_in("lora", "targets");
    if (!targets) return targets.status();
    if (targets->has_value()) t["lora_targets"] = (*targets)->value;
  }
  auto opt = r.string_in("optimizer", "name");
  if (!opt) return opt.status();
  if (opt->has_value()) {
    std::string o = lower((*opt)->value);
    if (o == "adamw" || o == "adam") {
      t["optimizer"] = o;
    } else if (o == "muon" || o == "distmuon") {
      // torchtitan's DistMuon: one momentum buffer for matrices, AdamW for the embedding, output
      // layer and norms (Kimi's registry puts those in an AdamW group).
      t["optimizer"] = "muon";
      b.locate("/training/optimizer", (*opt)->line);
      b.note("optimizer " + (*opt)->value + ": Muon's single momentum state (AdamW's two for embedding and output "
             "layer); the Newton-Schulz iterations' FLOPs are not priced");
    } else if (o == "sgd" || o == "lion" || o == "adafactor") {
      t["optimizer"] = o;
    } else {
      b.unmodelled("optimizer " + (*opt)->value, (*opt)->line, "AdamW's states assumed (12 bytes a parameter)");
    }
  }
  auto ac = r.string_in("activation_checkpoint", "mode");
  if (!ac) return ac.status();
  {
    // No mode: torchtitan's default, selective, in every era (config_manager.py default="selective"
    // from c22d1a8d1, 2024-04; job_config.py ActivationCheckpoint.mode; Trainer.Config's
    // SelectiveAC for registries), with its default selective_ac_option below.
    const std::string mode = ac->has_value() ? lower((*ac)->value) : "selective";
    if (ac->has_value()) {
      b.locate("/training/activation_checkpointing", (*ac)->line);
    } else {
      b.note("activation_checkpoint.mode not given: torchtitan's default, selective");
    }
    if (mode == "none" || mode == "full") {
      t["activation_checkpointing"] = mode;
    } else if (mode == "selective") {
      // selective_ac_option (default "2"): "op" is the op-level policy, a number N checkpoints
      // every N-th transformer block in full (layer SAC; 0 or 1: every block;
      // torchtitan/distributed/activation_checkpoint.py _apply_ac_to_transformer_block).
      auto sac = r.string_in("activation_checkpoint", "selective_ac_option");
      if (!sac) return sac.status();
      const std::string o = sac->has_value() ? lower((*sac)->value) : "2";
      const bool digits = !o.empty() && o.size() <= 9 &&
                          std::all_of(o.begin(), o.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
      if (o == "op") {
        t["activation_checkpointing"] = "selective";
      } else if (digits) {
        const std::int64_t n = std::stoll(o);
        t["activation_checkpointing"] = "full";
        if (n > 1) t["recompute_every"] = n;
        b.note("activation_checkpoint.selective_ac_option = \"" + o + "\"" +
               (sac->has_value() ? "" : " (torchtitan's default)") + ": layer SAC, one transformer block in " +
               std::to_string(std::max<std::int64_t>(1, n)) +
               " recomputed in full (training.activation_checkpointing \"full\"" +
               (n > 1 ? ", recompute_every " + std::to_string(n) : std::string()) + ")");
      } else {
        b.locate("/training/activation_checkpointing", (*sac)->line);
        b.warn("activation_checkpoint.selective_ac_option '" + (*sac)->value +
               "' is neither \"op\" nor a whole number (torchtitan raises ValueError); treated as none");
      }
    } else {
      b.unpriced_saving("activation_checkpoint.mode '" + (*ac)->value + "'", (*ac)->line,
                        "no planck equivalent; priced as no checkpointing");
    }
  }
  // model_registry(flavor, num_mtp_layers=N) builds N multi-token prediction blocks after the
  // decoder (torchtitan/models/deepseek_v3 _build_mtp_layers, trained with MTPLoss).
  auto mtp = r.int_in("model", "num_mtp_layers");
  if (!mtp) return mtp.status();
  if (mtp->has_value() && (*mtp)->value > 0) {
    t["mtp_layers"] = (*mtp)->value;
    b.locate("/training/mtp_layers", (*mtp)->line);
    b.note("model_registry(num_mtp_layers=" + std::to_string((*mtp)->value) +
           "): multi-token prediction layers priced on the stage with the loss");
  }
  return t;
}

}  // namespace planck::import
