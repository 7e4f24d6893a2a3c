// Megatron-LM launch script (or args file) -> plan.
//
// Semantics (docs/sources/mesh.md §3), NVIDIA/Megatron-LM @d98e8a6:
// megatron/core/parallel_state.py (initialize_model_parallel: order "tp-cp-ep-dp-pp", first token
// fastest; dp = world // (tp*pp*cp) with a RuntimeError when it does not divide; the expert
// generator's world % (etp*ep*pp); (dp*cp) % num_distributed_optimizer_instances == 0 with
// contiguous intra-instance slices), megatron/training/arguments.py (defaults: ffn size, vocab
// padding, sequence parallel off when tp == 1, global batch = micro x dp, bf16 grads reduced in
// fp32), megatron/core/num_microbatches_calculator.py (global % (micro x dp) == 0),
// megatron/core/pipeline_parallel/schedules.py (no_sync until the last micro-batch).

#include <cstdlib>
#include <string>
#include <vector>

#include "core/base/format.h"
#include "core/mesh/mesh.h"
#include "core/plan/plan.h"
#include "import/importer.h"
#include "import/megatron/args.h"
#include "import/megatron/deepspeed_fork.h"
#include "import/megatron/flag_check.h"
#include "import/plan_builder.h"
#include "import/formats/shell_script.h"

namespace planck::import {

namespace {



core::Result<MegatronDegrees> read_degrees(const MegatronFlags& f, PlanBuilder& b, const World& world) {
  MegatronDegrees d;
  PLANCK_IMPORT_TRY(tp, f.positive("tensor-model-parallel-size", 1));
  PLANCK_IMPORT_TRY(pp, f.positive("pipeline-model-parallel-size", 1));
  PLANCK_IMPORT_TRY(cp, f.positive("context-parallel-size", 1));
  PLANCK_IMPORT_TRY(ep, f.positive("expert-model-parallel-size", 1));
  PLANCK_IMPORT_TRY(etp, f.positive("expert-tensor-parallel-size", tp));
  PLANCK_IMPORT_TRY(n, f.positive("num-distributed-optimizer-instances", 1));
  d = {tp, pp, cp, ep, etp, -1, n};
  auto model = checked_product({tp, pp, cp});
  if (!model) return b.error(f.line("tensor-model-parallel-size"), "tp x pp x cp overflows a 64-bit integer");
  if (world.size % *model == 0) {
    d.dp = world.size / *model;
    b.note("dp = world " + str(world.size) + " / (tp " + str(tp) + " x pp " + str(pp) + " x cp " + str(cp) +
           ") = " + str(d.dp) + " (parallel_state.initialize_model_parallel)");
  } else {
    b.warn("world_size (" + str(world.size) + ") is not divisible by tp " + str(tp) + " x pp " + str(pp) + " x cp " +
           str(cp) + " = " + str(*model) +
           ": Megatron raises RuntimeError; dp written as -1 so `planck verify` reports it");
  }
  // Expert generator (cp folded into the dense side): world % (etp x ep x pp) == 0.
  auto expert = checked_product({etp, ep, pp});
  if (!expert) return b.error(f.line("expert-model-parallel-size"), "etp x ep x pp overflows a 64-bit integer");
  // Checked only when the dense sizes fit: Megatron raises on those first, and verify reports them.
  if (d.dp != -1 && world.size % *expert != 0) {
    return b.error(f.line("expert-model-parallel-size"),
                   "world_size (" + str(world.size) + ") is not divisible by expert_tensor_parallel_size " + str(etp) +
                       " x expert_model_parallel_size " + str(ep) + " x pipeline_model_parallel_size " + str(pp) +
                       ": Megatron raises RuntimeError");
  }
  if (ep > 1 && d.dp != -1) {
    // planck's mesh keeps Megatron's dense order; the expert grid (etp, ep, edp) with order
    // tp-cp-ep-dp-pp puts ep right after tp (etp = 1) or after etp = tp, so the expert-parallel
    // group is cp (x tp when etp = 1) x a factor of dp: the mesh ep dim.
    if (etp != 1 && etp != tp) {
      return b.error(f.line("expert-tensor-parallel-size"),
                     "--expert-tensor-parallel-size " + str(etp) + " with --tensor-model-parallel-size " + str(tp) +
                         ": planck models etp = 1 or etp = tp (a partial expert TP group is not a mesh dim)");
    }
    const std::int64_t borrowed = cp * (etp == 1 ? tp : 1);
    if (ep % borrowed != 0 || d.dp % (ep / borrowed) != 0 || (d.dp / d.instances) % (ep / borrowed) != 0) {
      return b.error(f.line("expert-model-parallel-size"),
                     "--expert-model-parallel-size " + str(ep) + " with cp " + str(cp) + ", tp " + str(tp) + ", etp " +
                         str(etp) + ", dp " + str(d.dp) + ": planck represents the expert-parallel group as cp" +
                         (etp == 1 ? " x tp" : "") + " x a factor of dp, so ep must be a multiple of " +
                         str(borrowed) + " whose quotient divides dp" +
                         (d.instances > 1 ? " / num-distributed-optimizer-instances" : ""));
    }
    d.mesh_ep = ep / borrowed;
    b.note("expert parallel ep=" + str(ep) + " = mesh ep " + str(d.mesh_ep) + " x cp " + str(cp) +
           (etp == 1 ? " x tp " + str(tp) : std::string()) + "; expert-data-parallel group edp = world / (etp " +
           str(etp) + " x ep " + str(ep) + " x pp " + str(pp) + ") = " + str(world.size / *expert) +
           " (parallel_state.initialize_model_parallel, expert RankGenerator)");
  }
  return d;
}

struct Strategy {
  std::string data_parallel;  // "" = none
  bool hierarchical = false;  // N distributed-optimizer instances: dp split into (dp_replicate, dp_shard)
};

core::Result<Strategy> read_strategy(const MegatronFlags& f, PlanBuilder& b, const MegatronDegrees& d) {
  Strategy s;
  // --use-custom-fsdp is Megatron-FSDP's earlier name.
  const bool fsdp = f.has("use-megatron-fsdp") || f.has("use-custom-fsdp");
  const bool distopt = f.has("use-distributed-optimizer");
  if (f.has("use-torch-fsdp2")) {
    // Megatron-LM wraps the model in PyTorch FSDP2 (training.py: TorchFullyShardedDataParallel,
    // fully_shard over the data-parallel group), after arguments.py:1031-1047@d98e8a6 asserts no
    // pipeline or expert parallelism, no distributed optimizer and no fp16.
    const std::pair<bool, const char*> kRefused[] = {{d.pp > 1, "pipeline parallelism"},
                                                     {d.ep > 1, "expert parallelism"},
                                                     {distopt, "MCore's distributed optimizer"},
                                                     {f.has("fp16"), "fp16"}};
    for (const auto& [on, what] : kRefused) {
      if (on) {
        return b.error(f.line("use-torch-fsdp2"), std::string("--use-torch-fsdp2 is not supported with ") + what +
                                                      ": Megatron refuses it at start-up (arguments.py)");
      }
    }
    s.data_parallel = "fsdp";
    b.locate("/parallelism/data_parallel", f.line("use-torch-fsdp2"));
    b.note("--use-torch-fsdp2: PyTorch FSDP2 (fully_shard) over the dp x cp group -> fsdp: parameters, gradients "
           "and optimizer state sharded");
    return s;
  }
  if (fsdp) {
    const std::string inner = f.string("data-parallel-sharding-strategy").value_or("no_shard");
    // no_shard keeps the distributed optimizer's own optimizer-state sharding when it is on.
    if (inner == "no_shard")
      s.data_parallel = distopt ? "zero1" : "ddp";
    else if (inner == "optim")
      s.data_parallel = "zero1";
    else if (inner == "optim_grads")
      s.data_parallel = "zero2";
    else if (inner == "optim_grads_params")
      s.data_parallel = "fsdp";
    else {
      return b.error(f.line("data-parallel-sharding-strategy"),
                     "--data-parallel-sharding-strategy '" + inner +
                         "' is not one of no_shard, optim, optim_grads, optim_grads_params");
    }
    b.note("Megatron-FSDP with --data-parallel-sharding-strategy " + inner + " -> " + s.data_parallel +
           " over the dp x cp group");
  } else if (distopt) {
    s.data_parallel = "zero1";
    b.note("--use-distributed-optimizer: optimizer state sharded over the dp x cp group (ZeRO-1)");
  } else {
    s.data_parallel = "ddp";
    b.note("no distributed optimizer: Megatron DDP all-reduces gradients over dp x cp");
  }
  if (d.instances > 1) {
    if (!fsdp && !distopt) {
      b.warn("--num-distributed-optimizer-instances " + str(d.instances) +
             " has no effect without --use-distributed-optimizer or --use-megatron-fsdp; ignored");
      return s;
    }
    if (d.dp != -1) {
      const std::int64_t dpcp = d.dp * d.cp;
      if (dpcp % d.instances != 0) {
        return b.error(f.line("num-distributed-optimizer-instances"),
                       "Megatron asserts (dp x cp) % num_distributed_optimizer_instances == 0: dp " + str(d.dp) +
                           " x cp " + str(d.cp) + " = " + str(dpcp) + ", instances " + str(d.instances));
      }
      if (d.dp % d.instances != 0) {
        return b.error(f.line("num-distributed-optimizer-instances"),
                       "instances " + str(d.instances) + " divide dp x cp (" + str(dpcp) + ") but not dp (" +
                           str(d.dp) +
                           "): the intra-instance slices cut the cp dim, which a planck mesh cannot express");
      }
    }
    s.hierarchical = true;
    s.data_parallel = "hsdp";
    const std::string outer = f.string("outer-dp-sharding-strategy").value_or("no_shard");
    b.note(str(d.instances) + " distributed-optimizer instances: each dp x cp group is cut into " + str(d.instances) +
           " contiguous slices (sharding inside a slice, replication across slices; parallel_state.py "
           "INTRA_PARTIAL_DATA_PARALLEL_GROUP_WITH_CP) -> hsdp with dp_replicate " +
           str(d.instances) +
           (fsdp ? ", outer strategy " + outer : ", parameters replicated: only optimizer state is sharded"));
  }
  return s;
}

}  // namespace

// Where each plan field's flag is written, for `planck verify CONFIG`'s locations.
void locate_flags(const MegatronFlags& f, PlanBuilder& b, const std::vector<std::string>& dims) {
  const std::pair<const char*, const char*> kDimFlags[] = {
      {"tp", "tensor-model-parallel-size"}, {"pp", "pipeline-model-parallel-size"}, {"cp", "context-parallel-size"}};
  int first = 0;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    for (const auto& [dim, flag] : kDimFlags) {
      if (dims[i] != dim || f.line(flag) == 0) continue;
      b.locate("/mesh/shape/" + std::to_string(i), f.line(flag));
      if (first == 0 || f.line(flag) < first) first = f.line(flag);
    }
  }
  b.locate("/mesh", first);
  b.locate("/parallelism", first);
  b.locate("/training", f.line("global-batch-size"));
  b.locate("/training/global_batch", f.line("global-batch-size"));
  b.locate("/training/micro_batch", f.line("micro-batch-size"));
  b.locate("/training/grad_accumulation", f.line("global-batch-size"));
  b.locate("/training/seq_len", f.line("seq-length"));
  b.locate("/model", f.line("num-layers"));
  const std::pair<const char*, const char*> kModelFlags[] = {
      {"layers", "num-layers"},       {"hidden", "hidden-size"}, {"heads", "num-attention-heads"},
      {"ffn_hidden", "ffn-hidden-size"}, {"vocab", "vocab-size"}, {"kv_heads", "num-query-groups"}};
  for (const auto& [field, flag] : kModelFlags) b.locate(std::string("/model/") + field, f.line(flag));
}

core::Result<ImportResult> import_megatron(std::string_view text, const std::string& path,
                                           const ImportOptions& options) {
  PlanBuilder b("megatron", path);
  PLANCK_IMPORT_TRY(script, run_shell(text, path, shell_presets(options.sets, options)));
  for (const auto& [name, value] : options.sets) b.note("--set " + name + "=" + value + " from the command line");
  warn_unread_sets(script, options.sets, b);
  auto launch_r = find_megatron_launch(script, b);
  if (!launch_r && !script.warnings.empty()) {
    // The launch line is often in the file that could not be read: say which.
    return core::Status::error(launch_r.message() + "; " + core::join(script.warnings, "; "));
  }
  if (!launch_r) return launch_r.status();
  auto launch = std::move(*launch_r);
  relocate_flags(launch, text);
  if (auto yuan = read_yuan_pipeline_blocks(launch, b); !yuan.is_ok()) return yuan;
  DeepSpeedFork fork = detect_deepspeed_fork(launch, b);
  if (fork.bigcode) {
    if (auto st = rename_bigcode_flags(fork, launch, b); !st) return st;
  }
  // A Megatron-Bridge launch (run_recipe.py, scripts/performance|training/*.py) passes a recipe name
  // and Hydra-style a.b=c overrides, not Megatron-LM flags: reading it as flags would give the
  // defaults. Refused, with the way to read the recipe itself.
  std::vector<Unfollowed> refused;
  const std::string entry = launch.script.substr(launch.script.rfind('/') + 1);
  if (entry == "run_recipe.py" || entry == "bootstrap.py" ||
      launch.script.find("scripts/performance/") != std::string::npos ||
      launch.script.find("scripts/training/") != std::string::npos) {
    refused.push_back({path, launch.line, launch.script + " ...",
                       "a Megatron-Bridge launch: the layout is in the recipe it names and its a.b=c overrides, not "
                       "in Megatron-LM flags; read it with --framework megatron-bridge (detected when not given)",
                       "the whole config"});
  }
  // A NeMo 1.x launch (examples/nlp/language_modeling/megatron_gpt_pretraining.py and the
  // MLPerf GPT-3 megatron_gpt_pretraining_custom.py): a Hydra application whose layout is in its
  // YAML config and `model.micro_batch_size=2`-style overrides (NVIDIA/NeMo @v1.23.0
  // megatron_gpt_pretraining.py: @hydra_runner(config_path="conf", ...)), not in Megatron-LM flags.
  const bool megatron_flags = launch.flags.count("num-layers") || launch.flags.count("micro-batch-size") ||
                              launch.flags.count("tensor-model-parallel-size");
  const bool hydra = launch.flags.count("config-path") || launch.flags.count("config-name") ||
                     (entry.rfind("megatron_", 0) == 0 && entry.size() > 3 && entry.substr(entry.size() - 3) == ".py");
  if (refused.empty() && hydra && !megatron_flags) {
    ImportResult result = b.finish();
    result.unfollowed.push_back({path, launch.line, launch.script + " ...",
                                 "a NeMo (Hydra) launch: the layout is in NeMo's YAML config and its a.b=c overrides; "
                                 "verify that YAML (planck reads NeMo 1.x configs) with the overrides edited in",
                                 "the whole config"});
    return result;
  }
  if (auto hf = hf_accelerate_launch(launch, path); refused.empty() && hf) {
    ImportResult result = b.finish();
    result.unfollowed.push_back(std::move(*hf));
    return result;
  }
  if (auto rl = rl_trainer_launch(launch, path); refused.empty() && rl) {
    ImportResult result = b.finish();
    result.unfollowed.push_back(std::move(*rl));
    return result;
  }
  if (auto wrapper = wrapper_launch(launch, fork, path); refused.empty() && wrapper) {
    ImportResult result = b.finish();
    result.unfollowed.push_back(std::move(*wrapper));
    return result;
  }
  MegatronFlags f(launch, b);
  b.note(launch.script.empty() ? "args file: " + str(static_cast<std::int64_t>(launch.flags.size())) + " flags"
                               : "launch: " + launch.script + " at line " + str(launch.line) + " with " +
                                     str(static_cast<std::int64_t>(launch.flags.size())) + " flags");
  if (!launch.earlier.empty()) {
    std::string lines;
    for (int l : launch.earlier) lines += (lines.empty() ? "" : ", ") + str(l);
    b.warn("the script runs " + launch.script + " " + str(static_cast<std::int64_t>(launch.earlier.size()) + 1) +
           " times with different flags (also at line " + lines + "); planck reads the last, at line " +
           str(launch.line));
  }
  for (const std::string& a : script.assumptions) b.hint(a);
  for (const std::string& r : script.followed) b.note(r);
  for (const std::string& w : script.warnings) b.warn(w);

  PLANCK_IMPORT_TRY(world, b.resolve_world(options, config_world(launch, script, text)));
  b.set_cluster(world);
  if (const auto rocm = rocm_variable(script)) {
    // Memory is judged against the smallest part ROCm's Megatron forks run on, so an error holds
    // on every one of them; --gpu names the real one and settles this.
    b.plan()["cluster"]["gpu"] = "mi300x";
    b.finding("setting-unmodelled", rocm->line,
              "the script sets " + rocm->text +
                  ", which only ROCm reads: it runs on AMD Instinct GPUs and does not say which; checked as mi300x "
                  "(192 GB, the smallest of mi300x, mi325x and mi355x; pass --gpu)",
              "", "/cluster/gpu");
  }
  PLANCK_IMPORT_TRY(d, read_degrees(f, b, world));
  // Megatron-DeepSpeed: the DeepSpeed engine's ZeRO stage is read by apply_deepspeed_fork.
  PLANCK_IMPORT_TRY(s, fork.on ? core::Result<Strategy>(Strategy{}) : read_strategy(f, b, d));

  // Mesh: the order string, fastest first, reversed (core::megatron_order_to_mesh_dims); ep is
  // the part of dp that the expert-parallel group takes (read_degrees), absent without EP.
  const std::string order = f.has("use-tp-pp-dp-mapping") ? "tp-cp-ep-pp-dp" : "tp-cp-ep-dp-pp";
  PLANCK_IMPORT_TRY(order_dims, core::megatron_order_to_mesh_dims(order));
  std::vector<std::string> dims;
  std::vector<std::int64_t> shape;
  for (const std::string& dim : order_dims) {
    if (dim == "ep" && d.ep == 1) continue;
    if (dim == "dp" && s.hierarchical) {
      dims.insert(dims.end(), {"dp_replicate", "dp_shard"});
      shape.insert(shape.end(), {d.instances, d.dp == -1 ? -1 : d.dp / d.instances / d.mesh_ep});
      continue;
    }
    dims.push_back(dim);
    shape.push_back(dim == "tp"   ? d.tp
                    : dim == "cp" ? d.cp
                    : dim == "pp" ? d.pp
                    : dim == "ep" ? d.mesh_ep
                                  : (d.dp == -1 ? -1 : d.dp / d.mesh_ep));
  }
  b.set_mesh(dims, shape);
  locate_flags(f, b, dims);
  std::vector<std::string> data_dims;
  for (const std::string& dim : dims) {
    if (dim == "dp" || dim == "dp_replicate" || dim == "dp_shard" || dim == "ep") data_dims.push_back(dim);
  }
  b.set_data_rank_program(data_dims, "Megatron-Core's: the dp coordinate of the " + order +
                                         " rank grid, context parallel excluded (megatron/core/parallel_state.py "
                                         "RankGenerator, get_data_parallel_rank; the data loader's rank)");
  b.note("mesh from Megatron order " + order + " (first token fastest): [" + core::join(dims, ", ") + "]");

  nlohmann::ordered_json par;
  par["data_parallel"] = s.data_parallel;
  if (s.hierarchical) {
    std::vector<std::string> shard = {"dp_shard"};
    if (d.cp > 1) shard.push_back("cp");
    par["fsdp_dims"] = shard;
    par["replicate_dims"] = {"dp_replicate"};
  }
  const bool sp = f.has("sequence-parallel") && d.tp > 1;
  if (f.has("sequence-parallel") && d.tp == 1) {
    b.note("--sequence-parallel ignored: Megatron disables sequence parallelism when tp == 1 (arguments.py)");
  }
  par["sequence_parallel"] = sp;
  if (d.ep > 1 && d.tp > 1) par["etp"] = d.etp;
  // --tp-comm-overlap overlaps TP communication with the GEMMs (Transformer Engine userbuffers).
  if (f.has("tp-comm-overlap") && d.tp > 1) par["async_tp"] = true;
  // Megatron's own DDP / distributed optimizer (not Megatron-FSDP): --overlap-param-gather starts
  // each bucket's parameter all-gather under the next forward; with --overlap-grad-reduce the
  // buckets hold --ddp-bucket-size parameters, default max(4e7, 1e6 x dp)
  // (megatron/core/distributed/distributed_data_parallel.py); without it one bucket.
  const std::string dp_kind = par.value("data_parallel", std::string());
  if ((dp_kind == "zero1" || dp_kind == "ddp") && !f.has("use-megatron-fsdp") && !f.has("use-custom-fsdp")) {
    if (dp_kind == "zero1" && f.has("overlap-param-gather")) par["overlap_param_gather"] = true;
    if (!f.has("overlap-grad-reduce")) {
      par["dp_bucket_params"] = core::kMaxBucketParams;  // bucket_size None: one bucket, nothing overlaps
    } else if (d.dp > 0) {
      PLANCK_IMPORT_TRY(bucket, f.positive("ddp-bucket-size", std::max<std::int64_t>(40000000, 1000000 * d.dp)));
      par["dp_bucket_params"] = bucket;
    }
  }
  b.plan()["parallelism"] = par;
  if (auto st = megatron_model_and_training(f, b, d); !st) return st;
  if (auto st = apply_deepspeed_fork(fork, f, b, d, launch, script, text); !st) return st;

  for (const ShellField& c : script.commented_flags) {
    if (c.text.size() < 2) continue;
    // "--name value" or "--name=value"; a bare "--name" has no value.
    const std::size_t sep = c.text.find_first_of(" \t=");
    const std::string name = c.text.substr(2, sep == std::string::npos ? std::string::npos : sep - 2);
    const std::string value = sep == std::string::npos ? std::string() : c.text.substr(sep + 1);
    if (!megatron_interprets(name)) continue;
    std::string h = "line " + str(c.line) + ": commented out, not applied: " + c.text;
    if (name == "num-distributed-optimizer-instances" && d.dp > 0) {
      const std::int64_t k = std::strtoll(value.c_str(), nullptr, 10);  // 0 for a bare flag
      if (k >= 2 && (d.dp * d.cp) % k == 0) {
        h += " (enabled, it splits each dp x cp group of " + str(d.dp * d.cp) + " ranks into " + str(k) +
             " contiguous shard groups of " + str(d.dp * d.cp / k) + " and replicate groups of " + str(k) +
             ": HFSDP; see docs/sources/mesh.md §3 M7)";
      }
    }
    b.hint(h);
  }
  check_flags(f, fork, b);
  ImportResult result = b.finish();
  result.unfollowed = std::move(refused);
  return result;
}

}  // namespace planck::import
