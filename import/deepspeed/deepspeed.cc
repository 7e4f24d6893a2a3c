// DeepSpeed JSON -> plan.
//
// Semantics (docs/sources/mesh.md §5), deepspeedai/DeepSpeed @edaa722:
// deepspeed/runtime/zero/config.py (stage, zero_hpz_partition_size, mics_shard_size),
// deepspeed/runtime/zero/mics_utils.py (_generate_mics_config: contiguous shard groups of
// mics_shard_size, strided replicate groups, (world // pp) % shard_size asserted),
// deepspeed/utils/groups.py (_create_zero_param_parallel_group: contiguous hpZ groups, world % k
// asserted; AutoTP's (dp, tp) mesh with tp contiguous), deepspeed/runtime/config.py
// (_set_batch_related_parameters: train_batch = micro x gas x dp, the missing one derived),
// deepspeed/runtime/engine.py (ZeRO-2/3 reduce gradients in every backward; ZeRO-0/1 at the
// accumulation boundary). Hugging Face's integration (transformers integrations/deepspeed.py,
// trainer_config_process) fills "auto" values from TrainingArguments.

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "core/plan/json_doc.h"
#include "core/plan/json_value.h"
#include "import/importer.h"
#include "import/deepspeed/hjson.h"
#include "import/deepspeed/keys.h"
#include "import/deepspeed/reader.h"
#include "import/plan_builder.h"

namespace planck::import {

namespace {

using namespace deepspeed_keys;
using namespace ds;

// runtime/config.py _set_batch_related_parameters, with the "auto" values the HF trainer fills.
core::Status read_batch(DsReader& r, PlanBuilder& b, std::int64_t dp, const ImportOptions& options,
                        nlohmann::ordered_json& t) {
  PLANCK_IMPORT_TRY(tb, r.integer("/train_batch_size"));
  PLANCK_IMPORT_TRY(mb, r.integer("/train_micro_batch_size_per_gpu"));
  PLANCK_IMPORT_TRY(gas, r.integer("/gradient_accumulation_steps"));
  // A batch left to a trainer ("auto", or none at all): the Hugging Face Trainer runs this config.
  const bool trainer = tb.is_auto || mb.is_auto || gas.is_auto || (!tb.value && !mb.value);
  if (!tb.value && !tb.is_auto && !mb.value && !mb.is_auto && (options.micro_batch || options.global_batch)) {
    // The Hugging Face Trainer fills a config without the batch; the command line says what it fills.
    mb.value = options.micro_batch;
    tb.value = options.global_batch;
    b.note("the batch from the command line (--micro-batch / --global-batch): the config states none");
  }
  // "auto": what the Hugging Face trainer fills from its arguments; the command line's batch is that.
  if (mb.is_auto && options.micro_batch) {
    mb = DsInt{options.micro_batch, false};
    b.note("train_micro_batch_size_per_gpu \"auto\": " + str(*options.micro_batch) + " from --micro-batch");
  }
  if (tb.is_auto && options.global_batch) {
    tb = DsInt{options.global_batch, false};
    b.note("train_batch_size \"auto\": " + str(*options.global_batch) + " from --global-batch");
    if (gas.is_auto) {
      gas = DsInt{};
      b.note("gradient_accumulation_steps \"auto\": the global batch over micro-batch x data-parallel size");
    }
  }
  if (trainer) {
    // The trainer's gradient checkpointing and PEFT are its own arguments, never in this file.
    b.unmodelled("a DeepSpeed config whose batch a trainer fills", 0,
                 "the trainer's gradient checkpointing and PEFT / LoRA are not in it: priced without activation "
                 "checkpointing (unless --activation-checkpointing says) and with every weight trained (write the "
                 "plan with `planck import deepspeed FILE` and set training.lora_rank for a run that uses LoRA)");
  }
  if (mb.is_auto) {
    mb.value = 8;
    b.unmodelled("train_micro_batch_size_per_gpu \"auto\"", r.line("/train_micro_batch_size_per_gpu"),
                 "the trainer fills it; 8 assumed, Hugging Face's per_device_train_batch_size default (give "
                 "--micro-batch)",
                 "/training/micro_batch");
  }
  if (gas.is_auto) {
    gas.value = 1;
    b.note("gradient_accumulation_steps is \"auto\": assumed 1, Hugging Face's gradient_accumulation_steps default");
  }
  if (tb.is_auto) b.note("train_batch_size is \"auto\": the trainer fills micro x accumulation x data-parallel size");
  for (auto [name, v] : {std::pair<const char*, std::optional<std::int64_t>>{"/train_batch_size", tb.value},
                         {"/train_micro_batch_size_per_gpu", mb.value},
                         {"/gradient_accumulation_steps", gas.value}}) {
    if (v && *v < 1) return b.error(r.line(name), std::string(name) + " = " + str(*v) + " must be >= 1");
  }
  if (!tb.value && !tb.is_auto && !mb.value) {
    return b.error(0, "DeepSpeed needs train_batch_size or train_micro_batch_size_per_gpu (runtime/config.py "
                      "_batch_assertion); give --micro-batch N (or --global-batch N), or --set "
                      "train_micro_batch_size_per_gpu=N");
  }
  // 0 = not known. The missing value is derived with floor division as DeepSpeed does;
  // _batch_assertion then checks the product.
  std::int64_t global = tb.value.value_or(0), micro = mb.value.value_or(0), acc = gas.value.value_or(0);
  if (dp > 0) {
    if (global && micro && !acc) {
      acc = global / micro / dp;
    } else if (global && acc && !micro) {
      micro = global / dp / acc;
    } else if (global && !micro && !acc) {
      acc = 1;
      micro = global / dp;
    } else if (!global && micro) {
      acc = acc ? acc : 1;
      auto g = checked_product({micro, acc, dp});
      if (!g) return b.error(0, "micro x accumulation x dp overflows a 64-bit integer");
      global = *g;
      b.note("train_batch_size = micro " + str(micro) + " x accumulation " + str(acc) + " x dp " + str(dp) + " = " +
             str(global));
    }
    auto product = micro > 0 && acc > 0 ? checked_product({micro, acc, dp}) : std::nullopt;
    if (global && (!product || *product != global)) {
      b.warn("train_batch_size " + str(global) + " != micro " + str(micro) + " x accumulation " + str(acc) + " x dp " +
             str(dp) + ": DeepSpeed's batch assertion fails; `planck verify` reports it");
      // Keep only what the config states, so verify sees the mismatch rather than a derived value.
      if (!mb.value) micro = 0;
      if (!gas.value) acc = 0;
    }
  }
  if (global > 0) t["global_batch"] = global;
  if (micro > 0) t["micro_batch"] = micro;
  if (acc > 0) t["grad_accumulation"] = acc;
  return core::Status::ok();
}


}  // namespace

// sequence_parallel_size (Ulysses): contiguous groups of sp ranks split each sequence, and the
// data-parallel world is world / sp (runtime/config.py:721-722, the batch assertion at :937;
// runtime/sequence_parallel/parallel_state_sp.py:29-44 raises when sp does not divide the world
// and builds the groups from range(i * sp, (i + 1) * sp)). It becomes the plan's cp dim, innermost.
core::Result<std::int64_t> read_ulysses(DsReader& r, PlanBuilder& b, std::int64_t world, bool other_layout) {
  PLANCK_IMPORT_TRY(sp_v, r.integer("/sequence_parallel_size"));
  const int line = r.line("/sequence_parallel_size");
  if (sp_v.is_auto) return b.error(line, "sequence_parallel_size cannot be \"auto\"");
  const std::int64_t sp = sp_v.value.value_or(1);
  if (sp < 1) return b.error(line, "sequence_parallel_size " + str(sp) + " must be >= 1");
  if (sp == 1) return sp;
  if (world % sp != 0) {
    return b.error(line, "world " + str(world) + " is not divisible by sequence_parallel_size " + str(sp) +
                             ": DeepSpeed raises (parallel_state_sp.py initialize_sequence_parallel); "
                             "choose a world that is a multiple of it");
  }
  if (other_layout) {
    return b.error(line, "sequence_parallel_size " + str(sp) + " with AutoTP, MiCS or AutoEP is not a layout "
                             "planck expresses");
  }
  b.note("sequence_parallel_size " + str(sp) + ": Ulysses over contiguous groups of " + str(sp) +
         " ranks (the plan's cp dim); data-parallel size = world / " + str(sp) + " = " + str(world / sp));
  b.unmodelled("sequence_parallel_size " + str(sp), line,
               "each rank holds seq_len / " + str(sp) + " tokens as with context parallelism, but Ulysses' "
               "all-to-alls of q, k, v and the attention output are priced as ring attention's K/V exchange");
  return sp;
}

struct AutoEp {
  std::int64_t size = 1;
  int line = 0;
  bool data_before_expert = false;
};

// "expert_parallel": {"enabled", "autoep_size", "expert_tensor_parallel_size"} (DeepSpeed AutoEP,
// deepspeed/module_inject/auto_ep_config.py; the only expert TP it accepts is 1).
core::Result<AutoEp> read_autoep(DsReader& r, PlanBuilder& b) {
  AutoEp ep;
  const nlohmann::json* enabled = r.at("/expert_parallel/enabled");
  if (!enabled || !enabled->is_boolean() || !enabled->get<bool>()) return ep;
  PLANCK_IMPORT_TRY(size, r.integer("/expert_parallel/autoep_size"));
  PLANCK_IMPORT_TRY(etp, r.integer("/expert_parallel/expert_tensor_parallel_size"));
  ep.line = r.line("/expert_parallel/autoep_size");
  if (size.is_auto) return b.error(ep.line, "expert_parallel.autoep_size cannot be \"auto\"");
  ep.size = size.value.value_or(1);
  if (ep.size < 1) return b.error(ep.line, "expert_parallel.autoep_size " + str(ep.size) + " must be >= 1");
  if (etp.value && *etp.value != 1) {
    return b.error(r.line("/expert_parallel/expert_tensor_parallel_size"),
                   "expert_parallel.expert_tensor_parallel_size " + str(*etp.value) +
                       ": DeepSpeed rejects any value but 1 (auto_ep_folding.py)");
  }
  if (const nlohmann::json* de = r.at("/use_data_before_expert_parallelism"); de && de->is_boolean()) {
    ep.data_before_expert = de->get<bool>();
  }
  return ep;
}

core::Result<ImportResult> import_deepspeed(std::string_view text, const std::string& path,
                                            const ImportOptions& options) {
  PlanBuilder b("deepspeed", path);
  // A GPT-NeoX config carries DeepSpeed's keys too, but its layout is in NeoXArgs' (pipe_parallel_size,
  // model_parallel_size): read as DeepSpeed's it would be a wrong layout and dozens of false unknown keys.
  if (is_neox_config(text)) {
    ImportResult result = b.finish();
    result.unfollowed.push_back({path, 0, "--framework deepspeed",
                                 "a GPT-NeoX config (NeoXArgs keys beside DeepSpeed's), not a DeepSpeed JSON; read it "
                                 "with --framework neox (detected when not given)",
                                 "the whole config"});
    return result;
  }
  const HjsonStripped plain = strip_hjson(text);
  if (plain.error.line > 0) {
    return core::Status::error(path + ":" + str(plain.error.line) + ":" + str(plain.error.column) +
                               ": a /* comment is not closed (add */)");
  }
  core::JsonParseError perr;
  auto doc = core::JsonDoc::parse(plain.text, &perr);
  if (!doc) {
    return core::Status::error(path + ":" + str(perr.pos.line) + ":" + str(perr.pos.column) +
                               ": not valid JSON: " + perr.message);
  }
  if (!doc->root().is_object()) return b.error(1, "a DeepSpeed config is a JSON object");
  DsReader r(*doc, b);
  for (const ImportOptions::Fill& f : options.fills) r.fill(f.key, f.value, f.from);
  for (const auto& [name, text] : options.sets) r.set(name, text);
  r.warn_unknown("", kTopKeys);
  r.warn_unknown("/zero_optimization", kZeroKeys);
  r.warn_unknown("/tensor_parallel", kTpKeys);
  r.warn_unknown("/compile", kCompileKeys);
  r.warn_unknown("/zero_optimization/offload_param", kOffloadParamKeys);
  r.warn_unknown("/zero_optimization/offload_optimizer", kOffloadOptimizerKeys);
  r.warn_unknown("/bf16", kBf16Keys);
  r.warn_unknown("/bfloat16", kBf16Keys);
  r.warn_unknown("/fp16", kFp16Keys);

  PLANCK_IMPORT_TRY(world, b.resolve_world(options, {}));
  b.set_cluster(world);
  PLANCK_IMPORT_TRY(stage_v, r.integer("/zero_optimization/stage"));
  PLANCK_IMPORT_TRY(tp_v, r.integer("/tensor_parallel/autotp_size"));
  PLANCK_IMPORT_TRY(tp_old, r.integer("/tensor_parallel/tp/tp_size"));
  PLANCK_IMPORT_TRY(mics_v, r.integer("/zero_optimization/mics_shard_size"));
  PLANCK_IMPORT_TRY(hpz_v, r.integer("/zero_optimization/zero_hpz_partition_size"));
  if (stage_v.is_auto) return b.error(r.line("/zero_optimization/stage"), "zero_optimization.stage cannot be \"auto\"");
  const std::int64_t stage = stage_v.value.value_or(0);
  if (stage < 0 || stage > 3) {
    return b.error(r.line("/zero_optimization/stage"),
                   "zero_optimization.stage " + str(stage) + " is not 0, 1, 2 or 3");
  }
  const std::int64_t tp = tp_v.value ? *tp_v.value : tp_old.value.value_or(1);
  const std::int64_t mics = mics_v.value.value_or(-1), hpz = hpz_v.value.value_or(1);
  if (tp < 1) return b.error(r.line("/tensor_parallel"), "autotp_size " + str(tp) + " must be >= 1");
  if (hpz < 1)
    return b.error(r.line("/zero_optimization/zero_hpz_partition_size"), "zero_hpz_partition_size must be >= 1");
  if (mics == 0 || mics < -1)
    return b.error(r.line("/zero_optimization/mics_shard_size"),
                   "mics_shard_size " + str(mics) + " must be -1 (off) or >= 1");
  PLANCK_IMPORT_TRY(ep, read_autoep(r, b));
  PLANCK_IMPORT_TRY(sp, read_ulysses(r, b, world.size, tp > 1 || (mics > 0 && stage == 3) || ep.size > 1));
  const std::int64_t dp = world.size % tp == 0 ? world.size / tp / sp : -1;
  if (tp > 1)
    b.note("AutoTP: tp " + str(tp) + " over contiguous ranks, dp = world / tp" + (dp > 0 ? " = " + str(dp) : ""));
  if (dp < 0)
    b.warn("world " + str(world.size) + " is not a multiple of autotp_size " + str(tp) +
           "; written as -1 so `planck verify` reports it");

  nlohmann::ordered_json par;
  const bool use_mics = mics > 0 && stage == 3;
  if (mics > 0 && stage != 3)
    b.warn("mics_shard_size " + str(mics) + " only applies to ZeRO stage 3 (stage is " + str(stage) + "); ignored");
  if (use_mics) {
    if (tp > 1)
      return b.error(r.line("/zero_optimization/mics_shard_size"),
                     "MiCS with AutoTP is not a layout planck can express (MiCS shards over the whole world)");
    const std::int64_t rep = world.size % mics == 0 ? world.size / mics : -1;
    if (rep < 0)
      b.warn("world " + str(world.size) + " is not a multiple of mics_shard_size " + str(mics) +
             ": DeepSpeed asserts; written as -1");
    b.set_mesh({"dp_replicate", "dp_shard"}, {rep, mics});
    par["data_parallel"] = "hsdp";
    par["fsdp_dims"] = {"dp_shard"};
    par["replicate_dims"] = {"dp_replicate"};
    b.note("MiCS: shard groups of mics_shard_size " + str(mics) +
           " contiguous ranks, replicate groups strided "
           "(mics_utils._generate_mics_config) -> hsdp");
  } else if (ep.size > 1) {
    // AutoEP: EP = consecutive blocks of autoep_size ranks of a stage, EDP the same position
    // across blocks; with AutoTP the blocks span the TP lanes (expert TP 1), so planck's expert-
    // parallel group is tp x the mesh ep dim carved out of dp (deepspeed/utils/groups.py
    // _create_expert_and_data_parallel; module_inject/auto_ep_folding.py). D+E
    // (use_data_before_expert_parallelism) strides EP across the data ranks instead.
    if (ep.size % tp != 0 || dp < 0 || dp % (ep.size / tp) != 0) {
      return b.error(ep.line, "autoep_size " + str(ep.size) + " with autotp_size " + str(tp) + " on world " +
                                  str(world.size) + ": planck needs autoep_size a multiple of autotp_size whose " +
                                  "quotient divides world / autotp_size (DeepSpeed asserts stage_size % " +
                                  "(autoep_size x etp) == 0)");
    }
    if (stage == 3 && tp > 1) {
      return b.error(ep.line, "AutoEP with ZeRO stage 3 and autotp_size " + str(tp) +
                                  ": DeepSpeed raises \"AutoEP with ZeRO Stage 3 does not support AutoTP yet\" "
                                  "(deepspeed/runtime/engine.py _validate_zero3_moe_compatibility)");
    }
    const std::int64_t mesh_ep = ep.size / tp;
    if (ep.data_before_expert && tp == 1) {
      b.set_mesh({"ep", "dp", "tp"}, {mesh_ep, dp / mesh_ep, tp});
      b.note("use_data_before_expert_parallelism: EP strided by world / autoep_size, EDP contiguous (D+E)");
    } else {
      b.set_mesh({"dp", "ep", "tp"}, {dp / mesh_ep, mesh_ep, tp});
    }
    static const char* kStages[] = {"ddp", "zero1", "zero2", "zero3"};
    par["data_parallel"] = kStages[stage];
    if (tp > 1) par["etp"] = 1;
    b.note("AutoEP autoep_size " + str(ep.size) + " inside the data-parallel ranks: ZeRO stage " + str(stage) + " -> " +
           kStages[stage] + "; expert gradients and optimizer state over the expert-data-parallel group of " +
           str(world.size / ep.size) + " (stage_1_and_2.py real_dp_process_group)");
  } else {
    if (sp > 1) b.set_mesh({"dp", "cp"}, {dp, sp});
    else b.set_mesh({"dp", "tp"}, {dp, tp});
    static const char* kStages[] = {"ddp", "zero1", "zero2", "zero3"};
    par["data_parallel"] = kStages[stage];
    b.note("ZeRO stage " + str(stage) + " -> " + kStages[stage] + " over the data-parallel group");
    if (hpz > 1 && stage == 3) {
      if (world.size % hpz != 0) {
        return b.error(r.line("/zero_optimization/zero_hpz_partition_size"),
                       "DeepSpeed asserts world % zero_hpz_partition_size == 0: world " + str(world.size) +
                           ", zero_hpz_partition_size " + str(hpz));
      }
      b.note("hpZ (ZeRO++): a secondary parameter copy sharded over contiguous groups of " + str(hpz) +
             " ranks for the forward all-gather; the primary partition stays over all data ranks -> zero3");
      // The copy is numel / hpz elements of the parameter's dtype on every rank
      // (zero/partition_parameters.py:1884-1898 _partition_param_sec @edaa722).
      b.unmodelled("zero_hpz_partition_size " + str(hpz), r.line("/zero_optimization/zero_hpz_partition_size"),
                   "priced as plain ZeRO-3: the secondary copy (1/" + str(hpz) + " of the parameters in their dtype "
                   "on every GPU) is not in the memory, and the backward's all-gathers inside the group are priced "
                   "over all data ranks");
    } else if (hpz > 1) {
      b.warn("zero_hpz_partition_size " + str(hpz) + " only applies to ZeRO stage 3; ignored");
    }
  }
  par["sequence_parallel"] = false;
  b.plan()["parallelism"] = par;
  std::vector<std::string> data_dims;  // every dim but AutoTP's: the data-parallel world, global rank / tp
  for (const auto& dim : b.plan()["mesh"]["dims"]) {
    if (dim != "tp" && dim != "cp") data_dims.push_back(dim.get<std::string>());
  }
  b.set_data_rank_program(data_dims, "DeepSpeed's data-parallel group rank (deepspeed/utils/groups.py "
                                     "_get_data_parallel_group; the engine's DistributedSampler rank)");
  b.warn(
      "DeepSpeed configs do not describe the model; add \"model\" to the plan for the divisibility and memory checks");

  nlohmann::ordered_json t;
  if (auto st = check_elasticity(r, b, options.micro_batch || options.global_batch); !st) return st;
  const std::int64_t batch_dp = use_mics ? world.size : dp;
  if (auto st = read_batch(r, b, batch_dp, options, t); !st) return st;
  t["grad_sync"] = stage >= 2 ? "every_microbatch" : "last_microbatch";
  t["stack"] = "deepspeed";  // eager PyTorch ops under the DeepSpeed engine (docs/simulator.md "Software stack")
  if (stage >= 2) b.note("grad_sync = every_microbatch: ZeRO-2/3 reduce gradients in every backward (engine.py)");
  PLANCK_IMPORT_TRY(dtype, enabled_dtype(r, b));
  t["param_dtype"] = dtype;
  std::string reduce = dtype;
  // With Ulysses the engine reduces gradients in seq_parallel_communication_data_type, fp32 unless
  // set (runtime/engine.py:1857, constants.py:296 @edaa722).
  const char* comm_key = sp > 1 ? "/seq_parallel_communication_data_type" : "/communication_data_type";
  if (sp > 1 && !r.at(comm_key)) {
    reduce = "fp32";
    b.note("reduce_dtype = fp32: with sequence_parallel_size > 1 DeepSpeed reduces gradients in "
           "seq_parallel_communication_data_type, fp32 by default");
  } else if (const nlohmann::json* c = r.at(comm_key); c && c->is_string()) {
    auto dt = core::parse_dtype(c->get<std::string>());
    if (dt) reduce = core::to_string(*dt);
  } else if (dtype != "fp32") {
    b.note("reduce_dtype = " + dtype +
           ": DeepSpeed communicates gradients in the training dtype unless communication_data_type is set");
  }
  t["reduce_dtype"] = reduce;
  if (auto st = check_zero_optimizer(r, b, stage); !st) return st;
  read_optimizer(r, b, t);
  read_unpriced(r, b, dtype);
  read_torch_autocast(r, b, dtype);
  if (auto st = read_offload(r, b, stage, t); !st) return st;
  if (auto st = read_grad_accum(r, b, stage, dtype, t); !st) return st;
  b.plan()["training"] = t;
  return b.finish();
}

bool is_deepspeed_config(std::string_view text) {
  const HjsonStripped plain = strip_hjson(text);
  if (plain.error.line > 0) return false;
  core::JsonParseError perr;
  auto doc = core::JsonDoc::parse(plain.text, &perr);
  if (!doc || !doc->root().is_object() || doc->root().empty()) return false;
  for (const auto& [key, value] : doc->root().items()) {
    if (std::find(kTopKeys.begin(), kTopKeys.end(), key) == kTopKeys.end()) return false;
  }
  return true;
}

bool mostly_deepspeed_keys(std::string_view text) {
  const HjsonStripped plain = strip_hjson(text);
  if (plain.error.line > 0) return true;
  core::JsonParseError perr;
  auto doc = core::JsonDoc::parse(plain.text, &perr);
  if (!doc || !doc->root().is_object()) return true;
  std::size_t known = 0, other = 0;
  for (const auto& [key, value] : doc->root().items()) {
    (std::find(kTopKeys.begin(), kTopKeys.end(), key) == kTopKeys.end() ? other : known) += 1;
  }
  return known > other;
}

}  // namespace planck::import
