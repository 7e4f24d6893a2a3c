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

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "core/plan/json_doc.h"
#include "core/plan/json_value.h"
#include "import/importer.h"
#include "import/deepspeed/keys.h"
#include "import/plan_builder.h"

namespace planck::import {

namespace {

using namespace deepspeed_keys;


// An integer field that may be absent, a number, or the Hugging Face placeholder "auto".
struct DsInt {
  std::optional<std::int64_t> value;
  bool is_auto = false;
};

class DsReader {
 public:
  DsReader(const core::JsonDoc& doc, PlanBuilder& b) : doc_(doc), b_(b) {}

  int line(const std::string& ptr) const { return doc_.position(ptr).line; }
  // --set a.b=v: the value at /a/b, over the file's (the command line wins).
  void set(const std::string& dotted, const std::string& text) {
    std::string ptr;
    for (char c : dotted) ptr += c == '.' ? '/' : c;
    const bool had = at("/" + ptr) != nullptr;
    overrides_["/" + ptr] = set_value(text);
    b_.note("--set " + dotted + "=" + text + " from the command line" + (had ? " (replaces the file's value)" : ""));
  }
  const nlohmann::json* at(const std::string& ptr) const {
    if (auto it = overrides_.find(ptr); it != overrides_.end()) return &it->second;
    const nlohmann::json::json_pointer p(ptr);
    return doc_.root().contains(p) ? &doc_.root().at(p) : nullptr;
  }
  core::Result<DsInt> integer(const std::string& ptr) const {
    DsInt out;
    const nlohmann::json* v = at(ptr);
    if (!v || v->is_null()) return out;
    if (v->is_string() && v->get<std::string>() == "auto") {
      out.is_auto = true;
      return out;
    }
    if (auto i = core::json_int64(*v)) {
      out.value = *i;
      return out;
    }
    if (core::json_int_out_of_range(*v)) {
      return b_.error(line(ptr), ptr + " = " + core::json_excerpt(*v) + " does not fit in a signed 64-bit integer (at most 9223372036854775807)");
    }
    // DeepSpeed reads these through int(); 1e5 style numbers are whole floats.
    if (v->is_number_float()) {
      const double d = v->get<double>();
      if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e18) {
        out.value = static_cast<std::int64_t>(d);
        return out;
      }
    }
    return b_.error(line(ptr), ptr + " must be an integer or \"auto\", got " + core::json_excerpt(*v));
  }
  void warn_unknown(const std::string& ptr, const std::vector<std::string>& known) {
    const nlohmann::json* obj = ptr.empty() ? &doc_.root() : at(ptr);
    if (!obj || !obj->is_object()) return;
    for (const auto& [key, value] : obj->items()) {
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        const std::string p = ptr + "/" + core::json_pointer_escape(key);
        b_.unknown_key(p, doc_.key_position(p).line, known);
      }
    }
  }
  bool flag(const std::string& ptr) const {
    const nlohmann::json* v = at(ptr);
    return v && v->is_boolean() && v->get<bool>();
  }

 private:
  const core::JsonDoc& doc_;
  PlanBuilder& b_;
  std::map<std::string, nlohmann::json> overrides_;
};

// runtime/config.py _set_batch_related_parameters, with the "auto" values the HF trainer fills.
core::Status read_batch(DsReader& r, PlanBuilder& b, std::int64_t dp, nlohmann::ordered_json& t) {
  PLANCK_IMPORT_TRY(tb, r.integer("/train_batch_size"));
  PLANCK_IMPORT_TRY(mb, r.integer("/train_micro_batch_size_per_gpu"));
  PLANCK_IMPORT_TRY(gas, r.integer("/gradient_accumulation_steps"));
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
    return b.error(0, "DeepSpeed needs train_batch_size or train_micro_batch_size_per_gpu (runtime/config.py)");
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

std::string enabled_dtype(DsReader& r, PlanBuilder& b) {
  for (const char* key : {"bf16", "bfloat16", "fp16"}) {
    const nlohmann::json* e = r.at(std::string("/") + key + "/enabled");
    if (!e) continue;
    const std::string name = std::string(key) == "fp16" ? "fp16" : "bf16";
    if (e->is_boolean() && e->get<bool>()) return name;
    if (e->is_string() && e->get<std::string>() == "auto") {
      b.unmodelled(std::string(key) + ".enabled \"auto\"", r.line(std::string("/") + key + "/enabled"),
                   "the trainer sets it from --" + name + "; " + name + " assumed");
      return name;
    }
  }
  return "fp32";
}

// optimizer.type (runtime/config.py: adam, adamw, lamb, onebitadam, zerooneadam, onebitlamb,
// lion, muon, adagrad, muadam, muadamw, musgd; matched without case) -> training.optimizer, and
// the bf16 section's optimizer precision (precision_config.py DeepSpeedBF16Config).
void read_optimizer(DsReader& r, PlanBuilder& b, nlohmann::ordered_json& t) {
  if (const nlohmann::json* o = r.at("/optimizer/type"); o && o->is_string()) {
    std::string name = o->get<std::string>();
    for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    // DeepSpeed's Adam defaults to adam_w_mode (decoupled weight decay).
    static const std::pair<const char*, const char*> kMap[] = {
        {"adam", "adamw"},        {"adamw", "adamw"},      {"fusedadam", "adamw"}, {"cpuadam", "adamw"},
        {"muadam", "adamw"},      {"muadamw", "adamw"},    {"lamb", "lamb"},       {"onebitadam", "onebit_adam"},
        {"zerooneadam", "onebit_adam"}, {"onebitlamb", "onebit_adam"}, {"lion", "lion"}, {"muon", "muon"},
        {"musgd", "sgd"},         {"sgd", "sgd"},          {"adagrad", "sgd"}};
    std::string mapped;
    for (const auto& [from, to] : kMap) {
      if (name == from) mapped = to;
    }
    if (mapped.empty()) {
      b.unmodelled("optimizer.type " + o->get<std::string>(), r.line("/optimizer/type"),
                   "not an optimizer planck prices; AdamW's states assumed (12 bytes a parameter)");
    } else {
      t["optimizer"] = mapped;
      if (name == "adagrad") b.note("optimizer Adagrad keeps one state a parameter: priced as sgd (momentum)");
      if (name == "onebitlamb") b.note("optimizer OneBitLamb: priced as 1-bit Adam (m, v and the error feedback)");
      if (mapped == "onebit_adam")
        b.note("optimizer " + o->get<std::string>() + ": the compressed all-reduce after freeze_step is priced as an "
               "uncompressed one (conservative)");
    }
  }
  const std::string bf16 = r.at("/bf16") ? "/bf16" : "/bfloat16";
  if (r.flag(bf16 + "/bf16_master_weights_and_grads")) {
    t["master_dtype"] = "bf16";
    b.note("bf16_master_weights_and_grads: the optimizer's master weights are bf16 (2 bytes a parameter)");
  }
  if (r.flag(bf16 + "/bf16_optimizer_states")) {
    t["optimizer_state_dtype"] = "bf16";
    b.note("bf16_optimizer_states: optimizer states in bf16");
  }
}

// zero_optimization.offload_optimizer / offload_param {"device": "cpu" | "nvme" | "none"}
// (offload_config.py); the older cpu_offload / cpu_offload_param booleans mean device cpu.
core::Status read_offload(DsReader& r, PlanBuilder& b, std::int64_t stage, nlohmann::ordered_json& t) {
  auto device = [&](const std::string& section, const char* legacy) -> core::Result<std::string> {
    if (const nlohmann::json* d = r.at("/zero_optimization/" + section + "/device")) {
      if (!d->is_string()) return b.error(r.line("/zero_optimization/" + section + "/device"),
                                          section + ".device must be \"cpu\", \"nvme\" or \"none\"");
      const std::string v = d->get<std::string>();
      if (v != "cpu" && v != "nvme" && v != "none") {
        return b.error(r.line("/zero_optimization/" + section + "/device"),
                       section + ".device \"" + v + "\" is not cpu, nvme or none (offload_config.py OffloadDeviceEnum)");
      }
      return v;
    }
    return std::string(r.flag(std::string("/zero_optimization/") + legacy) ? "cpu" : "none");
  };
  PLANCK_IMPORT_TRY(opt, device("offload_optimizer", "cpu_offload"));
  PLANCK_IMPORT_TRY(par, device("offload_param", "cpu_offload_param"));
  const int opt_line = r.line("/zero_optimization/offload_optimizer");
  if (opt != "none") {
    if (stage == 0) {
      b.warn("offload_optimizer needs ZeRO stage 1, 2 or 3 (DeepSpeed refuses it at stage 0); not applied");
    } else {
      t["offload_optimizer"] = opt;
      b.locate("/training/offload_optimizer", opt_line);
      b.note("offload_optimizer " + opt + ": master weights, optimizer states and the gradient partition live in " +
             "host memory; the step runs on the host (ZeRO-Offload)");
      if (opt == "nvme")
        b.unmodelled("offload_optimizer.device nvme", r.line("/zero_optimization/offload_optimizer/device"),
                     "priced as cpu offload: the host link is priced, the NVMe reads and writes are not");
      if (const nlohmann::json* ratio = r.at("/zero_optimization/offload_optimizer/ratio");
          ratio && ratio->is_number() && ratio->get<double>() < 1.0) {
        b.unmodelled("offload_optimizer.ratio " + ratio->dump(), r.line("/zero_optimization/offload_optimizer/ratio"),
                     "the whole optimizer assumed offloaded (a partial Twin-Flow split is not modelled)");
      }
      if (r.flag("/zero_optimization/offload_optimizer/super_offload")) {
        b.unmodelled("offload_optimizer.super_offload", r.line("/zero_optimization/offload_optimizer/super_offload"),
                     "priced as plain ZeRO-Offload (SuperOffload's GH200 speculation is not modelled)");
      }
    }
  }
  if (par != "none") {
    const int line = r.line("/zero_optimization/offload_param");
    if (stage != 3) {
      b.warn("offload_param only applies to ZeRO stage 3 (stage is " + str(stage) + "); not applied");
    } else {
      t["offload_params"] = par;
      b.locate("/training/offload_params", line);
      b.note("offload_param " + par + ": parameter partitions live in host memory and are copied in for every "
             "forward and backward (ZeRO-Infinity)");
      if (par == "nvme")
        b.unmodelled("offload_param.device nvme", r.line("/zero_optimization/offload_param/device"),
                     "priced as cpu offload: the host link is priced, the NVMe reads are not");
    }
  }
  if (r.at("/zero_optimization/zenflow")) {
    b.unmodelled("zero_optimization.zenflow", r.line("/zero_optimization/zenflow"),
                 "ZenFlow's split of important gradients between GPU and host is not modelled; priced as the "
                 "offload settings alone say");
  }
  // DeepSpeed's own activation checkpointing (runtime/activation_checkpointing/config.py) acts only
  // where the model calls deepspeed.checkpointing; its memory options are not priced.
  for (const char* a : {"partition_activations", "cpu_checkpointing", "contiguous_memory_optimization"}) {
    if (r.flag(std::string("/activation_checkpointing/") + a)) {
      b.unmodelled(std::string("activation_checkpointing.") + a, r.line(std::string("/activation_checkpointing/") + a),
                   "checkpointed activations priced whole on the GPU (set training.activation_checkpointing in the "
                   "plan for the model's own checkpointing)");
    }
  }
  for (const char* q : {"zero_quantized_weights", "zero_quantized_gradients", "zero_quantized_nontrainable_weights"}) {
    if (r.flag(std::string("/zero_optimization/") + q)) {
      b.unmodelled(std::string("zero_optimization.") + q, r.line(std::string("/zero_optimization/") + q),
                   "ZeRO++ quantized communication priced at the unquantized volume");
    }
  }
  return core::Status::ok();
}

}  // namespace

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
  core::JsonParseError perr;
  auto doc = core::JsonDoc::parse(text, &perr);
  if (!doc) {
    return core::Status::error(path + ":" + str(perr.pos.line) + ":" + str(perr.pos.column) +
                               ": not valid JSON: " + perr.message);
  }
  if (!doc->root().is_object()) return b.error(1, "a DeepSpeed config is a JSON object");
  DsReader r(*doc, b);
  for (const auto& [name, text] : options.sets) r.set(name, text);
  r.warn_unknown("", kTopKeys);
  r.warn_unknown("/zero_optimization", kZeroKeys);
  r.warn_unknown("/tensor_parallel", kTpKeys);
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
  PLANCK_IMPORT_TRY(sp_v, r.integer("/sequence_parallel_size"));
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
  if (sp_v.value && *sp_v.value > 1)
    b.unmodelled("sequence_parallel_size " + str(*sp_v.value), r.line("/sequence_parallel_size"),
                 "Ulysses sequence parallelism's all-to-alls are not priced and the sequence is not split "
                 "(each rank priced with the whole sequence)");

  const std::int64_t dp = world.size % tp == 0 ? world.size / tp : -1;
  PLANCK_IMPORT_TRY(ep, read_autoep(r, b));
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
    b.set_mesh({"dp", "tp"}, {dp, tp});
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
    } else if (hpz > 1) {
      b.warn("zero_hpz_partition_size " + str(hpz) + " only applies to ZeRO stage 3; ignored");
    }
  }
  par["sequence_parallel"] = false;
  b.plan()["parallelism"] = par;
  std::vector<std::string> data_dims;  // every dim but AutoTP's: the data-parallel world, global rank / tp
  for (const auto& dim : b.plan()["mesh"]["dims"]) {
    if (dim != "tp") data_dims.push_back(dim.get<std::string>());
  }
  b.set_data_rank_program(data_dims, "DeepSpeed's data-parallel group rank (deepspeed/utils/groups.py "
                                     "_get_data_parallel_group; the engine's DistributedSampler rank)");
  b.warn(
      "DeepSpeed configs do not describe the model; add \"model\" to the plan for the divisibility and memory checks");

  nlohmann::ordered_json t;
  const std::int64_t batch_dp = use_mics ? world.size : dp;
  if (auto st = read_batch(r, b, batch_dp, t); !st) return st;
  t["grad_sync"] = stage >= 2 ? "every_microbatch" : "last_microbatch";
  t["stack"] = "deepspeed";  // eager PyTorch ops under the DeepSpeed engine (docs/simulator.md "Software stack")
  if (stage >= 2) b.note("grad_sync = every_microbatch: ZeRO-2/3 reduce gradients in every backward (engine.py)");
  const std::string dtype = enabled_dtype(r, b);
  t["param_dtype"] = dtype;
  std::string reduce = dtype;
  if (const nlohmann::json* c = r.at("/communication_data_type"); c && c->is_string()) {
    auto dt = core::parse_dtype(c->get<std::string>());
    if (dt) reduce = core::to_string(*dt);
  } else if (dtype != "fp32") {
    b.note("reduce_dtype = " + dtype +
           ": DeepSpeed communicates gradients in the training dtype unless communication_data_type is set");
  }
  t["reduce_dtype"] = reduce;
  read_optimizer(r, b, t);
  if (auto st = read_offload(r, b, stage, t); !st) return st;
  b.plan()["training"] = t;
  return b.finish();
}

}  // namespace planck::import
