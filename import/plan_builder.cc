// Shared importer plumbing: plan skeleton, notes, world size, model presets.

#include "import/plan_builder.h"

#include <filesystem>
#include <limits>
#include <utility>

#include "core/plan/presets.h"
#include "core/base/format.h"
#include "core/base/str_cat.h"

namespace planck::import {

std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

std::optional<std::int64_t> checked_product(std::initializer_list<std::int64_t> values) {
  std::int64_t acc = 1;
  for (std::int64_t v : values) {
    auto next = checked_mul(acc, v);
    if (!next) return std::nullopt;
    acc = *next;
  }
  return acc;
}

std::string preset_of_hf_id(const std::string& hf_id) {
  static const std::pair<const char*, const char*> kIds[] = {
      {"meta-llama/Meta-Llama-3-8B", "llama3-8b"},       {"meta-llama/Llama-3.1-8B", "llama3-8b"},
      {"meta-llama/Meta-Llama-3.1-8B", "llama3-8b"},     {"meta-llama/Meta-Llama-3-70B", "llama3-70b"},
      {"meta-llama/Llama-3.1-70B", "llama3-70b"},        {"meta-llama/Meta-Llama-3.1-70B", "llama3-70b"},
      {"meta-llama/Llama-3.3-70B", "llama3-70b"},        {"meta-llama/Meta-Llama-3.1-405B", "llama3-405b"},
      {"meta-llama/Llama-3.1-405B", "llama3-405b"},      {"deepseek-ai/DeepSeek-V3", "deepseek-v3"},
      {"Qwen/Qwen3-30B-A3B", "qwen3-30b-a3b"},           {"Qwen/Qwen3-235B-A22B", "qwen3-235b-a22b"},
      {"Qwen/Qwen3-0.6B", "qwen3-0.6b"},                 {"Qwen/Qwen3-1.7B", "qwen3-1.7b"},
      {"Qwen/Qwen3-8B", "qwen3-8b"},                     {"Qwen/Qwen3-32B", "qwen3-32b"},
      {"mistralai/Mixtral-8x7B-v0.1", "mixtral-8x7b"},   {"mistralai/Mixtral-8x22B-v0.1", "mixtral-8x22b"},
      {"openai/gpt-oss-20b", "gpt-oss-20b"},             {"openai/gpt-oss-120b", "gpt-oss-120b"},
      {"moonshotai/Kimi-K2-Instruct", "kimi-k2"},
      // NousResearch's re-uploads of Meta's checkpoints (the same config.json), which axolotl's
      // examples train.
      {"NousResearch/Meta-Llama-3-8B", "llama3-8b"},     {"NousResearch/Meta-Llama-3.1-8B", "llama3-8b"},
      {"NousResearch/Meta-Llama-3-70B", "llama3-70b"},   {"NousResearch/Meta-Llama-3.1-70B", "llama3-70b"},
  };
  std::string id = hf_id;
  for (const char* suffix : {"-Instruct", "-Base"}) {
    const std::string sfx = suffix;
    if (id.size() > sfx.size() && id.compare(id.size() - sfx.size(), sfx.size(), sfx) == 0) id.resize(id.size() - sfx.size());
  }
  for (const auto& [known, preset] : kIds) {
    if ((hf_id == known || id == known) && core::model_preset(preset)) return preset;
  }
  return "";
}

nlohmann::ordered_json map_lora_targets(const nlohmann::json& names, const LoraNames& table, std::string* other) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const nlohmann::json& n : names) {
    bool known = false;
    for (const auto& [name, ours] : table) {
      // Strings compared as strings: json != string builds a temporary json (and GCC 12 warns
      // -Warray-bounds inside it when this file is in a unity batch).
      if (!n.is_string() || n.get_ref<const std::string&>() != name) continue;
      known = true;
      for (const std::string& o : ours) out.push_back(o);
    }
    if (!known) *other += (other->empty() ? "" : ", ") + (n.is_string() ? n.get<std::string>() : n.dump());
  }
  return out;
}

PlanBuilder::PlanBuilder(std::string framework, std::string path)
    : framework_(std::move(framework)), path_(std::move(path)) {
  // Key order follows docs/plan-format.md so the written plan reads like the documented one.
  plan_["format"] = "planck/1";
  std::string stem = std::filesystem::path(path_).stem().string();
  plan_["name"] = framework_ + "-" + (stem.empty() ? std::string("config") : stem);
  plan_["notes"] = nlohmann::ordered_json::array();
  plan_["cluster"] = nlohmann::ordered_json::object();
  plan_["mesh"] = nlohmann::ordered_json::object();
  note("imported by `planck import " + framework_ + "` from " + path_);
}

void PlanBuilder::note(std::string text) { result_.notes.push_back(std::move(text)); }

void PlanBuilder::warn(std::string text) {
  result_.notes.push_back("warning: " + text);
  result_.warnings.push_back(std::move(text));
}

void PlanBuilder::hint(std::string text) { result_.hints.push_back(std::move(text)); }

void PlanBuilder::finding(const std::string& rule, const Where& line, const std::string& message,
                          const std::string& file, const std::string& pointer) {
  const std::string& in = !file.empty() ? file : !line.file.empty() ? line.file : path_;
  result_.findings.push_back({rule, message, in, line.line, pointer});
  warn(finding_text(result_.findings.back()));
}

void PlanBuilder::unmodelled(const std::string& setting, const Where& line, const std::string& assumed,
                             const std::string& pointer) {
  finding("setting-unmodelled", line, setting + " is not modelled by planck: " + assumed, "", pointer);
}

void PlanBuilder::unpriced_saving(const std::string& setting, const Where& line, const std::string& assumed) {
  unmodelled(setting, line, assumed);
  result_.findings.back().memory_saving = setting;
}

namespace {

// What DeepSpeed does with a key it does not know: a section built as a DeepSpeedConfigModel
// (runtime/config_utils.py, extra="forbid") raises a ValidationError at deepspeed.initialize; the
// top level is read with dict.get, so an unknown key there is ignored. The release each section
// became such a model, at deepspeedai/DeepSpeed @edaa722.
std::string deepspeed_fate(const std::string& key) {
  std::string p = key.rfind("--set ", 0) == 0 ? key.substr(6) : key;
  const std::size_t second = p.find('/', 1);
  if (p.empty() || p[0] != '/' || second == std::string::npos) return "ignored";
  const std::string section = p.substr(1, second - 1);
  const char* since = section == "zero_optimization" ? "v0.7.0 (DeepSpeedZeroConfig and its offload configs)"
                      : section == "tensor_parallel" ? "v0.16.4 (TPTrainingConfig)"
                      : section == "compile"         ? "v0.16.6 (CompileConfig)"
                      : section == "bf16" || section == "bfloat16" || section == "fp16"
                          ? "v0.17.1 (precision_config.py; an earlier release ignored it)"
                          : nullptr;
  if (!since) return "ignored";
  return std::string("DeepSpeed refuses it at start-up: the section's config model forbids unknown keys since ") + since;
}

}  // namespace

void PlanBuilder::unknown_key(const std::string& key, const Where& line, const std::vector<std::string>& known,
                              const std::string& file) {
  // The key's own name: after the last '/' (JSON pointer), ' ' ("[section] key") or '.' (a dotted
  // registry setting), brackets off.
  const std::size_t cut = key.find_last_of(key.find('[') == std::string::npos ? "/ ." : "/ ");
  std::string last = cut == std::string::npos ? key : key.substr(cut + 1);
  std::erase_if(last, [](char c) { return c == '[' || c == ']'; });
  last.erase(0, last.find_first_not_of('-'));  // "--flag" compares as "flag"
  const std::string guess = core::did_you_mean(last, known);
  // What the framework itself does with it: Megatron-LM's parse_args uses parser.parse_args()
  // (arguments.py:117-132@d98e8a6), torchtitan's ConfigManager raised "Invalid field names" for a
  // TOML key from #1644 (eadca4835, 2025-08-28) until TOMLs gave way to registries (#2386).
  std::string fate = "ignored";
  if (framework_ == "megatron")
    fate = "Megatron-LM's argparse refuses an unknown flag at start-up; a fork that defines it reads it";
  else if (framework_ == "deepspeed")
    fate = deepspeed_fate(key);
  else if (framework_ == "llama-factory")
    fate = "LLaMA-Factory's HfArgumentParser refuses a key no argument class defines at start-up unless "
           "ALLOW_EXTRA_ARGS is set (hparams/parser.py)";
  else if (framework_ == "axolotl")
    // axolotl-ai-cloud/axolotl@067b021c8 utils/config/__init__.py:494-500 validate_config returns the
    // model_dump of AxolotlInputConfig, whose model_config (utils/schemas/config.py:212) keeps
    // pydantic's default extra="ignore".
    fate = "axolotl ignores it without a word: validate_config keeps only AxolotlInputConfig's fields (pydantic's "
           "default extra=\"ignore\", utils/config/__init__.py:494-500)";
  else if (framework_ == "lingua")
    // apps/*/train.py merges the file into OmegaConf.structured(TrainArgs()) (facebookresearch/
    // lingua@437d680 apps/main/train.py:649-650), a struct-mode config; BLT's pydantic TrainArgs
    // forbids extra keys (facebookresearch/blt@9774ed4 bytelatent/args.py:297-298).
    fate = "Lingua refuses it at start-up: apps/*/train.py merges the file into OmegaConf.structured(TrainArgs()), "
           "which raises ConfigKeyError for a key its dataclass lacks (BLT's pydantic TrainArgs forbids it too)";
  else if (framework_ == "torchtitan" && key.rfind('[', 0) == 0)
    fate = "torchtitan refuses a TOML key its config does not define at start-up since #1644, 2025-08-28; an "
           "earlier torchtitan ignored it";
  finding("unknown-key", line,
          key + " is not a key the framework knows (" + fate + ")" + (guess.empty() ? std::string() : "; " + guess),
          file);
}

void PlanBuilder::locate(const std::string& pointer, const Where& line) {
  if (line.line <= 0) return;
  result_.positions[pointer] = line.line;
  if (!line.file.empty()) result_.position_files[pointer] = line.file;
}

core::Status PlanBuilder::error(const Where& line, const std::string& message) const {
  std::string where = line.file.empty() ? path_ : line.file;
  if (line.line > 0) where += core::str_cat(":", std::to_string(line.line));
  return core::Status::error(where + ": " + message);
}

core::Result<World> PlanBuilder::resolve_world(const ImportOptions& options, const ConfigWorld& config) {
  World w;
  std::optional<std::int64_t> nodes = options.nodes, gpn = options.gpus_per_node;
  // The config's own numbers fill what the command line left out; a disagreement is noted,
  // because the command line describes the cluster the plan is for.
  if (config.gpus_per_node && options.gpus_per_node && *config.gpus_per_node != *options.gpus_per_node) {
    note("--gpus-per-node " + std::to_string(*options.gpus_per_node) + " overrides " +
         std::to_string(*config.gpus_per_node) + " from " + config.source);
  }
  if (config.nodes && options.nodes && *config.nodes != *options.nodes) {
    note("--nodes " + std::to_string(*options.nodes) + " overrides " + std::to_string(*config.nodes) + " from " +
         config.source);
  }
  if (!gpn && config.gpus_per_node) {
    gpn = config.gpus_per_node;
    note("gpus_per_node = " + std::to_string(*gpn) + " from " + config.source);
  }
  if (!nodes && config.nodes) {
    nodes = config.nodes;
    note("nodes = " + std::to_string(*nodes) + " from " + config.source);
  }
  if (!nodes && !gpn && config.world_size) {
    gpn = config.world_size;
    nodes = 1;
    note("world size " + std::to_string(*gpn) + " from " + config.source + ", taken as 1 node");
  }
  if ((!nodes && !gpn) || (!nodes && config.nodes_from_job)) {
    result_.world_assumed = true;
    warn(framework_ +
         " configs do not state the world size; assumed 1 node x 8 GPUs "
         "(pass --nodes N --gpus-per-node G for the cluster you will run on)");
  } else if (config.per_node_defaulted && !options.gpus_per_node) {
    finding("import-warning", config.default_line,
            "the launch states the nodes but not --nproc-per-node: torchrun starts 1 process a node when it is not "
            "given (torch/distributed/run.py, default \"1\"), so the run uses one GPU of each node, as planned here "
            "(pass --nproc-per-node G to torchrun; --gpus-per-node G plans G a node)",
            "", "/cluster/gpus_per_node");
  } else if (!gpn) {
    finding("setting-unmodelled", 0,
            "the config states the nodes but not the GPUs per node: 8 assumed (pass --gpus-per-node G for the "
            "cluster it runs on)",
            "", "/cluster/gpus_per_node");
  } else if (!nodes) {
    note("nodes not given; assumed 1");
  }
  w.nodes = nodes.value_or(1);
  w.gpus_per_node = gpn.value_or(8);
  w.nvlink_domain = options.nvlink_domain.value_or(0);
  if (w.nodes < 1 || w.gpus_per_node < 1) {
    return error(0, "nodes (" + std::to_string(w.nodes) + ") and gpus_per_node (" + std::to_string(w.gpus_per_node) +
                        ") must be >= 1");
  }
  auto size = checked_mul(w.nodes, w.gpus_per_node);
  if (!size) {
    return error(0, "world size nodes (" + std::to_string(w.nodes) + ") x gpus_per_node (" +
                        std::to_string(w.gpus_per_node) + ") overflows a 64-bit integer");
  }
  w.size = *size;
  return w;
}

void PlanBuilder::set_cluster(const World& world) {
  plan_["cluster"] = {{"nodes", world.nodes}, {"gpus_per_node", world.gpus_per_node}};
  if (world.nvlink_domain > 0) plan_["cluster"]["nvlink_domain"] = world.nvlink_domain;
}

void PlanBuilder::set_mesh(const std::vector<std::string>& dims, const std::vector<std::int64_t>& shape) {
  plan_["mesh"] = {{"dims", dims}, {"shape", shape}};
}

void PlanBuilder::set_data_rank_program(const std::vector<std::string>& data_dims, const std::string& source) {
  std::string rank, degree;
  for (const std::string& d : data_dims) {
    rank = rank.empty() ? d + ".rank" : "(" + rank + ") * " + d + ".size + " + d + ".rank";
    degree += (degree.empty() ? "" : " * ") + d + ".size";
  }
  if (rank.empty()) return;
  if (rank.front() == '(' && rank.find(')') == rank.rfind(')')) {  // one product: no parentheses needed
    rank = rank.substr(1, rank.find(')') - 1) + rank.substr(rank.find(')') + 1);
  }
  plan_["rank_program"] = {{"steps", {"dp_rank = " + rank, "dp_degree = " + degree}}};
  note("rank_program: the data-parallel rank is " + source + ": dp_rank = " + rank);
}

namespace {

// The docs/plan-format.md model object of `m`: every field a reader can state.
nlohmann::ordered_json model_object(const core::ModelSpec& m) {
  nlohmann::ordered_json obj = {{"layers", m.layers}, {"hidden", m.hidden},     {"ffn_hidden", m.ffn_hidden},
                                {"heads", m.heads},   {"kv_heads", m.kv_heads}, {"vocab", m.vocab}};
  if (m.head_dim > 0 && (m.heads < 1 || m.head_dim != m.hidden / m.heads)) obj["head_dim"] = m.head_dim;
  if (m.tied_embeddings) obj["tied_embeddings"] = true;
  if (!m.gated_mlp) obj["gated_mlp"] = false;
  if (m.biases) obj["biases"] = true;
  if (m.layer_norm && *m.layer_norm != m.biases) obj["layer_norm"] = *m.layer_norm;
  if (m.position_embeddings > 0) obj["position_embeddings"] = m.position_embeddings;
  if (m.experts > 0) {
    obj["experts"] = m.experts;
    if (m.experts_per_token > 0) obj["experts_per_token"] = m.experts_per_token;
    if (m.moe_ffn_hidden > 0) obj["moe_ffn_hidden"] = m.moe_ffn_hidden;
    if (m.shared_experts > 0) obj["shared_experts"] = m.shared_experts;
    if (m.dense_layers > 0) obj["dense_layers"] = m.dense_layers;
    if (m.moe_layer_freq > 1) obj["moe_layer_freq"] = m.moe_layer_freq;
    if (m.expert_groups > 0) {
      obj["expert_groups"] = m.expert_groups;
      obj["expert_groups_per_token"] = m.expert_groups_per_token;
    }
  }
  if (m.kv_lora_rank > 0) {  // multi-head latent attention
    if (m.q_lora_rank > 0) obj["q_lora_rank"] = m.q_lora_rank;
    obj["kv_lora_rank"] = m.kv_lora_rank;
    obj["qk_nope_head_dim"] = m.qk_nope_head_dim;
    obj["qk_rope_head_dim"] = m.qk_rope_head_dim;
    obj["v_head_dim"] = m.v_head_dim;
  }
  return obj;
}

}  // namespace

// A preset is named only when its object is the model's, field for field: a preset that shares
// the dense shape but not the routing (top-k, expert width, shared experts, ...) would drop what
// the config states.
void PlanBuilder::set_model(const core::ModelSpec& m, const std::string& described_as) {
  const nlohmann::ordered_json obj = model_object(m);
  for (const std::string& name : core::model_preset_names()) {
    auto preset = core::model_preset(name);
    if (preset && model_object(*preset) == obj) {
      plan_["model"] = name;
      note("model: " + described_as + " has the shape of preset " + name);
      return;
    }
  }
  plan_["model"] = obj;
  note("model: " + described_as + " (" + std::to_string(m.layers) + " layers, hidden " + std::to_string(m.hidden) +
       ", ffn " + std::to_string(m.ffn_hidden) + ", " + std::to_string(m.heads) + " heads, " +
       std::to_string(m.kv_heads) + " kv heads, vocab " + std::to_string(m.vocab) + ")");
}

void take_said(ImportResult& into, ImportResult own, const std::string& source_path) {
  for (const std::string& n : own.notes) into.plan["notes"].push_back(n);
  for (std::string& n : own.notes) into.notes.push_back(std::move(n));
  for (std::string& w : own.warnings) into.warnings.push_back(std::move(w));
  for (ImportFinding& f : own.findings) into.findings.push_back(std::move(f));
  for (const auto& [pointer, line] : own.positions) into.positions.emplace(pointer, line);
  into.source_path = source_path;
}

ImportResult PlanBuilder::finish() {
  plan_["notes"] = result_.notes;
  if (result_.source_path.empty()) result_.source_path = path_;
  result_.plan = std::move(plan_);
  return std::move(result_);
}

std::optional<core::ModelSpec> vocab_preset_or_warn(PlanBuilder& b, const core::ModelSpec& shape,
                                                    const std::string& missing, const std::string& fix) {
  auto preset = core::model_preset_by_shape(shape.layers, shape.hidden, shape.heads, shape.kv_heads);
  if (!preset) {
    b.warn("no " + missing + ": the vocabulary comes from the tokenizer, which planck does not read, and no model "
           "preset has " + std::to_string(shape.layers) + " layers, hidden " + std::to_string(shape.hidden) + ", " +
           std::to_string(shape.heads) + " heads; model left out (" + fix + ")");
  }
  return preset;
}

void set_hf_model(ImportResult& r, PlanBuilder& b, const std::optional<std::string>& hf_id, const std::string& key,
                  int line) {
  const std::string preset = hf_id ? preset_of_hf_id(*hf_id) : "";
  if (!preset.empty()) {
    r.plan["model"] = preset;
    r.positions["/model"] = line;
    b.note("model: " + *hf_id + " is preset " + preset);
  } else {
    b.warn("model " + (hf_id ? *hf_id : "(no " + key + ")") +
           " has no planck preset; model left out (give --model, e.g. its config.json)");
  }
}

}  // namespace planck::import
