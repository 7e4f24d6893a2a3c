// The registry-only settings of a torchtitan config registry onto the TOML-era keys (see
// registry.cc for the renames they follow).

#include <string>
#include <utility>
#include <vector>

#include "core/base/format.h"
#include "core/plan/json_value.h"
#include "import/formats/python_config.h"
#include "import/torchtitan/common.h"
#include "import/torchtitan/registry_table.h"

namespace planck::import::registry {

using json = nlohmann::json;

// num_tokens_per_microbatch_per_dp_rank = rows x max_context_length (the registries write
// `8 * 8192`); planck's batch is rows of seq_len.
core::Status read_tokens(const json& s, Table& t, PlanBuilder& b) {
  auto line_of = [&](const json& settings, const std::string& dotted) { return t.line_of(settings, dotted); };
  auto error = [&](const std::string& dotted, const std::string& message) {
    auto it = s.find(dotted);
    return core::Status::error((it == s.end() ? b.path() : python_where(*it, b.path())) + ": " + message);
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
  std::int64_t rows = 1;
  if (tok < ctx) {  // fewer tokens than one context: a micro-batch is one sequence of `tok` tokens
    t.set("training.seq_len", tok, tok_line);
    b.note("micro-batch = num_tokens_per_microbatch_per_dp_rank " + std::to_string(tok) + " < max_context_length " +
           std::to_string(ctx) + ": one sequence of " + std::to_string(tok) + " tokens");
  } else if (tok % ctx != 0) {
    return error("training.num_tokens_per_microbatch_per_dp_rank",
                 "num_tokens_per_microbatch_per_dp_rank " + std::to_string(tok) +
                     " is not a whole number of max_context_length " + std::to_string(ctx) +
                     " rows; planck models a micro-batch as rows of seq_len");
  } else {
    rows = tok / ctx;
    t.set("training.seq_len", ctx, context ? line_of(s, "training.max_context_length") : 0);
    b.note("micro-batch = num_tokens_per_microbatch_per_dp_rank " + std::to_string(tok) + " / max_context_length " +
           std::to_string(ctx) + " = " + std::to_string(rows) + " rows of " + std::to_string(ctx) + " tokens" +
           (tokens ? "" : " (torchtitan default 16384 tokens)"));
  }
  t.set("training.local_batch_size", rows, tok_line);
  // A pipeline micro-batch is one dataloader batch of those tokens, and a rank runs
  // num_pp_microbatches of them (default 1, ignored without PP) per accumulation step
  // (torchtitan trainer.py:409-414, 856-863, config/configs.py:232-236 @b5bcd76c; since #4121):
  // the local batch is rows x that count, in pipeline micro-batches of `rows`.
  const json* pp_v = t.value(s, "parallelism.pipeline_parallel_degree");
  if (pp_v && core::json_int64(*pp_v).value_or(1) > 1) {
    const json* n_v = t.value(s, "parallelism.num_pp_microbatches");
    const std::int64_t n = n_v ? core::json_int64(*n_v).value_or(0) : 1;
    const int n_line = n_v ? line_of(s, "parallelism.num_pp_microbatches") : tok_line;
    if (n < 1) {
      return error("parallelism.num_pp_microbatches", "num_pp_microbatches " + std::to_string(n) +
                                                          ": torchtitan raises \"parallelism.num_pp_microbatches must "
                                                          "be greater than 0\" (trainer.py:124-127)");
    }
    t.set("parallelism.pipeline_parallel_microbatch_size", rows, tok_line);
    t.set("training.local_batch_size", rows * n, n_line);
    b.note("pipeline: num_pp_microbatches " + std::to_string(n) + (n_v ? "" : " (torchtitan's default)") +
           " micro-batches of " + std::to_string(rows) + " rows per accumulation step: local batch " +
           std::to_string(rows * n) + " rows");
  }
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
  if (it == s.end()) {  // Trainer.Config's default, SelectiveAC: op-level
    t.set("activation_checkpoint.selective_ac_option", "op", 0);
    return;
  }
  if (it->contains("unknown")) return;
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
    b.warn(python_where(*it, b.path()) + ": activation_checkpoint = " + cls +
           "() is not a policy planck knows; checkpointing left at planck's default");
}

namespace {

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
      if (fields.contains("target_modules") && fields["target_modules"].is_array()) {
        // Matched by a Linear's own field name (lora.py convert: last_segment in target_modules);
        // wkv builds both wk and wv (models/common/attention.py), w1 / w3 / w2 are the MLP's
        // gate / up / down.
        static const LoraNames kNames = {{"wq", {"q"}},    {"wk", {"k"}},      {"wv", {"v"}},
                                         {"wkv", {"k", "v"}}, {"wo", {"o"}},      {"w1", {"gate"}},
                                         {"w3", {"up"}},    {"w2", {"down"}}};
        std::string other;
        const json targets = json::parse(map_lora_targets(fields["target_modules"], kNames, &other).dump());
        t.set_in("lora", "targets", targets, line);
        if (!other.empty()) {
          b.unmodelled("LoRAConverter target_modules " + other, line,
                       "no adapters priced on them (planck prices adapters on q, k, v, o and the MLP's linears)");
        }
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

}  // namespace

// model_spec = model_registry(flavor, ...): the package's name is the registry's directory.
void read_model(const json& s, const std::string& path, Table& t, PlanBuilder& b, const json** args) {
  auto it = s.find("model_spec");
  if (it == s.end() || !it->contains("flavor")) return;  // an unknown model_spec is an Unfollowed
  const std::string init = it->value("init", path);
  const std::string package = std::filesystem::absolute(init).parent_path().filename().string();
  const std::string flavor = (*it)["flavor"];
  t.set("model.name", package, t.position(*it));
  t.set("model.flavor", flavor, t.position(*it));
  if (it->contains("options") && (*it)["options"].contains("num_mtp_layers")) {
    t.set("model.num_mtp_layers", (*it)["options"]["num_mtp_layers"], t.position(*it));
  }
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

}  // namespace planck::import::registry
