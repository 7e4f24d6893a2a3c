// torchtitan Python config registries (config_registry.py, torchtitan since 9810191, 2026-02-23)
// -> plans, one per registry function.
//
// python/planck_torchtitan_registry.py evaluates each function with Python's `ast` (nothing of
// the user's code runs) and prints its settings as "a.b" paths with their lines. This file maps
// them onto the TOML-era [section] key layout that import_torchtitan_table reads, following the
// renames (torchtitan config/configs.py at b5bcd76c, 2026-08-21):
//   - TrainingConfig.num_tokens_per_microbatch_per_dp_rank / max_context_length (73aed7f6c,
//     2026-08-20) replace local_batch_size / seq_len: rows per micro-batch = tokens / context;
//     num_tokens_per_train_step (-1 = tokens x micro-batches x dp) replaces global_batch_size.
//   - ParallelismConfig.num_pp_microbatches replaces pipeline_parallel_microbatch_size.
//   - activation_checkpoint = FullAC.Config() / SelectiveAC.Config() / MemoryBudgetAC.Config() /
//     None (c5d93d109, 2026-06-15) replaces ActivationCheckpointConfig(mode=...).
//   - model_spec = model_registry("70B", ...) names a flavour of the package's __init__.py.

#include <toml++/toml.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/base/format.h"
#include "core/base/input_file.h"
#include "core/base/regular_file.h"
#include "core/plan/json_value.h"
#include "import/importer.h"
#include "import/plan_builder.h"
#include "import/python_script.h"
#include "import/torchtitan_common.h"

namespace planck::import {

namespace {

using json = nlohmann::json;

// Registry settings read with their TOML-era names (section.key, the same on both sides).
constexpr const char* kCopied[] = {
    "parallelism.data_parallel_replicate_degree",
    "parallelism.data_parallel_shard_degree",
    "parallelism.tensor_parallel_degree",
    "parallelism.pipeline_parallel_degree",
    "parallelism.context_parallel_degree",
    "parallelism.expert_parallel_degree",
    "parallelism.expert_tensor_parallel_degree",
    "parallelism.fsdp_reshard_after_forward",
    "parallelism.pipeline_parallel_schedule",
    "parallelism.pipeline_parallel_microbatch_size",
    "parallelism.num_pp_microbatches",
    "training.local_batch_size",
    "training.global_batch_size",
    "training.seq_len",
    "training.mixed_precision_param",
    "training.mixed_precision_reduce",
    "training.enable_cpu_offload",
    "activation_checkpoint.mode",
    "activation_checkpoint.selective_ac_option",
    "compile.enable",
    "compile.components",
};

// The leaf names a setting that matters ends in: what kCopied and the readers below take, the
// sections holding them (a whole section replaced), and the model's sizes and converters. A
// construct not followed that may set one of these is refused (Unfollowed); others are noted.
bool setting_matters(const std::string& path) {
  static const std::set<std::string> leaves = [] {
    std::set<std::string> out = {"parallelism",
                                 "training",
                                 "activation_checkpoint",
                                 "model_spec",
                                 "model",
                                 "num_tokens_per_microbatch_per_dp_rank",
                                 "max_context_length",
                                 "num_tokens_per_train_step",
                                 "converters",
                                 "flavor",
                                 "dim",
                                 "n_layers",
                                 "n_heads",
                                 "n_kv_heads",
                                 "vocab_size",
                                 "hidden_dim",
                                 "inter_dim",
                                 "moe_inter_dim",
                                 "head_dim",
                                 "n_routed_experts",
                                 "n_shared_experts",
                                 "n_activated_experts",
                                 "num_experts",
                                 "top_k",
                                 "moe_hidden_dim",
                                 "n_dense_layers",
                                 "enable_weight_tying",
                                 "mode"};
    for (const char* key : kCopied) out.insert(std::string(key).substr(std::string(key).rfind('.') + 1));
    return out;
  }();
  if (path.empty()) return true;
  const std::size_t dot = path.rfind('.');
  return leaves.count(dot == std::string::npos ? path : path.substr(dot + 1)) > 0;
}

// Positions of settings written in another file than the registry (a base function imported from
// the package) are kept apart from the registry's own lines: line + index x kFileStride, split
// again in locate_files() once the plan is built.
constexpr int kFileStride = 1 << 20;

class Table {
 public:
  explicit Table(std::string main_file) : main_(std::move(main_file)) {}
  toml::table& root() { return root_; }
  const std::map<std::string, int>& lines() const { return lines_; }
  const std::vector<std::string>& files() const { return files_; }

  // The position of a setting: its line, encoded with its file when that is not the registry.
  int position(const json& setting) {
    const int line = setting.value("line", 0);
    const std::string file = setting.value("file", main_);
    if (file == main_ || line <= 0 || line >= kFileStride) return line;
    auto it = std::find(files_.begin(), files_.end(), file);
    if (it == files_.end() && files_.size() >= 1000) return 0;  // beyond what the encoding holds: unlocated
    if (it == files_.end()) it = files_.insert(files_.end(), file);
    return static_cast<int>(it - files_.begin() + 1) * kFileStride + line;
  }

  void set(const std::string& dotted, const json& value, int line) {
    const std::size_t dot = dotted.find('.');
    set_in(dotted.substr(0, dot), dotted.substr(dot + 1), value, line);
  }
  // `section` may be dotted ("quantize.linear.float8"): a path of nested tables, as TOML writes it.
  void set_in(const std::string& section, const std::string& key, const json& value, int line) {
    toml::table* t = &root_;
    for (std::size_t start = 0; start <= section.size();) {
      const std::size_t end = std::min(section.find('.', start), section.size());
      const std::string part = section.substr(start, end - start);
      if (!t->contains(part)) t->insert(part, toml::table{});
      t = (*t)[part].as_table();
      if (!t) return;
      start = end + 1;
    }
    const std::string dotted = section + "." + key;
    if (value.is_array()) {
      toml::array a;
      for (const json& e : value) {
        if (e.is_string()) a.push_back(e.get<std::string>());
      }
      t->insert_or_assign(key, std::move(a));
      lines_[dotted] = line;
      return;
    }
    if (value.is_boolean()) t->insert_or_assign(key, value.get<bool>());
    else if (auto i = core::json_int64(value)) t->insert_or_assign(key, *i);
    else if (value.is_number()) t->insert_or_assign(key, value.get<double>());
    else if (value.is_string()) t->insert_or_assign(key, value.get<std::string>());
    else return;
    lines_[dotted] = line;
  }
  // A setting that is a value (one the reader could not evaluate is an Unfollowed, see unfollowed()).
  const json* value(const json& settings, const std::string& dotted) {
    auto it = settings.find(dotted);
    if (it == settings.end() || it->contains("unknown")) return nullptr;
    return it->contains("value") ? &(*it)["value"] : nullptr;
  }
  int line_of(const json& settings, const std::string& dotted) {
    auto it = settings.find(dotted);
    return it == settings.end() ? 0 : position(*it);
  }

 private:
  std::string main_;
  toml::table root_;
  std::map<std::string, int> lines_;
  std::vector<std::string> files_;
};

std::string where(const json& item, const std::string& main) {
  return item.value("file", main) + ":" + std::to_string(item.value("line", 0));
}

}  // namespace

// What the reader could not follow: those that may set a setting that matters are refused, the
// others are notes (--explain); a setting --set gives is settled.
std::vector<Unfollowed> python_unfollowed(const nlohmann::json& fn, const std::string& path,
                                          const ImportOptions& options, PlanBuilder& b,
                                          bool (*matters)(const std::string&)) {
  std::vector<Unfollowed> out;
  auto given = [&](const std::string& p) {  // --set gives the value, whatever the code does
    return std::any_of(options.sets.begin(), options.sets.end(), [&](const auto& s) { return s.first == p; });
  };
  for (const json& u : fn.value("unfollowed", json::array())) {
    std::string settings;
    for (const json& t : u.value("touches", json::array())) {
      const std::string p = t.get<std::string>();
      if (!matters(p) || given(p)) continue;
      settings += (settings.empty() ? "" : ", ") + (p.empty() ? std::string("the whole config") : p);
    }
    const std::string text = "`" + u.value("construct", "") + "` not followed: " + u.value("why", "");
    if (settings.empty()) {
      b.note(where(u, path) + ": " + text + " (sets nothing planck reads)");
      continue;
    }
    out.push_back({u.value("file", path), u.value("line", 0), u.value("construct", ""), u.value("why", ""), settings});
  }
  for (const auto& [key, s] : fn["settings"].items()) {
    if (!s.contains("unknown")) continue;
    if (!matters(key) || given(key)) {
      b.note(where(s, path) + ": " + key + " = `" + s.value("unknown", "") +
             "` not evaluated (planck does not read it)");
      continue;
    }
    std::string why = s.value("why", "");
    out.push_back({s.value("file", path), s.value("line", 0), s.value("unknown", ""),
                   why.empty() ? "not a value planck can evaluate without running the code" : why, key});
  }
  return out;
}

namespace {

// num_tokens_per_microbatch_per_dp_rank = rows x max_context_length (the registries write
// `8 * 8192`); planck's batch is rows of seq_len.
core::Status read_tokens(const json& s, Table& t, PlanBuilder& b) {
  auto line_of = [&](const json& settings, const std::string& dotted) { return t.line_of(settings, dotted); };
  auto error = [&](const std::string& dotted, const std::string& message) {
    auto it = s.find(dotted);
    return core::Status::error((it == s.end() ? b.path() : where(*it, b.path())) + ": " + message);
  };
  const json* tokens = t.value(s, "training.num_tokens_per_microbatch_per_dp_rank");
  const json* context = t.value(s, "training.max_context_length");
  const json* step = t.value(s, "training.num_tokens_per_train_step");
  if (!tokens && !context) return core::Status::ok();
  const std::int64_t ctx = context ? core::json_int64(*context).value_or(2048) : 2048;
  const std::int64_t tok = tokens ? core::json_int64(*tokens).value_or(16384) : 16384;
  const int tok_line = line_of(s, "training.num_tokens_per_microbatch_per_dp_rank");
  if (ctx < 1 || tok < 1) {
    return error("training.num_tokens_per_microbatch_per_dp_rank",
                 "num_tokens_per_microbatch_per_dp_rank " + std::to_string(tok) + " and max_context_length " +
                     std::to_string(ctx) + " must be >= 1");
  }
  if (tok < ctx) {  // fewer tokens than one context: a micro-batch is one sequence of `tok` tokens
    t.set("training.local_batch_size", 1, tok_line);
    t.set("training.seq_len", tok, tok_line);
    b.note("micro-batch = num_tokens_per_microbatch_per_dp_rank " + std::to_string(tok) + " < max_context_length " +
           std::to_string(ctx) + ": one sequence of " + std::to_string(tok) + " tokens");
    return core::Status::ok();
  }
  if (tok % ctx != 0) {
    return error("training.num_tokens_per_microbatch_per_dp_rank",
                 "num_tokens_per_microbatch_per_dp_rank " + std::to_string(tok) +
                     " is not a whole number of max_context_length " + std::to_string(ctx) +
                     " rows; planck models a micro-batch as rows of seq_len");
  }
  t.set("training.local_batch_size", tok / ctx, tok_line);
  t.set("training.seq_len", ctx, context ? line_of(s, "training.max_context_length") : 0);
  b.note("micro-batch = num_tokens_per_microbatch_per_dp_rank " + std::to_string(tok) + " / max_context_length " +
         std::to_string(ctx) + " = " + std::to_string(tok / ctx) + " rows of " + std::to_string(ctx) + " tokens" +
         (tokens ? "" : " (torchtitan default 16384 tokens)"));
  if (step && core::json_int64(*step).value_or(0) > 0) {
    const std::int64_t n = *core::json_int64(*step);
    if (n % ctx != 0) {
      return error("training.num_tokens_per_train_step", "num_tokens_per_train_step " + std::to_string(n) +
                                                             " is not a multiple of max_context_length " +
                                                             std::to_string(ctx));
    }
    t.set("training.global_batch_size", n / ctx, line_of(s, "training.num_tokens_per_train_step"));
  }
  return core::Status::ok();
}

// The policy classes of torchtitan/distributed/activation_checkpoint.py, or the older
// ActivationCheckpointConfig(mode=...) (copied through kCopied).
void read_checkpointing(const json& s, Table& t, PlanBuilder& b) {
  auto it = s.find("activation_checkpoint");
  if (it == s.end() || it->contains("unknown")) return;
  const int line = t.position(*it);
  if (it->contains("value") && (*it)["value"].is_null()) {
    t.set("activation_checkpoint.mode", "none", line);
    return;
  }
  // Registries have op-level selective AC only: torchtitan dropped layer SAC
  // (selective_ac_option) in 114151ad4, 2026-03-23; one that still states the option keeps it.
  if (!s.contains("activation_checkpoint.selective_ac_option")) {
    t.set("activation_checkpoint.selective_ac_option", "op", line);
  }
  const std::string cls = it->value("class", "");
  const std::pair<const char*, const char*> kPolicies[] = {
      {"FullAC.Config", "full"}, {"SelectiveAC.Config", "selective"}, {"MemoryBudgetAC.Config", "memory_budget"}};
  for (const auto& [name, mode] : kPolicies) {
    if (cls == name) {
      t.set("activation_checkpoint.mode", mode, line);
      b.note("activation checkpointing " + cls + "() -> " + mode);
      return;
    }
  }
  if (cls != "ActivationCheckpointConfig")
    b.warn(where(*it, b.path()) + ": activation_checkpoint = " + cls +
           "() is not a policy planck knows; checkpointing left at planck's default");
}

// model_registry(flavor, converters=[Float8LinearConverter.Config(...), ...]): the converters as
// the TOML path reads them ([model] converters, [quantize.linear.float8] recipe_name), from
// torchtitan/components/quantization/{float8,mx}.py's classes.
void read_converters(const json& spec, Table& t, PlanBuilder& b) {
  auto opts = spec.find("options");
  if (opts == spec.end() || !opts->contains("converters") || !(*opts)["converters"].is_array()) return;
  const int line = spec.value("line", 0);
  json names = json::array();
  for (const json& c : (*opts)["converters"]) {
    const std::string cls = c.is_object() ? c.value("class", "") : "";
    const json fields = c.is_object() ? c.value("fields", json::object()) : json::object();
    static const std::pair<const char*, const char*> kConverters[] = {
        {"Float8LinearConverter.Config", "quantize.linear.float8"},
        {"MXFP8LinearConverter.Config", "quantize.linear.mx"},
        {"Float8GroupedExpertsConverter.Config", "quantize.grouped_mm.float8"},
        {"MXFP8GroupedExpertsConverter.Config", "quantize.grouped_mm.mx"}};
    std::string name = cls;
    for (const auto& [from, to] : kConverters) {
      if (cls == from) name = to;
    }
    if (cls == "LoRAConverter.Config") {
      // torchtitan/components/lora.py: LoRA adapters of `rank` (default 8) beside frozen weights,
      // on every Linear unless target_modules names some (planck: every linear of each layer).
      t.set_in("lora", "rank", fields.value("rank", json(8)), line);
      if (fields.contains("target_modules")) {
        b.unmodelled("LoRAConverter target_modules " + fields["target_modules"].dump(), line,
                     "adapters priced on every linear of each transformer layer");
      }
      continue;
    }
    const bool emulate = fields.contains("emulate") && fields["emulate"].is_boolean() && fields["emulate"].get<bool>();
    if (name == "quantize.linear.float8" && emulate) {
      b.unmodelled("Float8LinearConverter emulate=True", line,
                   "FP8 emulated in high precision: priced as bf16 linears (the emulation's own cost is not)");
      continue;
    }
    names.push_back(name);
    if (name == "quantize.linear.float8") {
      for (const char* key : {"recipe_name", "enable_fsdp_float8_all_gather"}) {
        if (fields.contains(key)) t.set_in("quantize.linear.float8", key, fields[key], line);
      }
    }
  }
  t.set_in("model", "converters", names, line);
  b.note("model_registry converters: " + names.dump());
}

// model_spec = model_registry(flavor, ...): the package's name is the registry's directory.
void read_model(const json& s, const std::string& path, Table& t, PlanBuilder& b, const json** args) {
  auto it = s.find("model_spec");
  if (it == s.end() || !it->contains("flavor")) return;  // an unknown model_spec is an Unfollowed
  const std::string init = it->value("init", path);
  const std::string package = std::filesystem::absolute(init).parent_path().filename().string();
  const std::string flavor = (*it)["flavor"];
  t.set("model.name", package, t.position(*it));
  t.set("model.flavor", flavor, t.position(*it));
  read_converters(*it, t, b);
  if (it->contains("flavor_line")) {
    b.note("model_registry(\"" + flavor + "\") is the flavour at " + it->value("init", "") + ":" +
           std::to_string(it->value("flavor_line", 0)));
    *args = &(*it)["model_args"];
  } else {
    b.note("model_registry(\"" + flavor + "\"): no such flavour found in " + it->value("init", "__init__.py"));
  }
}

// A setting or flavour size beyond 64 bits is an error at its line: get<int64_t>() would wrap
// 2**64 - 1 to -1, which later reads as "unset" and is inferred (issue 34).
core::Status check_int_range(const json& s, PlanBuilder& b) {
  const std::string limit = " does not fit in a signed 64-bit integer (at most 9223372036854775807)";
  for (const auto& [key, entry] : s.items()) {
    if (!entry.is_object()) continue;
    if (entry.contains("value") && core::json_int_out_of_range(entry["value"]))
      return b.error(entry.value("line", 0), key + " = " + core::json_excerpt(entry["value"]) + limit);
    if (!entry.contains("model_args") || !entry["model_args"].is_object()) continue;
    for (const auto& [name, v] : entry["model_args"].items()) {
      if (core::json_int_out_of_range(v))
        return core::Status::error(entry.value("init", std::string("__init__.py")) + ":" +
                                   std::to_string(entry.value("flavor_line", 0)) + ": " + name + " = " + core::json_excerpt(v) + limit);
    }
  }
  return core::Status::ok();
}

// optimizer = OptimizersContainer.Config(name=...) or a helper of the registry whose body names
// its optimizers (`optimizer_name="DistMuon"`, Kimi's _dist_muon_optimizer): Muon when any is.
void read_optimizer(const json& s, Table& t, PlanBuilder& b) {
  auto it = s.find("optimizer");
  if (it == s.end()) return;
  const int line = t.position(*it);
  std::vector<std::string> names;
  if (const json* n = t.value(s, "optimizer.name"); n && n->is_string()) names.push_back(n->get<std::string>());
  for (const json& n : it->value("optimizer_names", json::array())) {
    if (n.is_string()) names.push_back(n.get<std::string>());
  }
  // A followed helper's OptimizersContainer.Config(param_groups=[ParamGroupConfig(optimizer_name=...)]).
  if (const json* groups = t.value(s, "optimizer.param_groups"); groups && groups->is_array()) {
    for (const json& g : *groups) {
      if (!g.is_object() || !g.contains("fields")) continue;
      const json& n = g["fields"].value("optimizer_name", json());
      if (n.is_string()) names.push_back(n.get<std::string>());
    }
  }
  if (names.empty()) return;
  std::string chosen;
  for (const std::string& n : names) {
    if (lower(n).find("muon") != std::string::npos) chosen = n;
  }
  if (chosen.empty()) chosen = names.front();
  t.set("optimizer.name", chosen, line);
  if (names.size() > 1) b.note("optimizer names in the registry's helper: " + core::join(names, ", ") + "; priced as " + chosen);
}

// Splits the positions Table::position encoded into line and file.
void locate_files(ImportResult& r, const std::vector<std::string>& files) {
  for (auto& [pointer, line] : r.positions) {
    const int index = line / kFileStride;
    if (index < 1 || index > static_cast<int>(files.size())) continue;
    r.position_files[pointer] = files[static_cast<std::size_t>(index - 1)];
    line %= kFileStride;
  }
}

core::Result<ImportResult> import_function(const json& fn, const std::string& path, const ImportOptions& options) {
  const std::string name = fn.value("name", "");
  const std::string main = fn.value("file", path);
  PlanBuilder b("torchtitan", path);
  b.plan()["name"] = "torchtitan-" + name;
  b.note("registry function " + name + " (" + path + ":" + std::to_string(fn.value("line", 0)) + ")");
  for (const auto& n : fn.value("notes", json::array())) b.note(where(n, main) + ": " + n.value("text", ""));
  json with_sets = fn;  // --set SECTION.KEY=VALUE replaces what the function sets (the command line wins)
  for (const auto& [name, text] : options.sets) {
    if (name.find('.') == std::string::npos) {
      return core::Status::error("--set " + name + ": a torchtitan setting is SECTION.KEY, e.g. "
                                 "parallelism.tensor_parallel_degree");
    }
    const bool had = with_sets["settings"].contains(name);
    with_sets["settings"][name] = {{"value", set_value(text)}, {"line", 0}, {"file", main}};
    b.note("--set " + name + "=" + text + " from the command line" + (had ? " (replaces the function's value)" : ""));
  }
  std::vector<Unfollowed> refused = python_unfollowed(with_sets, main, options, b, &setting_matters);
  b.locate("", fn.value("line", 0));
  const json& s = with_sets["settings"];
  if (auto st = check_int_range(s, b); !st) return st;
  Table t(main);
  for (const char* key : kCopied) {
    if (const json* v = t.value(s, key)) t.set(key, *v, t.line_of(s, key));
  }
  if (auto st = read_tokens(s, t, b); !st) return st;
  read_checkpointing(s, t, b);
  // CompileConfig(enable_async_tensor_parallel=True): the TOML path's [parallelism] key.
  if (const json* v = t.value(s, "compile.enable_async_tensor_parallel")) {
    t.set("parallelism.enable_async_tensor_parallel", *v, t.line_of(s, "compile.enable_async_tensor_parallel"));
  }
  read_optimizer(s, t, b);
  const json* args = nullptr;
  read_model(s, path, t, b, &args);
  TorchtitanInput input;
  input.lines = &t.lines();
  input.check_unknown_keys = false;  // registries carry many fields that do not bear on the layout
  input.model_args = args;
  auto r = import_torchtitan_table(t.root(), b, options, input);
  if (!r) return r;
  locate_files(*r, t.files());
  r->unfollowed = std::move(refused);
  return r;
}

std::int64_t arg(const json& a, const char* key) {
  auto it = a.find(key);
  return it != a.end() ? core::json_int64(*it).value_or(0) : 0;
}

}  // namespace

// The directories the reader searches after the registry's own and its parents: --python-path,
// then PYTHONPATH (python3 runs with -I, which ignores PYTHONPATH, so planck passes it).
std::vector<std::string> python_search_path(const ImportOptions& options) {
  std::vector<std::string> out = options.python_path;
  if (const char* env = std::getenv("PYTHONPATH")) {
    std::string all = env;
    std::size_t start = 0;
    while (start <= all.size()) {
      const std::size_t colon = std::min(all.find(':', start), all.size());
      if (colon > start) out.push_back(all.substr(start, colon - start));
      start = colon + 1;
    }
  }
  return out;
}

bool registry_model(const json& a, const std::string& described_as, PlanBuilder& b) {
  core::ModelSpec m;
  m.name = "custom";
  m.layers = arg(a, "n_layers");
  m.hidden = arg(a, "dim");
  m.heads = arg(a, "n_heads");
  m.kv_heads = arg(a, "n_kv_heads") > 0 ? arg(a, "n_kv_heads") : m.heads;
  m.vocab = arg(a, "vocab_size");
  m.head_dim = arg(a, "head_dim");
  m.experts = std::max(arg(a, "num_experts"), arg(a, "n_routed_experts"));
  m.experts_per_token = std::max(arg(a, "top_k"), arg(a, "n_activated_experts"));
  m.moe_ffn_hidden = std::max(arg(a, "moe_hidden_dim"), arg(a, "moe_inter_dim"));
  m.shared_experts = std::max(arg(a, "num_shared_experts"), arg(a, "n_shared_experts"));
  m.dense_layers = arg(a, "n_dense_layers");
  m.ffn_hidden = std::max(arg(a, "hidden_dim"), arg(a, "inter_dim"));
  if (m.ffn_hidden == 0 && m.experts > 0 && m.dense_layers == 0) m.ffn_hidden = m.moe_ffn_hidden;
  m.tied_embeddings = a.value("enable_weight_tying", false);
  if (m.layers < 1 || m.hidden < 1 || m.heads < 1 || m.vocab < 1 || m.ffn_hidden < 1) return false;
  b.set_model(m, described_as + " (sizes written in the flavour's builder)");
  return true;
}

core::Result<std::vector<NamedImport>> import_torchtitan_registry(const std::string& path,
                                                                  const std::string& function,
                                                                  const ImportOptions& options) {
  // The registry and the __init__.py beside it pass planck's input gate (regular files,
  // kMaxConfigBytes) before python3 starts (issue 34: an __init__.py linked to /dev/zero grew
  // python3 to 3.8 GB, a FIFO stalled it); the reader applies the same gate to every module it
  // follows (python/planck_pyvalues.py Loader.parse).
  auto registry = core::read_regular_file(path, core::kMaxConfigBytes, core::kConfigLimitName);
  if (!registry) return registry.status();
  if (!*registry) return core::Status::error("cannot read " + path + ": no such file");
  const std::filesystem::path init_path = std::filesystem::absolute(path).lexically_normal().parent_path() / "__init__.py";
  auto init = core::read_regular_file(init_path.string(), core::kMaxConfigBytes, core::kConfigLimitName);
  if (!init) return core::Status::error(path + ": the package's " + init.message());
  std::vector<std::string> args = {path};
  if (!function.empty()) args.push_back(function);
  for (const std::string& dir : python_search_path(options)) {
    args.push_back("--path");
    args.push_back(dir);
  }
  auto out = run_python(torchtitan_registry_script(), args, 60);
  if (!out) return core::Status::error(path + ": cannot read the torchtitan registry: " + out.message());
  json doc = json::parse(*out, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return core::Status::error(path + ": the registry reader printed no JSON (planck's python/ script)");
  }
  if (doc.contains("error")) return core::Status::error(doc["error"].get<std::string>());
  std::vector<NamedImport> plans;
  for (const json& fn : doc.value("functions", json::array())) {
    auto r = import_function(fn, path, options);
    if (!r) return r.status();
    plans.push_back({fn.value("name", ""), std::move(*r)});
  }
  if (plans.empty()) {
    return core::Status::error(path + ": no registry function (def NAME() -> Trainer.Config) found");
  }
  return plans;
}

}  // namespace planck::import
