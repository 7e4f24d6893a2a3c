// A Hugging Face accelerate config (`accelerate launch --config_file FILE`, written by
// `accelerate config`) -> a planck plan: the world, the data-parallel strategy and precision the
// launcher hands the training script (docs/import.md "Hugging Face accelerate").
//
// As huggingface/accelerate@16cb6eb8 reads the file: commands/config/config_args.py (the keys,
// and ValueError on any other), commands/launch.py (each section's keys copied onto the launch
// arguments; torchrun gets nproc_per_node = num_processes // num_machines), utils/launch.py (the
// FSDP_* variables) and utils/dataclasses.py (DeepSpeedPlugin, FullyShardedDataParallelPlugin).
// DEEPSPEED runs are the DeepSpeed config the plugin builds (or the file it names), read by the
// DeepSpeed importer; the model, sequence and batch are the training script's, as for a DeepSpeed
// JSON: --model, --seq-len, --micro-batch / --global-batch give them.

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include "import/accelerate/accelerate.h"
#include "import/accelerate/keys.h"

namespace planck::import {

namespace {

using accelerate::kShardingStrategies;
using accelerate::NdSizes;
using accelerate::scalar;
using str_list = std::vector<std::string>;

bool among(const str_list& list, const std::string& s) { return std::find(list.begin(), list.end(), s) != list.end(); }

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// accelerate's str_to_bool (utils/environment.py): y/yes/t/true/on/1 and n/no/f/false/off/0.
std::optional<bool> truth(const std::string& text) {
  const std::string v = upper(text);
  if (v == "Y" || v == "YES" || v == "T" || v == "TRUE" || v == "ON" || v == "1") return true;
  if (v == "N" || v == "NO" || v == "F" || v == "FALSE" || v == "OFF" || v == "0") return false;
  return std::nullopt;
}

// Each key of a section `name` that accelerate copies onto its launch arguments without reading:
// unknown-key ("accelerate ignores it"). `prefix` is prepended first, as launch.py does for fsdp_.
void check_section(const YAML::Node& root, PlanBuilder& b, const std::string& name, const str_list& known,
                   const std::string& prefix) {
  const YAML::Node sec = root[name];
  if (!sec || !sec.IsMap()) return;
  for (const auto& kv : sec) {
    std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
    if (!prefix.empty() && key.rfind(prefix, 0) != 0) key = prefix + key;
    if (!among(known, key)) b.unknown_key(name + "." + key, YamlReader::line(kv.first), known);
  }
}

// 1-based FSDP1 sharding strategy of a name or number, as FullyShardedDataParallelPlugin maps it;
// 0 when it is neither.
int strategy_of(const std::string& text) {
  const auto it = std::find(kShardingStrategies.begin(), kShardingStrategies.end(), upper(text));
  if (it != kShardingStrategies.end()) return static_cast<int>(it - kShardingStrategies.begin()) + 1;
  if (text.size() == 1 && text[0] >= '1' && text[0] <= '5') return text[0] - '0';
  return 0;
}

// parallelism_config's sizes (accelerate's ParallelismConfig; each defaults to 1), checked as
// _validate_accelerator does: their product is the world (or 1, all replicated).
core::Result<NdSizes> read_parallelism(YamlReader& y, const YAML::Node& root, PlanBuilder& b, const World& w) {
  NdSizes nd;
  const YAML::Node p = root["parallelism_config"];
  if (!p || !p.IsMap() || p.size() == 0) return nd;
  nd.given = true;
  nd.line = y.line_of(root, "parallelism_config");
  for (auto [key, field] : {std::pair<const char*, std::int64_t*>{"parallelism_config_dp_replicate_size", &nd.rep},
                            {"parallelism_config_dp_shard_size", &nd.shard},
                            {"parallelism_config_tp_size", &nd.tp},
                            {"parallelism_config_cp_size", &nd.cp},
                            {"parallelism_config_sp_size", &nd.sp}}) {
    PLANCK_IMPORT_TRY(v, y.integer(p, key, "parallelism_config."));
    if (v && *v < 1) return b.error(y.line_of(p, key), std::string(key) + " must be at least 1 (accelerate raises)");
    *field = v.value_or(1);
  }
  const auto total = checked_product({nd.rep, nd.shard, nd.tp, nd.cp, nd.sp});
  if (!total || (*total != 1 && *total != w.size)) {
    return b.error(nd.line, "parallelism_config's sizes multiply to " + (total ? str(*total) : std::string("overflow")) +
                                " but the world is " + str(w.size) + ": accelerate raises \"ParallelismConfig total_size "
                                "does not match num_processes\" (parallelism_config.py _validate_accelerator)");
  }
  return nd;
}

// The layout and runtime of distributed_type FSDP (and HSDP) into `par` / `t`.
core::Status read_fsdp(YamlReader& y, const YAML::Node& root, PlanBuilder& b, const World& w, const NdSizes& nd,
                       nlohmann::ordered_json& par, nlohmann::ordered_json& t) {
  const YAML::Node f = root["fsdp_config"];
  auto get = [&](const std::string& key) {  // written with or without the fsdp_ prefix
    if (!f || !f.IsMap()) return std::string();
    const std::string bare = key.substr(5);
    return f[key] ? scalar(f, key) : scalar(f, bare);
  };
  auto line = [&](const std::string& key) {
    if (!f || !f.IsMap()) return 0;
    return f[key] ? y.line_of(f, key) : y.line_of(f, key.substr(5));
  };
  const std::string version = get("fsdp_version").empty() ? "1" : get("fsdp_version");
  if (version != "1" && version != "2") {
    return b.error(line("fsdp_version"), "fsdp_config.fsdp_version " + version +
                                             ": accelerate launch takes 1 or 2 (commands/launch.py choices)");
  }
  t["stack"] = version == "2" ? "fsdp2" : "fsdp1";
  int strategy = 1;
  bool reshard = true;
  const std::string named = get("fsdp_sharding_strategy"), after = get("fsdp_reshard_after_forward");
  if (version == "1") {
    // FSDP1 takes FSDP_SHARDING_STRATEGY, which the launcher always sets (default FULL_SHARD);
    // reshard_after_forward is read only when no strategy is (dataclasses.py:1836-1856).
    if (!named.empty()) {
      strategy = strategy_of(named);
      if (strategy == 0) {
        return b.error(line("fsdp_sharding_strategy"),
                       "fsdp_sharding_strategy " + named + ": not one of FULL_SHARD, SHARD_GRAD_OP, NO_SHARD, "
                       "HYBRID_SHARD, HYBRID_SHARD_ZERO2 or 1-5 (torch ShardingStrategy raises KeyError)");
      }
    }
    if (!after.empty() && !truth(after) && strategy_of(after) != strategy) {
      b.finding("import-warning", line("fsdp_reshard_after_forward"),
                "fsdp_reshard_after_forward " + after + " is not used by FSDP1: accelerate launch always passes "
                "fsdp_sharding_strategy (" + kShardingStrategies[static_cast<std::size_t>(strategy) - 1] +
                (named.empty() ? ", its default" : "") + "), which FullyShardedDataParallelPlugin takes first "
                "(utils/dataclasses.py:1836-1848); write fsdp_sharding_strategy " + after);
    }
    reshard = strategy == 1 || strategy == 4;
  } else {
    if (!after.empty()) {
      const auto v = truth(after);
      if (!v) {
        return b.error(line("fsdp_reshard_after_forward"),
                       "fsdp_reshard_after_forward " + after + " with fsdp_version 2: accelerate raises "
                       "(str_to_bool; FSDP2 takes true or false, utils/dataclasses.py:1868-1871)");
      }
      reshard = *v;
    }
    if (!named.empty()) b.note("fsdp_sharding_strategy " + named + " is not read by FSDP2 (reshard_after_forward is)");
  }
  if (nd.given && version != "2") {
    b.unmodelled("parallelism_config with fsdp_version 1", nd.line,
                 "the ParallelismConfig mesh is built for FSDP2; priced as FSDP1 over the whole world");
  }
  if (nd.given && version == "2") {
    accelerate::set_nd_mesh(b, w, nd, par);
  } else if (strategy == 3) {
    b.set_mesh({"dp"}, {w.size});
    par["data_parallel"] = w.size > 1 ? "ddp" : "none";
    b.note("NO_SHARD: FSDP keeps whole parameters on every rank and all-reduces gradients, as DDP");
  } else if (strategy >= 4) {
    // Hybrid sharding without a device mesh: shard within the node, replicate across nodes
    // (torch FSDP _init_intra_and_inter_node_groups).
    b.set_mesh({"dp_replicate", "dp_shard"}, {w.nodes, w.gpus_per_node});
    par["data_parallel"] = "hsdp";
    par["fsdp_dims"] = {"dp_shard"};
    par["replicate_dims"] = {"dp_replicate"};
    b.note(kShardingStrategies[static_cast<std::size_t>(strategy) - 1] +
           ": parameters sharded over each node's GPUs, replicated across the " + str(w.nodes) + " nodes");
  } else {
    b.set_mesh({"dp_shard"}, {w.size});
    par["data_parallel"] = "fsdp";
  }
  par["reshard_after_forward"] = reshard;
  if (!reshard) b.note("parameters stay gathered from forward to backward (SHARD_GRAD_OP / reshard_after_forward false)");
  const auto offload = truth(get("fsdp_offload_params"));
  if (offload.value_or(false)) {
    // FSDP1 CPUOffload(offload_params=True) and FSDP2 CPUOffloadPolicy: parameter and gradient
    // shards on the host, the optimizer step there.
    t["offload_params"] = "cpu";
    t["offload_optimizer"] = "cpu";
    b.locate("/training/offload_params", line("fsdp_offload_params"));
  }
  const auto ckpt = truth(get("fsdp_activation_checkpointing"));
  if (ckpt.value_or(false)) {
    t["activation_checkpointing"] = "full";
    b.locate("/training/activation_checkpointing", line("fsdp_activation_checkpointing"));
  }
  return core::Status::ok();
}

}  // namespace

// The ParallelismConfig device mesh (accelerate parallelism_config.py: mesh_order dp_replicate,
// dp_shard, cp, sp, tp, outer to inner; fully_shard gets (dp_replicate, dp_shard_cp), its
// fsdp_dim_names) as the plan's mesh and data-parallel dims.
void accelerate::set_nd_mesh(PlanBuilder& b, const World& w, const NdSizes& nd, nlohmann::ordered_json& par) {
  std::int64_t rep = nd.rep, shard = nd.shard * nd.sp;
  if (nd.sp > 1) {
    b.unmodelled("parallelism_config_sp_size " + str(nd.sp), nd.line,
                 "sequence parallelism under FSDP priced as data parallelism over those ranks");
  }
  if (rep * shard * nd.cp * nd.tp == 1) rep = w.size;  // a total of 1 replicates over the world
  b.set_mesh({"dp_replicate", "dp_shard", "cp", "tp"}, {rep, shard, nd.cp, nd.tp});
  b.note("parallelism_config: dp_replicate " + str(rep) + " x dp_shard " + str(shard) + " x cp " + str(nd.cp) +
         " x tp " + str(nd.tp) + " (accelerate's ParallelismConfig device mesh)");
  std::vector<std::string> fsdp_dims = {"dp_shard"};
  if (nd.cp > 1) fsdp_dims.push_back("cp");
  const bool sharded = shard > 1 || nd.cp > 1;
  par["data_parallel"] = sharded ? (rep > 1 ? "hsdp" : "fsdp") : (rep > 1 ? "ddp" : "none");
  if (sharded) par["fsdp_dims"] = fsdp_dims;
  if (sharded && rep > 1) par["replicate_dims"] = {"dp_replicate"};
  if (nd.tp > 1) par["sequence_parallel"] = false;
}

core::Result<ImportResult> import_accelerate(std::string_view text, const std::string& path,
                                             const ImportOptions& options) {
  PlanBuilder b("accelerate", path);
  PLANCK_IMPORT_TRY(root, parse_yaml(std::string(text), b));
  if (!root.IsMap()) return b.error(0, "an accelerate config is a YAML mapping (compute_environment, distributed_type)");
  YamlReader y(root, b);
  for (const auto& kv : root) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
    if (among(accelerate::kTopKeys, key)) continue;
    if (among(accelerate::kRemovedTopKeys, key)) {
      b.finding("import-warning", YamlReader::line(kv.first),
                key + " was written by earlier accelerate releases; today's refuses the file (config_args.py: "
                "ValueError \"had unknown keys\"): remove it");
      continue;
    }
    return b.error(YamlReader::line(kv.first),
                   key + " is not an accelerate config key: accelerate launch raises ValueError(\"The config file at "
                   "... had unknown keys\") (commands/config/config_args.py from_yaml_file)");
  }
  check_section(root, b, "deepspeed_config", accelerate::kDeepSpeedKeys, "");
  check_section(root, b, "fsdp_config", accelerate::kFsdpKeys, "fsdp_");
  check_section(root, b, "parallelism_config", accelerate::kParallelismKeys, "");
  const std::string env = scalar(root, "compute_environment");
  if (!env.empty() && env != "LOCAL_MACHINE") {
    return b.error(y.line_of(root, "compute_environment"),
                   "compute_environment " + env + ": a SageMaker launch, which planck does not read (LOCAL_MACHINE "
                   "configs are)");
  }
  const std::string type = scalar(root, "distributed_type");
  const int type_line = y.line_of(root, "distributed_type");
  if (type.empty()) return b.error(0, "no distributed_type: accelerate raises \"A `distributed_type` must be specified\"");
  if (among(accelerate::kOtherDevices, type)) {
    return b.error(type_line, "distributed_type " + type + " launches on CPUs or another vendor's accelerators; "
                              "planck prices NVIDIA and AMD GPUs");
  }
  if (type == "MEGATRON_LM") {
    return b.error(type_line, "distributed_type MEGATRON_LM: accelerate's Megatron-LM plugin (megatron_lm_config) is "
                              "not read; write the run as a Megatron-LM launch script or a planck plan");
  }
  if (type != "NO" && type != "MULTI_GPU" && type != "FSDP" && type != "DEEPSPEED") {
    return b.error(type_line, "distributed_type " + type + " is not one accelerate defines (utils/dataclasses.py "
                              "DistributedType: NO, MULTI_GPU, FSDP, DEEPSPEED, ...)");
  }
  PLANCK_IMPORT_TRY(cpu, y.boolean(root, "use_cpu", "", false));
  if (cpu) return b.error(y.line_of(root, "use_cpu"), "use_cpu true: a CPU run, which planck does not price");

  // The world: num_processes over num_machines, one process a GPU (utils/launch.py: torchrun
  // --nproc_per_node = num_processes // num_machines).
  PLANCK_IMPORT_TRY(machines_v, y.integer(root, "num_machines", ""));
  PLANCK_IMPORT_TRY(procs_v, y.integer(root, "num_processes", ""));
  const std::int64_t machines = machines_v.value_or(1);
  // 0: not stated (absent, or -1, which the launch command line must then give).
  std::int64_t procs = procs_v.value_or(type == "NO" ? 1 : 0);  // process_config: NO is 1 process
  if (machines < 1) return b.error(y.line_of(root, "num_machines"), "num_machines must be >= 1");
  if (procs == -1) {
    b.note("num_processes -1: given on the accelerate launch command line (give --nodes / --gpus-per-node)");
    procs = 0;
  }
  if (procs < 0 || (procs == 0 && procs_v.value_or(-1) == 0)) {
    return b.error(y.line_of(root, "num_processes"), "num_processes must be >= 1 (or -1: given at launch)");
  }
  if (type == "MULTI_GPU" && procs > 0 && procs < 2) {
    return b.error(y.line_of(root, "num_processes"),
                   "MULTI_GPU with num_processes " + str(procs) + ": accelerate raises \"You need to use at least 2 "
                   "processes to use `--multi_gpu`\" (commands/launch.py)");
  }
  ConfigWorld cw;
  cw.source = "the accelerate config's num_machines / num_processes";
  if (machines_v || procs > 0) cw.nodes = machines;
  if (procs > 0) {
    if (procs % machines != 0) {
      b.finding("import-warning", y.line_of(root, "num_processes"),
                "num_processes " + str(procs) + " over num_machines " + str(machines) + ": accelerate starts " +
                    str(procs / machines) + " a machine (num_processes // num_machines)");
    }
    cw.gpus_per_node = std::max<std::int64_t>(1, procs / machines);
  }
  PLANCK_IMPORT_TRY(world, b.resolve_world(options, cw));

  std::string mp = scalar(root, "mixed_precision");
  if (mp.empty()) {
    PLANCK_IMPORT_TRY(fp16, y.boolean(root, "fp16", "", false));  // the pre-0.7 key (process_config)
    mp = fp16 ? "fp16" : "no";
  }
  if (mp != "no" && mp != "fp16" && mp != "bf16" && mp != "fp8") {
    return b.error(y.line_of(root, "mixed_precision"),
                   "mixed_precision " + mp + ": accelerate takes no, fp16, bf16 or fp8");
  }
  if (mp == "fp8") {
    b.unmodelled("mixed_precision fp8", y.line_of(root, "mixed_precision"),
                 "accelerate's FP8 backends (Transformer Engine, torchao, MS-AMP; fp8_config) are priced as bf16");
  }
  const std::string dynamo = root["dynamo_config"] && root["dynamo_config"].IsMap()
                                 ? scalar(root["dynamo_config"], "dynamo_backend")
                                 : scalar(root, "dynamo_backend");
  if (!dynamo.empty() && upper(dynamo) != "NO") {
    b.unmodelled("dynamo_backend " + dynamo,
                 y.line_of(root, root["dynamo_config"] ? "dynamo_config" : "dynamo_backend"),
                 "torch.compile of the model priced as eager");
  }
  PLANCK_IMPORT_TRY(nd, read_parallelism(y, root, b, world));
  if (type == "DEEPSPEED") return accelerate::import_deepspeed_run(y, root, b, world, nd, mp, path, options);
  if (nd.given && type != "FSDP") {
    b.unmodelled("parallelism_config", nd.line, "accelerate builds its mesh for FSDP2 and DeepSpeed; ignored here");
  }

  b.set_cluster(world);
  nlohmann::ordered_json par, t;
  if (type == "FSDP") {
    if (auto st = read_fsdp(y, root, b, world, nd, par, t); !st) return st;
  } else {
    b.set_mesh({"dp"}, {world.size});
    par["data_parallel"] = world.size > 1 ? "ddp" : "none";
    t["stack"] = "fsdp2";  // eager PyTorch, as the Hugging Face trainers run
    if (world.size > 1) b.note("MULTI_GPU: PyTorch DDP over the " + str(world.size) + " processes");
  }
  b.plan()["parallelism"] = par;
  std::vector<std::string> data_dims;
  for (const auto& dim : b.plan()["mesh"]["dims"]) {
    if (dim != "tp" && dim != "cp") data_dims.push_back(dim.get<std::string>());
  }
  b.set_data_rank_program(data_dims, "accelerate's prepared DataLoader shards batches by process index");
  // Precision: FSDP's MixedPrecision(param_dtype = reduce_dtype = the mixed-precision dtype) over
  // fp32 sharded parameters (dataclasses.py set_mixed_precision); DDP under autocast keeps fp32
  // weights and reduces fp32 gradients (written as the 16-bit compute dtype with its fp32 master).
  const std::string dt = mp == "fp16" ? "fp16" : (mp == "no" ? "fp32" : "bf16");
  t["param_dtype"] = dt;
  t["reduce_dtype"] = type == "FSDP" ? dt : "fp32";
  t["grad_sync"] = "last_microbatch";
  if (options.micro_batch) t["micro_batch"] = *options.micro_batch;
  if (options.global_batch) t["global_batch"] = *options.global_batch;
  if (options.micro_batch && !options.global_batch) {
    // One micro-batch a data rank a step: gradient accumulation 1, Accelerator's and the Hugging
    // Face trainer's default (the DeepSpeed path assumes the same of an "auto" accumulation).
    std::int64_t dp = 1;
    const auto& dims = b.plan()["mesh"]["dims"];
    for (std::size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] != "tp" && dims[i] != "cp") dp *= b.plan()["mesh"]["shape"][i].get<std::int64_t>();
    }
    t["global_batch"] = *options.micro_batch * dp;
    b.note("global batch " + str(*options.micro_batch * dp) + " = --micro-batch x data-parallel size " + str(dp) +
           ": gradient accumulation 1 (Accelerator's default; give --global-batch for the script's)");
  }
  b.plan()["training"] = t;
  b.unmodelled("the training script (model, sequence, batch)", 0,
               "an accelerate config states the launch, not the model, sequence length, batch, gradient checkpointing "
               "or PEFT / LoRA of the script it runs: give --model, --seq-len, --micro-batch and "
               "--activation-checkpointing (write the plan with `planck import accelerate FILE` and set "
               "training.lora_rank for a run that uses LoRA)");
  if (!options.sets.empty()) b.warn("--set is read for DEEPSPEED configs only (the DeepSpeed keys); ignored here");
  return b.finish();
}

}  // namespace planck::import
