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

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/base/input_file.h"
#include "core/base/regular_file.h"
#include "core/plan/json_value.h"
#include "import/importer.h"
#include "import/plan_builder.h"
#include "import/formats/python_config.h"
#include "import/torchtitan/common.h"
#include "import/torchtitan/registry_table.h"

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

using registry::Table;

core::Result<ImportResult> import_function(const json& fn, const std::string& path, const ImportOptions& options) {
  const std::string name = fn.value("name", "");
  const std::string main = fn.value("file", path);
  PlanBuilder b("torchtitan", path);
  b.plan()["name"] = "torchtitan-" + name;
  b.note("registry function " + name + " (" + path + ":" + std::to_string(fn.value("line", 0)) + ")");
  for (const auto& n : fn.value("notes", json::array())) b.note(python_where(n, main) + ": " + n.value("text", ""));
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
  check_registry_keys(with_sets, main, b);
  if (auto st = registry::check_int_range(s, b); !st) return st;
  Table t(main);
  for (const char* key : kCopied) {
    if (const json* v = t.value(s, key)) t.set(key, *v, t.line_of(s, key));
  }
  if (auto st = registry::read_tokens(s, t, b); !st) return st;
  registry::read_checkpointing(s, t, b);
  // CompileConfig(enable_async_tensor_parallel=True): the TOML path's [parallelism] key.
  if (const json* v = t.value(s, "compile.enable_async_tensor_parallel")) {
    t.set("parallelism.enable_async_tensor_parallel", *v, t.line_of(s, "compile.enable_async_tensor_parallel"));
  }
  registry::read_optimizer(s, t, b);
  const json* args = nullptr;
  registry::read_model(s, path, t, b, &args);
  TorchtitanInput input;
  input.lines = &t.lines();
  input.check_unknown_keys = false;  // registries carry many fields that do not bear on the layout
  input.model_args = args;
  auto r = import_torchtitan_table(t.root(), b, options, input);
  if (!r) return r;
  registry::locate_files(*r, t.files());
  r->unfollowed = std::move(refused);
  return r;
}

std::int64_t arg(const json& a, const char* key) {
  auto it = a.find(key);
  return it != a.end() ? core::json_int64(*it).value_or(0) : 0;
}

std::string decimal(std::int64_t n) { return std::to_string(n); }

// What a flavour builds that the planck model prices as something else, as the Hugging Face
// reader says it for the same models (core/plan/hf_layers.cc): Qwen3.5's layers
// (torchtitan/models/qwen3_5/__init__.py @b5bcd76c: _build_qwen35_layers:341 and
// _build_qwen35_moe_layers:414 make every full_attention_interval-th layer softmax attention and
// the others Gated DeltaNet; _qwen35_attention_config:233-237 makes wq n_heads x head_dim x 2
// wide, the queries and an output gate) and a vision_encoder= tower (Qwen3.5, Kimi-VL).
void say_unmodelled_layers(const json& a, const core::ModelSpec& m, int line, PlanBuilder& b) {
  const std::string attention = decimal(m.heads) + " heads of " +
                                decimal(m.head_dim > 0 ? m.head_dim : m.hidden / m.heads) + ", " +
                                decimal(m.kv_heads) + " kv heads";
  if (arg(a, "n_key_heads") > 0 || arg(a, "n_value_heads") > 0) {
    const std::int64_t every = arg(a, "full_attention_interval");
    const std::string which = every > 0 ? decimal(m.layers - m.layers / every) + " of " + decimal(m.layers) + " layers"
                                        : "the layers between the full-attention ones";
    b.finding("model-unmodelled-layers", line,
              "model_registry: " + which + " are Gated DeltaNet linear attention (" + decimal(arg(a, "n_key_heads")) +
                  " key heads of " + decimal(arg(a, "key_head_dim")) + ", " + decimal(arg(a, "n_value_heads")) +
                  " value heads of " + decimal(arg(a, "value_head_dim")) + "), priced as full attention (" + attention +
                  "): their parameters, FLOPs and activations as softmax attention's (quadratic in the sequence, "
                  "theirs linear); the output gate of the full-attention layers (wq twice as wide) is not priced");
  }
  if (a.value("vision_encoder", false)) {
    b.finding("model-unmodelled-layers", line,
              "model_registry: the vision encoder (" + decimal(arg(a, "vision_layers")) + " blocks of dim " +
                  decimal(arg(a, "vision_dim")) + ") is not in the model; only the text model is priced");
  }
}

}  // namespace

void say_preset_layers(const std::string& preset, const std::string& described_as, int line, PlanBuilder& b) {
  if (preset == "kimi-k2") {
    b.unmodelled("model " + described_as, line,
                 "the text tower is priced as preset kimi-k2; the vision encoder (MoonViT) is not in the model");
  } else if (preset.rfind("gpt-oss-", 0) == 0) {
    // torchtitan/models/gpt_oss/__init__.py:200-209 @b5bcd76c: even-indexed layers attend over a
    // sliding window of 128 tokens (model.py:59-60, 144-145).
    b.finding("model-unmodelled-layers", line,
              "model " + described_as + ": the even-indexed half of the layers use sliding-window attention "
              "(window 128), priced as full attention over the whole sequence");
  }
}

bool registry_model(const json& a, const std::string& described_as, PlanBuilder& b, int line) {
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
  // Qwen3.5's shared expert: one SwiGLU of shared_expert_hidden_dim (_shared_experts_config,
  // models/qwen3_5/__init__.py:136-151 @b5bcd76c), priced as that many routed-width experts.
  if (const std::int64_t shared = arg(a, "shared_expert_hidden_dim"); shared > 0 && m.moe_ffn_hidden > 0) {
    m.shared_experts = std::max<std::int64_t>(1, (shared + m.moe_ffn_hidden / 2) / m.moe_ffn_hidden);
  }
  m.dense_layers = arg(a, "n_dense_layers");
  m.ffn_hidden = std::max(arg(a, "hidden_dim"), arg(a, "inter_dim"));
  if (m.ffn_hidden == 0 && m.experts > 0 && m.dense_layers == 0) m.ffn_hidden = m.moe_ffn_hidden;
  m.tied_embeddings = a.value("enable_weight_tying", false);
  if (m.layers < 1 || m.hidden < 1 || m.heads < 1 || m.vocab < 1 || m.ffn_hidden < 1) return false;
  b.set_model(m, described_as + " (sizes written in the flavour's builder)");
  say_unmodelled_layers(a, m, line, b);
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
  PLANCK_IMPORT_TRY(doc, read_python_config(path, function, options, "torchtitan registry"));
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
