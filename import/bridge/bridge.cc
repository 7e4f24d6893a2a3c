// Megatron-Bridge / NeMo 2 recipes (`def x() -> ConfigContainer`, src/megatron/bridge/recipes and
// perf_recipes) -> plans, one per recipe function. The functions are evaluated by the same Python
// reader as torchtitan's registries (python/planck_pyeval.py: never run, followed across the files
// they import). Bridge's ConfigContainer.model is Megatron-Core's TransformerConfig and .train /
// .ddp carry Megatron-LM's training arguments under the same names, so each field a recipe sets
// becomes the Megatron-LM flag of that name (megatron/training/arguments.py), and the Megatron-LM
// importer reads them as an args file: one set of Megatron semantics (docs/import.md).

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/plan/presets.h"
#include "import/importer.h"
#include "import/megatron/flags.h"
#include "import/plan_builder.h"
#include "import/formats/python_config.h"

namespace planck::import {

namespace {

using json = nlohmann::json;

struct Field {
  const char* setting;  // the ConfigContainer path
  const char* flag;     // the Megatron-LM flag it is
  bool boolean;         // a store_true flag: written when the value is true
};

// ConfigContainer fields -> Megatron-LM flags (Megatron-Bridge src/megatron/bridge/training/config.py).
constexpr Field kFields[] = {
    {"model.tensor_model_parallel_size", "tensor-model-parallel-size", false},
    {"model.pipeline_model_parallel_size", "pipeline-model-parallel-size", false},
    {"model.virtual_pipeline_model_parallel_size", "num-virtual-stages-per-pipeline-rank", false},
    {"model.context_parallel_size", "context-parallel-size", false},
    {"model.expert_model_parallel_size", "expert-model-parallel-size", false},
    {"model.expert_tensor_parallel_size", "expert-tensor-parallel-size", false},
    {"model.sequence_parallel", "sequence-parallel", true},
    {"model.recompute_granularity", "recompute-granularity", false},
    {"model.recompute_method", "recompute-method", false},
    {"model.recompute_num_layers", "recompute-num-layers", false},
    {"model.num_layers", "num-layers", false},
    {"model.hidden_size", "hidden-size", false},
    {"model.ffn_hidden_size", "ffn-hidden-size", false},
    {"model.num_attention_heads", "num-attention-heads", false},
    {"model.num_query_groups", "num-query-groups", false},
    {"model.kv_channels", "kv-channels", false},
    {"model.num_moe_experts", "num-experts", false},
    {"model.moe_router_topk", "moe-router-topk", false},
    {"model.moe_ffn_hidden_size", "moe-ffn-hidden-size", false},
    {"model.seq_length", "seq-length", false},
    {"dataset.seq_length", "seq-length", false},
    {"train.global_batch_size", "global-batch-size", false},
    {"train.micro_batch_size", "micro-batch-size", false},
    {"ddp.use_distributed_optimizer", "use-distributed-optimizer", true},
    {"ddp.use_megatron_fsdp", "use-megatron-fsdp", true},
    {"ddp.data_parallel_sharding_strategy", "data-parallel-sharding-strategy", false},
    {"ddp.num_distributed_optimizer_instances", "num-distributed-optimizer-instances", false},
    {"ddp.overlap_grad_reduce", "overlap-grad-reduce", true},
    {"ddp.overlap_param_gather", "overlap-param-gather", true},
    {"mixed_precision.bf16", "bf16", true},
    {"mixed_precision.fp16", "fp16", true},
    {"mixed_precision.fp8", "fp8-format", false},
    {"mixed_precision.fp8_recipe", "fp8-recipe", false},
    {"mixed_precision.fp8_param_gather", "fp8-param-gather", true},
};

// What a construct the reader could not follow must not touch (else config-unfollowed): the
// fields above, the sections holding them, the model itself and the pipeline layout.
bool bridge_setting_matters(const std::string& path) {
  static const std::set<std::string> leaves = [] {
    std::set<std::string> out = {"model", "train", "ddp", "mixed_precision", "dataset", "hf_model_id",
                                 "pipeline_model_parallel_layout", "peft", "dim", "target_modules"};
    for (const Field& f : kFields) out.insert(std::string(f.setting).substr(std::string(f.setting).rfind('.') + 1));
    return out;
  }();
  if (path.empty()) return true;
  const std::size_t dot = path.rfind('.');
  return leaves.count(dot == std::string::npos ? path : path.substr(dot + 1)) > 0;
}

// ConfigContainer.peft (megatron/bridge/peft/lora.py LoRA, dora.py DoRA, canonical_lora.py
// CanonicalLoRA): adapters of `dim` (default 32) on the target modules (default linear_qkv,
// linear_proj, linear_fc1, linear_fc2), the base frozen. Megatron's fused linear_qkv and
// linear_fc1 carry one adapter over the fused matrix; CanonicalLoRA's split names one each.
void read_peft(const json& settings, const std::string& path, PlanBuilder& b, ImportResult& r) {
  auto peft = settings.find("peft");
  if (peft == settings.end() || !peft->contains("class")) return;
  const std::string cls = (*peft)["class"];
  const std::string kind = cls.substr(cls.rfind('.') == std::string::npos ? 0 : cls.rfind('.') + 1);
  const int line = peft->value("line", 0);
  const std::string file = peft->value("file", path) == path ? std::string() : peft->value("file", path);
  if (kind != "LoRA" && kind != "DoRA" && kind != "CanonicalLoRA") {
    b.finding("setting-unmodelled", line, "peft " + cls + " is not modelled by planck: every weight priced as trained",
              file);
    return;
  }
  auto field = [&](const char* name) -> const json* {
    auto it = settings.find(std::string("peft.") + name);
    return it != settings.end() && it->contains("value") ? &(*it)["value"] : nullptr;
  };
  const json* dim = field("dim");
  const std::int64_t rank = dim && dim->is_number_integer() ? dim->get<std::int64_t>() : 32;
  static const LoraNames kModules = {{"linear_qkv", {"qkv"}}, {"linear_proj", {"o"}},  {"linear_fc1", {"gate_up"}},
                                     {"linear_fc2", {"down"}}, {"linear_q", {"q"}},     {"linear_k", {"k"}},
                                     {"linear_v", {"v"}},      {"linear_fc1_up", {"up"}}, {"linear_fc1_gate", {"gate"}}};
  const json* targets = field("target_modules");
  json names = targets && targets->is_array()
                   ? *targets
                   : (kind == "CanonicalLoRA"
                          ? json{"linear_q", "linear_k", "linear_v", "linear_proj", "linear_fc1_up", "linear_fc1_gate",
                                 "linear_fc2"}
                          : json{"linear_qkv", "linear_proj", "linear_fc1", "linear_fc2"});
  std::string other;
  const nlohmann::ordered_json ours = map_lora_targets(names, kModules, &other);
  nlohmann::ordered_json& t = r.plan["training"];
  t["lora_rank"] = rank;
  t["lora_targets"] = ours;
  r.notes.push_back("peft " + cls + ": adapters of rank " + std::to_string(rank) + " on " + names.dump() +
                    ", the base weights frozen");
  if (!other.empty()) {
    b.finding("setting-unmodelled", line, "peft target_modules " + other + " is not modelled by planck: no adapters "
              "priced on them (planck prices linear_qkv, linear_proj, linear_fc1, linear_fc2 on every layer)", file);
  }
  if (kind == "DoRA") {
    b.finding("setting-unmodelled", line, "peft DoRA is not modelled by planck: priced as LoRA of rank " +
              std::to_string(rank) + " (its magnitude vectors and weight-norm computation are not)", file);
  }
  if (field("exclude_modules") != nullptr && !field("exclude_modules")->empty()) {
    b.finding("setting-unmodelled", line, "peft exclude_modules is not modelled by planck: adapters priced on every "
              "layer's targets", file);
  }
}

core::Result<ImportResult> import_recipe(const json& fn, const std::string& path, const ImportOptions& options) {
  const std::string name = fn.value("name", "");
  PlanBuilder notes("megatron-bridge", path);
  json settings = fn["settings"];
  for (const auto& [key, text] : options.sets) {  // --set model.tensor_model_parallel_size=8: the command line wins
    settings[key] = {{"value", set_value(text)}, {"line", 0}, {"file", path}};
  }
  json with_sets = fn;
  with_sets["settings"] = settings;
  std::vector<Unfollowed> unfollowed = python_unfollowed(with_sets, path, options, notes, &bridge_setting_matters);

  // The args file the Megatron-LM importer reads: one flag per line, each line remembered.
  std::string args;
  std::vector<std::pair<std::string, int>> origin = {{"", 0}};  // args line -> (file, line)
  std::set<std::string> written;
  // A pipeline layout sets the virtual stages itself (Megatron-Core PipelineParallelLayerLayout;
  // Megatron-LM's command line refuses both), so the recipe's VPP size is not passed with it.
  auto layout = settings.find("model.pipeline_model_parallel_layout");
  if (layout != settings.end() && layout->contains("value") && (*layout)["value"].is_string())
    written.insert("num-virtual-stages-per-pipeline-rank");
  for (const Field& f : kFields) {
    auto it = settings.find(f.setting);
    if (it == settings.end() || !it->contains("value") || written.count(f.flag)) continue;
    const json& v = (*it)["value"];
    std::string text;
    if (f.boolean) {
      if (!v.is_boolean() || !v.get<bool>()) continue;
    } else if (v.is_null()) {
      continue;
    } else {
      text = v.is_string() ? v.get<std::string>() : v.dump();
    }
    written.insert(f.flag);
    args += "--" + std::string(f.flag) + (text.empty() ? "" : " " + text) + "\n";
    origin.emplace_back(it->value("file", path), it->value("line", 0));
  }
  // Every other field of model / train / ddp / optimizer / mixed_precision whose name is a
  // Megatron-LM flag (import/megatron/flags.h) goes through as that flag, so the Megatron-LM
  // importer reads, warns about or ignores it as it does in a launch script: a recipe's setting is
  // never dropped unread (issue 30). A false boolean is Megatron's default for its store_true flag.
  static const std::set<std::string> megatron_flags(std::begin(kMegatronFlags), std::end(kMegatronFlags));
  for (const auto& [key, entry] : settings.items()) {
    if (std::any_of(std::begin(kFields), std::end(kFields), [&k = key](const Field& f) { return k == f.setting; }))
      continue;  // mapped above, under the flag name Megatron-LM gives it
    const std::size_t dot = key.find('.');
    if (dot == std::string::npos || key.find('.', dot + 1) != std::string::npos || !entry.contains("value")) continue;
    const std::string section = key.substr(0, dot);
    if (section != "model" && section != "train" && section != "ddp" && section != "optimizer" &&
        section != "mixed_precision")
      continue;
    std::string flag = key.substr(dot + 1);
    std::replace(flag.begin(), flag.end(), '_', '-');
    const json& v = entry["value"];
    std::string text;
    if (v.is_boolean()) {
      if (!v.get<bool>()) continue;
    } else if (v.is_null()) {
      continue;
    } else if (v.is_array()) {
      for (const json& e : v) {
        if (!text.empty()) text += ' ';
        text += e.is_string() ? e.get<std::string>() : e.dump();
      }
      if (text.empty()) continue;
    } else {
      text = v.is_string() ? v.get<std::string>() : v.dump();
    }
    if (!megatron_flags.count(flag) || written.count(flag)) continue;
    written.insert(flag);
    // The args file is read as shell words: a value with | ( ) * and the like is quoted.
    if (text.find_first_of("|()*;&<>$`\\\"'") != std::string::npos && text.find('\'') == std::string::npos)
      text = "'" + text + "'";
    args += "--" + flag + (text.empty() ? "" : " " + text) + "\n";
    origin.emplace_back(entry.value("file", path), entry.value("line", 0));
  }
  // mixed_precision given by name (Bridge's recipe strings, training/mixed_precision.py): its dtype.
  auto mp = settings.find("mixed_precision");
  if (mp != settings.end() && mp->contains("value") && (*mp)["value"].is_string()) {
    const std::string recipe = (*mp)["value"];
    for (const char* dtype : {"bf16", "fp16"}) {
      if (recipe.rfind(dtype, 0) == 0 && !written.count(dtype)) {
        args += "--" + std::string(dtype) + "\n";
        origin.emplace_back(mp->value("file", path), mp->value("line", 0));
      }
    }
    if (recipe.find("fp8") != std::string::npos || recipe.find("fp4") != std::string::npos) {
      notes.warn("mixed_precision \"" + recipe + "\": its FP8/FP4 recipe is not read for Bridge recipes; priced in " +
                 recipe.substr(0, 4));
    }
  }
  // ddp.grad_reduce_in_fp32 = False keeps gradients in bf16: Megatron-LM's --grad-reduce-in-bf16.
  auto reduce = settings.find("ddp.grad_reduce_in_fp32");
  if (reduce != settings.end() && reduce->contains("value") && (*reduce)["value"] == false) {
    args += "--grad-reduce-in-bf16\n";
    origin.emplace_back(reduce->value("file", path), reduce->value("line", 0));
  }
  ImportOptions megatron = options;
  megatron.sets.clear();
  auto r = import_megatron(args, path, megatron);
  if (!r) return r.status();
  r->plan["name"] = "megatron-bridge-" + name;
  for (auto& [pointer, line] : r->positions) {  // args-file lines -> where the recipe set the field
    if (line < 1 || line >= static_cast<int>(origin.size())) continue;
    const auto& [file, source_line] = origin[static_cast<std::size_t>(line)];
    if (file != path) r->position_files[pointer] = file;
    line = source_line;
  }
  // The Megatron importer's findings name args-file lines: the recipe line that set the field.
  for (ImportFinding& f : r->findings) {
    if (f.file != path || f.line < 1 || f.line >= static_cast<int>(origin.size())) continue;
    const auto& [file, source_line] = origin[static_cast<std::size_t>(f.line)];
    const std::string old_where = path + ":" + std::to_string(f.line) + ": ";
    const std::string new_where = file + ":" + std::to_string(source_line) + ": ";
    for (std::string& w : r->warnings) {
      if (w.rfind(old_where, 0) == 0 && w.find(f.message) != std::string::npos) w = new_where + w.substr(old_where.size());
    }
    f.file = file;
    f.line = source_line;
  }
  r->positions[""] = fn.value("line", 0);
  const std::string prefix = "recipe " + name + " (" + path + ":" + std::to_string(fn.value("line", 0)) + ")";
  r->notes.insert(r->notes.begin(), prefix + ": its ConfigContainer fields read as the Megatron-LM flags of the "
                                             "same names");
  read_peft(settings, path, notes, *r);
  {  // the recipe's own notes, warnings and findings after the Megatron importer's
    ImportResult own = notes.finish();
    for (std::string& n : own.notes) r->notes.push_back(std::move(n));
    for (std::string& w : own.warnings) r->warnings.push_back(std::move(w));
    for (ImportFinding& f : own.findings) r->findings.push_back(std::move(f));
  }
  auto hf = settings.find("model.hf_model_id");
  if (hf != settings.end() && hf->contains("value") && (*hf)["value"].is_string()) {
    const std::string id = (*hf)["value"];
    const std::string preset = preset_of_hf_id(id);
    if (!preset.empty()) {
      r->plan["model"] = preset;
      r->positions["/model"] = hf->value("line", 0);
      if (hf->value("file", path) != path) r->position_files["/model"] = hf->value("file", path);
      r->notes.push_back("model: AutoBridge.from_hf_pretrained(\"" + id + "\") is preset " + preset);
      std::erase_if(r->warnings, [](const std::string& w) { return w.find("model left out") != std::string::npos; });
    } else {
      r->warnings.push_back("model " + id + " (AutoBridge.from_hf_pretrained) has no planck preset; give --model");
    }
  }
  if (layout != settings.end() && layout->contains("value") && !(*layout)["value"].is_null() &&
      !(*layout)["value"].is_string()) {
    r->warnings.push_back(layout->value("file", path) + ":" + std::to_string(layout->value("line", 0)) +
                          ": pipeline_model_parallel_layout " + (*layout)["value"].dump() +
                          " is not modelled: planck spreads the layers evenly over the pipeline stages");
  }
  r->unfollowed = std::move(unfollowed);
  return r;
}

}  // namespace

core::Result<std::vector<NamedImport>> import_bridge_recipes(const std::string& path, const std::string& function,
                                                             const ImportOptions& options) {
  PLANCK_IMPORT_TRY(doc, read_python_config(path, function, options, "Megatron-Bridge recipe"));
  std::vector<NamedImport> plans;
  for (const json& fn : doc.value("functions", json::array())) {
    auto r = import_recipe(fn, path, options);
    if (!r) return r.status();
    plans.push_back({fn.value("name", ""), std::move(*r)});
  }
  if (plans.empty()) return core::Status::error(path + ": no recipe function (def NAME() -> ConfigContainer) found");
  return plans;
}

}  // namespace planck::import
