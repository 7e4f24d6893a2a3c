// A Megatron-DeepSpeed launch's ZeRO stage, offload and precision: the DeepSpeed engine is built
// from the ds_config dict (the fork's megatron/training.py:73-87 _create_ds_config_dict loads
// --deepspeed_config; :606-625 deepspeed.initialize(config=args.deepspeed_config_dict)), so its
// zero_optimization.stage is the stage; --zero-stage only turns on deepspeed.zero.Init for stage 3
// at model construction (pretrain_gpt.py:46-50) and the optimizer-state statistics
// (training.py:1056). The ds_config is read by the DeepSpeed importer (import/deepspeed), over the
// fork's data-parallel size: the engine's dp is world / (tp x pp x sp) (arguments.py:98-108).

#include <set>
#include <string>

#include "import/importer.h"
#include "import/megatron/deepspeed_fork.h"

namespace planck::import {
namespace {

const char* const kStages[] = {"ddp", "zero1", "zero2", "zero3"};

// The engine's own reading of the ds_config, merged: its findings (unknown keys, unpriced
// offload / activation-checkpointing options) where they are written, and its notes.
std::string merge_engine(const ImportResult& ds, PlanBuilder& b) {
  for (const ImportFinding& fnd : ds.findings) b.finding(fnd.rule, fnd.line, fnd.message, fnd.file, fnd.pointer);
  std::set<std::string> said;
  for (const ImportFinding& fnd : ds.findings) said.insert(fnd.message);
  for (const std::string& w : ds.warnings) {
    bool finding = false;
    for (const std::string& m : said) finding = finding || w.find(m) != std::string::npos;
    // The model is the Megatron flags' here; the cluster is the launch's.
    if (finding || w.find("do not describe the model") != std::string::npos || w.find("cluster") != std::string::npos)
      continue;
    b.warn("ds_config: " + w);
  }
  for (const std::string& n : ds.notes) {
    if (n.rfind("imported by", 0) == 0 || n.rfind("warning:", 0) == 0 || n.find("cluster") != std::string::npos ||
        n.find("--nodes") != std::string::npos || n.find("--gpus-per-node") != std::string::npos ||
        n.find("data-parallel group rank") != std::string::npos)
      continue;
    b.note("ds_config: " + n);
  }
  const auto& par = ds.plan.value("parallelism", nlohmann::ordered_json::object());
  std::string dp = par.value("data_parallel", std::string("ddp"));
  if (dp == "hsdp") {
    b.unmodelled("zero_optimization.mics_shard_size", 0, "MiCS priced as ZeRO-3 over the whole data-parallel group");
    dp = "zero3";
  }
  auto& t = b.plan()["training"];
  const auto& dt = ds.plan.value("training", nlohmann::ordered_json::object());
  for (const char* key : {"grad_sync", "param_dtype", "reduce_dtype", "grad_accum_dtype", "master_dtype",
                          "optimizer_state_dtype", "offload_optimizer", "offload_params"}) {
    if (dt.contains(key)) t[key] = dt[key];
  }
  for (const char* key : {"/training/offload_optimizer", "/training/offload_params"}) {
    if (auto it = ds.positions.find(key); it != ds.positions.end() && ds.source_path == b.path())
      b.locate(key, it->second);
  }
  return dp;
}

}  // namespace

core::Status read_deepspeed_zero(const MegatronFlags& f, PlanBuilder& b, const MegatronDegrees& d,
                                 const MegatronLaunch& launch, const ShellScript& script, std::string_view text) {
  PLANCK_IMPORT_TRY(flag_stage, f.integer("zero-stage"));
  const std::string cfg_flag = f.has("deepspeed-config") ? "deepspeed-config" : "deepscale-config";
  const std::optional<std::string> cfg = f.string(cfg_flag);
  std::optional<std::string> engine;  // data_parallel from the ds_config
  if (cfg) {
    DsConfigText found = find_ds_config(*cfg, script, text, b.path());
    if (!found.text.empty()) {
      ImportOptions o;
      o.nodes = 1;
      o.gpus_per_node = d.dp > 0 ? d.dp : 1;
      auto ds = import_deepspeed(found.text, found.path, o);
      if (!ds) {
        b.unmodelled("--" + cfg_flag + " " + *cfg, f.line(cfg_flag), "not read (" + ds.message() + ")");
      } else {
        b.note("ds_config " + *cfg +
               (found.path == b.path() ? " from the script's here-document" : " from " + found.path) +
               ", read over the engine's dp " + str(d.dp) + " = world / (tp x pp x sp)");
        if (!found.why.empty()) b.warn("ds_config " + *cfg + ": " + found.why + "; it expands to nothing, as in bash");
        engine = merge_engine(*ds, b);
      }
    } else {
      b.unmodelled("--" + cfg_flag + " " + *cfg, f.line(cfg_flag), "not read: " + found.why);
    }
  } else {
    b.warn(
        "--deepspeed without --deepspeed_config: DeepSpeed needs a config (the fork's _create_ds_config_dict "
        "opens args.deepspeed_config)");
  }
  auto& par = b.plan()["parallelism"];
  std::string dp;
  if (engine) {
    dp = *engine;
    if (flag_stage && *flag_stage >= 0 && *flag_stage <= 3 && kStages[*flag_stage] != dp) {
      b.warn("--zero-stage " + str(*flag_stage) + " but the ds_config's zero_optimization gives " + dp +
             ": the engine runs the ds_config's stage (training.py:606-625); --zero-stage only switches "
             "deepspeed.zero.Init at model construction (pretrain_gpt.py:46-50)");
    }
  } else if (flag_stage && *flag_stage >= 0 && *flag_stage <= 3) {
    dp = kStages[*flag_stage];
    b.unmodelled("ZeRO stage of the unread ds_config", f.line("zero-stage"),
                 "priced as --zero-stage " + str(*flag_stage) + " (" + dp + "), the stage the script passes the fork");
    if (*flag_stage >= 2) b.plan()["training"]["grad_sync"] = "every_microbatch";
  } else {
    dp = "ddp";
    b.unmodelled("ZeRO stage of the unread ds_config", cfg ? f.line(cfg_flag) : 0,
                 "priced as stage 0 (ddp: full optimizer state on every rank), DeepSpeed's default without "
                 "zero_optimization; pass the config beside the script to read it");
  }
  // GPTModelPipe under DeepSpeed's PipelineEngine: what the entry script builds (deepspeed_fork.h).
  const bool pipe_engine = builds_gpt_model_pipe(launch);
  const std::string entry = launch.script.substr(launch.script.rfind('/') + 1);
  // A bf16 model under the PipelineEngine without ZeRO runs BF16_Optimizer (deepspeed/runtime/
  // engine.py _do_optimizer_sanity_check -> BFLOAT16 @edaa722), which keeps the fp32 master
  // weights and the optimizer's states as a 1/dp partition (bf16_optimizer.py:161-171): ZeRO-1's
  // memory (BLOOM's "bf16 must use z0! it implements its own zero stage 1 equivalent").
  if (pipe_engine && dp == "ddp" && b.plan()["training"].value("param_dtype", std::string()) == "bf16") {
    dp = "zero1";
    b.note("bf16 with ZeRO stage 0 under DeepSpeed's PipelineEngine (" + entry +
           " builds GPTModelPipe): BF16_Optimizer partitions the fp32 master weights and optimizer states over the "
           "data-parallel group (ZeRO-1)");
    // BLOOM's DeepSpeed (bigscience-workshop's branch, before v0.12.5 added data_types' bf16
    // accumulation, deepspeedai/DeepSpeed#4713) always accumulates into a full fp32 buffer.
    if (runs_bigscience_fork(launch)) {
      b.plan()["training"]["grad_accum_dtype"] = "fp32";
      b.note("grad_accum_dtype = fp32: BLOOM's BF16_Optimizer accumulates gradients in a full fp32 buffer (4 bytes "
             "a parameter, not sharded)");
    }
  }
  par["data_parallel"] = dp;
  par.erase("dp_bucket_params");
  par.erase("overlap_param_gather");
  b.locate("/parallelism/data_parallel", engine ? 0 : f.line("zero-stage"));
  b.note("DeepSpeed " + dp + " over the data-parallel group (the engine reduces gradients " +
         (dp == "zero2" || dp == "zero3" ? "in every backward" : "at the accumulation boundary") + ")");
  // The PipelineEngine asserts stage < 2 (deepspeed/runtime/pipe/engine.py:76-77 @edaa722).
  if (pipe_engine && (dp == "zero2" || dp == "zero3")) {
    return b.error(f.line(cfg_flag),
                   "ZeRO " + dp.substr(4) +
                       " without --no-pipeline-parallel: " + entry +
                       " builds GPTModelPipe and DeepSpeed's PipelineEngine asserts \"ZeRO-2 and ZeRO-3 are "
                       "incompatible with pipeline parallelism\" (deepspeed/runtime/pipe/engine.py:76)");
  }
  if (f.has("cpu-optimizer") && !b.plan()["training"].contains("offload_optimizer")) {
    b.unmodelled("--cpu-optimizer", f.line("cpu-optimizer"),
                 "DeepSpeedCPUAdam's step on the host without the ds_config's offload_optimizer: optimizer state "
                 "priced on the GPU");
  } else if (f.has("cpu-optimizer")) {
    b.note("--cpu-optimizer: DeepSpeedCPUAdam steps the offloaded optimizer state on the host");
  }
  return core::Status::ok();
}

}  // namespace planck::import
