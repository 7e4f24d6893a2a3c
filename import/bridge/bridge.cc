// Megatron-Bridge / NeMo 2 recipes (`def x() -> ConfigContainer`, src/megatron/bridge/recipes and
// perf_recipes) -> plans, one per recipe function. The functions are evaluated by the same Python
// reader as torchtitan's registries (python/planck_pyeval.py: never run, followed across the files
// they import). Bridge's ConfigContainer.model is Megatron-Core's TransformerConfig and .train /
// .ddp carry Megatron-LM's training arguments under the same names, so each field a recipe sets
// becomes the Megatron-LM flag of that name (megatron/training/arguments.py), and the Megatron-LM
// importer reads them as an args file: one set of Megatron semantics (docs/import.md). A
// pipeline_model_parallel_layout (a Megatron layout string, or Megatron-Core's list of stages of
// "embedding" / "decoder" / "mtp" / "loss") becomes --pipeline-model-parallel-layout.

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/plan/pipeline_split.h"
#include "core/plan/presets.h"
#include "import/importer.h"
#include "import/megatron/flags.h"
#include "import/plan_builder.h"
#include "import/bridge/recipe.h"
#include "import/formats/python_config.h"

namespace planck::import::bridge {

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
    // Megatron-Core TransformerConfig's pipeline split and MoE dispatcher fields (the same names in
    // Megatron-LM's arguments.py, the split ones under decoder-first/last-pipeline-num-layers).
    {"model.num_layers_in_first_pipeline_stage", "decoder-first-pipeline-num-layers", false},
    {"model.num_layers_in_last_pipeline_stage", "decoder-last-pipeline-num-layers", false},
    {"model.account_for_embedding_in_pipeline_split", "account-for-embedding-in-pipeline-split", true},
    {"model.account_for_loss_in_pipeline_split", "account-for-loss-in-pipeline-split", true},
    {"model.moe_token_dispatcher_type", "moe-token-dispatcher-type", false},
    {"model.moe_flex_dispatcher_backend", "moe-flex-dispatcher-backend", false},
};

// The leaf names of the fields above, the sections holding them, the model itself and the
// pipeline layout.
const std::set<std::string>& read_leaves() {
  static const std::set<std::string> leaves = [] {
    std::set<std::string> out = {"model", "train", "ddp", "mixed_precision", "dataset", "hf_model_id",
                                 "pipeline_model_parallel_layout", "peft", "dim", "target_modules"};
    for (const Field& f : kFields) out.insert(std::string(f.setting).substr(std::string(f.setting).rfind('.') + 1));
    return out;
  }();
  return leaves;
}

bool matters_fn(const std::string& path) { return setting_matters(path); }

// A model / train / ddp / optimizer / mixed_precision field outside kFields whose name is a
// Megatron-LM flag (import/megatron/flags.h): passed through as that flag, so the Megatron-LM
// importer reads, warns about or ignores it as it does in a launch script (issue 30).
bool passes_as_flag(const std::string& key) {
  static const std::set<std::string> flags(std::begin(kMegatronFlags), std::end(kMegatronFlags));
  const std::size_t dot = key.find('.');
  if (dot == std::string::npos || key.find('.', dot + 1) != std::string::npos) return false;
  const std::string section = key.substr(0, dot);
  if (section != "model" && section != "train" && section != "ddp" && section != "optimizer" &&
      section != "mixed_precision")
    return false;
  std::string flag = key.substr(dot + 1);
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flags.count(flag) > 0;
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

// A value as one word of the args file the Megatron importer's shell reader takes (a layout holds
// '|', '(' and '*').
std::string shell_quoted(const std::string& v) {
  std::string out = "'";
  for (char c : v) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Megatron-Core's layout list (pipeline_parallel_layer_layout.py: a list per stage of LayerType
// names) as the layout string parse_str_to_list reads (E, t, m, L), or nullopt for another value.
std::optional<std::string> layout_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (!v.is_array()) return std::nullopt;
  static const std::pair<const char*, char> kLayers[] = {{"embedding", 'E'}, {"decoder", 't'}, {"mtp", 'm'}, {"loss", 'L'}};
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_array()) return std::nullopt;
    if (i > 0) out += '|';
    for (const json& layer : v[i]) {
      const auto* hit = std::find_if(std::begin(kLayers), std::end(kLayers),
                                     [&](const auto& k) { return layer.is_string() && layer.get<std::string>() == k.first; });
      if (hit == std::end(kLayers)) return std::nullopt;
      out += hit->second;
    }
  }
  return out;
}

// The pipeline layout as Megatron-LM's --pipeline-model-parallel-layout. Megatron-Core takes the
// virtual pipeline size from the layout and asserts an explicit one agrees
// (transformer_config.py:2275-2287); Megatron-LM's flags allow only one of them, so the virtual
// size is left out when the layout gives it.
core::Status write_layout(json& settings, std::string& args, std::vector<std::pair<std::string, int>>& origin,
                          std::set<std::string>& written, const std::string& path) {
  auto it = settings.find("model.pipeline_model_parallel_layout");
  if (it == settings.end() || !it->contains("value") || (*it)["value"].is_null()) return core::Status::ok();
  const std::string where = it->value("file", path) + ":" + std::to_string(it->value("line", 0));
  const auto text = layout_text((*it)["value"]);
  if (!text) {
    return core::Status::error(where + ": pipeline_model_parallel_layout " + (*it)["value"].dump() +
                               " is neither a layout string nor a list of stages of embedding / decoder / mtp / loss "
                               "(megatron/core/transformer/pipeline_parallel_layer_layout.py)");
  }
  auto stages = core::parse_pipeline_layout(*text);
  if (!stages) return core::Status::error(where + ": pipeline_model_parallel_layout: " + stages.message());
  const json* pp = settings.contains("model.pipeline_model_parallel_size")
                       ? &settings["model.pipeline_model_parallel_size"]
                       : nullptr;
  const std::int64_t pp_size = pp && pp->contains("value") && (*pp)["value"].is_number_integer()
                                   ? std::max<std::int64_t>(1, (*pp)["value"].get<std::int64_t>())
                                   : 1;
  const auto n = static_cast<std::int64_t>(stages->size());
  auto vp = settings.find("model.virtual_pipeline_model_parallel_size");
  if (vp != settings.end() && vp->contains("value") && (*vp)["value"].is_number_integer() && n % pp_size == 0 &&
      (*vp)["value"].get<std::int64_t>() != n / pp_size) {
    return core::Status::error(vp->value("file", path) + ":" + std::to_string(vp->value("line", 0)) +
                               ": virtual_pipeline_model_parallel_size " + (*vp)["value"].dump() +
                               " conflicts with the pipeline_model_parallel_layout at " + where + " (" +
                               std::to_string(n) + " stages over pp " + std::to_string(pp_size) +
                               "); Megatron-Core asserts they agree (transformer_config.py:2279)");
  }
  written.insert("num-virtual-stages-per-pipeline-rank");
  written.insert("pipeline-model-parallel-layout");
  args += "--pipeline-model-parallel-layout " + shell_quoted(*text) + "\n";
  origin.emplace_back(it->value("file", path), it->value("line", 0));
  return core::Status::ok();
}

}  // namespace

json override_value(const std::string& raw) {
  std::string t = raw;
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
  t.erase(0, std::min(t.find_first_not_of(" \t"), t.size()));
  if (t.size() >= 2 && (t.front() == '\'' || t.front() == '"') && t.back() == t.front()) return t.substr(1, t.size() - 2);
  std::string low = t;
  for (char& c : low) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (low == "true" || low == "false") return low == "true";
  if (low == "null") return nullptr;
  if (t.size() >= 2 && t.front() == '[' && t.back() == ']') {
    json out = json::array();
    int depth = 0;
    std::size_t start = 1;
    char quote = 0;
    for (std::size_t k = 1; k + 1 <= t.size() - 1; ++k) {
      const char c = t[k];
      if (quote) {
        if (c == quote) quote = 0;
        continue;
      }
      if (c == '\'' || c == '"') quote = c;
      if (c == '[' || c == '{') ++depth;
      if (c == ']' || c == '}') --depth;
      if (c == ',' && depth == 0) {
        out.push_back(override_value(t.substr(start, k - start)));
        start = k + 1;
      }
    }
    const std::string last = t.substr(start, t.size() - 1 - start);
    if (last.find_first_not_of(" \t") != std::string::npos || !out.empty()) out.push_back(override_value(last));
    return out;
  }
  return set_value(t);
}

bool reads(const std::string& key) {
  if (key == "mixed_precision" || key == "ddp.grad_reduce_in_fp32" || key == "model.hf_model_id" ||
      key == "model.pipeline_model_parallel_layout" || key == "peft" || key.rfind("peft.", 0) == 0)
    return true;
  return passes_as_flag(key) ||
         std::any_of(std::begin(kFields), std::end(kFields), [&](const Field& f) { return key == f.setting; });
}

bool setting_matters(const std::string& path) {
  if (path.empty()) return true;
  const std::size_t dot = path.rfind('.');
  return read_leaves().count(dot == std::string::npos ? path : path.substr(dot + 1)) > 0;
}

core::Result<ImportResult> import_recipe(const json& fn, const std::string& recipe_path, const std::string& main_path,
                                         const std::vector<Override>& overrides, const ImportOptions& options) {
  const std::string name = fn.value("name", "");
  const std::string& path = recipe_path;
  PlanBuilder notes("megatron-bridge", main_path);
  json settings = fn["settings"];
  ImportOptions given = options;  // an override settles what the recipe's unfollowed code may set
  for (const Override& o : overrides) {
    const bool had = settings.contains(o.key);
    settings[o.key] = {{"value", o.value}, {"line", o.line}, {"file", o.file}};
    given.sets.emplace_back(o.key, o.text);
    notes.note(o.text + " over the recipe" + (had ? " (replaces its value)" : "") +
               (o.line > 0 ? " at " + o.file + ":" + std::to_string(o.line) : " from the command line"));
  }
  read_optimizer_dtypes(settings, notes);
  json with_sets = fn;
  with_sets["settings"] = settings;
  std::vector<Unfollowed> unfollowed = python_unfollowed(with_sets, path, given, notes, &matters_fn);

  // The args file the Megatron-LM importer reads: one flag per line, each line remembered.
  std::string args;
  std::vector<std::pair<std::string, int>> origin = {{"", 0}};  // args line -> (file, line)
  std::set<std::string> written;
  if (auto st = write_layout(settings, args, origin, written, path); !st) return st;
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
      text = v.is_string() ? shell_quoted(v.get<std::string>()) : v.dump();
    }
    written.insert(f.flag);
    args += "--" + std::string(f.flag) + (text.empty() ? "" : " " + text) + "\n";
    origin.emplace_back(it->value("file", path), it->value("line", 0));
  }
  // Every other field of model / train / ddp / optimizer / mixed_precision whose name is a
  // Megatron-LM flag (import/megatron/flags.h) goes through as that flag, so the Megatron-LM
  // importer reads, warns about or ignores it as it does in a launch script: a recipe's setting is
  // never dropped unread (issue 30). A false boolean is Megatron's default for its store_true flag.
  for (const auto& [key, entry] : settings.items()) {
    if (std::any_of(std::begin(kFields), std::end(kFields), [&k = key](const Field& f) { return k == f.setting; }))
      continue;  // mapped above, under the flag name Megatron-LM gives it
    if (!entry.contains("value") || !passes_as_flag(key) || cross_entropy_field(key)) continue;
    std::string flag = key.substr(key.find('.') + 1);
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
    if (written.count(flag)) continue;
    written.insert(flag);
    // The args file is read as shell words: a value with | ( ) * and the like is quoted.
    if (text.find_first_of("|()*;&<>$`\\\"'") != std::string::npos && text.find('\'') == std::string::npos)
      text = "'" + text + "'";
    args += "--" + flag + (text.empty() ? "" : " " + text) + "\n";
    origin.emplace_back(entry.value("file", path), entry.value("line", 0));
  }
  // Bridge's own default for expert tensor parallelism (models/transformer_config.py
  // _set_moe_expert_tensor_parallel_default, #4579, 2026-07-01): unset with expert parallelism on, it
  // is 1, where Megatron-Core (and Bridge before it) take the tensor-parallel size.
  auto ep = settings.find("model.expert_model_parallel_size");
  if (ep != settings.end() && ep->contains("value") && (*ep)["value"].is_number_integer() &&
      (*ep)["value"].get<std::int64_t>() > 1 && !written.count("expert-tensor-parallel-size")) {
    args += "--expert-tensor-parallel-size 1\n";
    origin.emplace_back(ep->value("file", path), ep->value("line", 0));
    notes.note("expert_tensor_parallel_size unset with expert_model_parallel_size " +
               std::to_string((*ep)["value"].get<std::int64_t>()) +
               ": 1, Megatron-Bridge's default since #4579 (2026-07-01; the tensor-parallel size before it)");
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
  // The world a benchmark recipe was tuned for, when the command line (or the launch) states none.
  // The world and GPU a recipe's name states: the function's own name, not the alias it was asked by
  // (recipes/llama/llama3.py:llama3_8b_pretrain_config is llama3_8b_pretrain_2gpu_h100_bf16_config).
  const std::string defined_as = fn.value("function", name);
  const std::string world_note = benchmark_world(defined_as, megatron);
  auto r = import_megatron(args, path, megatron);
  if (!r) {  // "PATH:N: ..." names a line of the args file: say where the recipe or launch set it
    const std::string lead = path + ":";
    const std::string& m = r.message();
    std::size_t end = lead.size();
    while (end < m.size() && std::isdigit(static_cast<unsigned char>(m[end]))) ++end;
    if (m.compare(0, lead.size(), lead) != 0 || end == lead.size() || end >= m.size() || m[end] != ':') return r.status();
    const std::size_t n = std::stoul(m.substr(lead.size(), end - lead.size()));
    if (n < 1 || n >= origin.size()) return r.status();
    return core::Status::error(origin[n].first + ":" + std::to_string(origin[n].second) + m.substr(end));
  }
  r->plan["name"] = "megatron-bridge-" + name;
  r->source_path = main_path;
  for (auto& [pointer, line] : r->positions) {  // args-file lines -> where the recipe set the field
    if (line < 1 || line >= static_cast<int>(origin.size())) continue;
    const auto& [file, source_line] = origin[static_cast<std::size_t>(line)];
    if (file != main_path) r->position_files[pointer] = file;
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
  if (path != main_path) r->position_files[""] = path;
  const std::string prefix = "recipe " + name + " (" + path + ":" + std::to_string(fn.value("line", 0)) + ")";
  r->notes.insert(r->notes.begin(), prefix + ": its ConfigContainer fields read as the Megatron-LM flags of the "
                                             "same names");
  if (!world_note.empty()) r->notes.push_back(world_note);
  benchmark_gpu(defined_as, path == main_path ? "" : path, fn.value("line", 0), *r, notes);
  read_peft(settings, main_path, notes, *r);
  read_cross_entropy(settings, main_path, notes, *r);
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
      if (hf->value("file", path) != main_path) r->position_files["/model"] = hf->value("file", path);
      r->notes.push_back("model: AutoBridge.from_hf_pretrained(\"" + id + "\") is preset " + preset);
      std::erase_if(r->warnings, [](const std::string& w) { return w.find("model left out") != std::string::npos; });
    } else {
      r->warnings.push_back("model " + id + " (AutoBridge.from_hf_pretrained) has no planck preset; give --model");
    }
  }
  r->unfollowed = std::move(unfollowed);
  return r;
}

}  // namespace planck::import::bridge

namespace planck::import {

core::Result<std::vector<NamedImport>> import_bridge_recipes(const std::string& path, const std::string& function,
                                                             const ImportOptions& options) {
  PLANCK_IMPORT_TRY(doc, read_python_config(path, function, options, "Megatron-Bridge recipe"));
  std::vector<bridge::Override> sets;  // --set model.tensor_model_parallel_size=8: the command line wins
  for (const auto& [key, text] : options.sets) sets.push_back({key, set_value(text), path, 0, "--set " + key + "=" + text});
  std::vector<NamedImport> plans;
  for (const nlohmann::json& fn : doc.value("functions", nlohmann::json::array())) {
    auto r = bridge::import_recipe(fn, path, path, sets, options);
    if (!r && !function.empty()) return r.status();
    if (!r) {  // every function: this one is reported, the others still read
      ImportResult failed;
      failed.source_path = path;
      failed.failed = r.message();
      plans.push_back({fn.value("name", ""), std::move(failed)});
      continue;
    }
    plans.push_back({fn.value("name", ""), std::move(*r)});
  }
  if (plans.empty()) return core::Status::error(path + ": no recipe function (def NAME() -> ConfigContainer) found");
  return plans;
}

}  // namespace planck::import
