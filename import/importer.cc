// Importer registry and file entry point.

#include "import/importer.h"

#include <exception>
#include <filesystem>
#include <string>
#include <utility>

#include "core/base/input_file.h"
#include "core/base/str_cat.h"
#include "import/plan_builder.h"

namespace planck::import {

namespace {

struct Entry {
  const char* name;
  ImportFn fn;
};

core::Result<ImportResult> bridge_one(std::string_view text, const std::string& path, const ImportOptions& options) {
  auto all = import_bridge_launch(text, path, options);
  if (!all) return all.status();
  if (all->size() != 1) {
    return core::Status::error(path + " runs " + std::to_string(all->size()) +
                               " launches; `planck verify` checks them all, `planck import` takes a script with one");
  }
  if (!all->front().result.failed.empty()) return core::Status::error(all->front().result.failed);
  return std::move(all->front().result);
}

constexpr Entry kImporters[] = {
    {"torchtitan", &import_torchtitan},
    {"lingua", &import_lingua},
    {"megatron", &import_megatron},
    {"megatron-bridge", &bridge_one},
    {"deepspeed", &import_deepspeed},
    {"llama-factory", &import_llama_factory},
    {"accelerate", &import_accelerate},
    {"nemo", &import_nemo1},
    {"neox", &import_neox},
    {"axolotl", &import_axolotl},
};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> shell_presets(std::vector<std::pair<std::string, std::string>> sets,
                                                               const ImportOptions& options) {
  std::vector<std::pair<std::string, std::string>> out = std::move(sets);
  auto seed = [&](const char* name, const std::optional<std::int64_t>& v) {
    if (!v) return;
    for (const auto& s : out) {
      if (s.first == name) return;
    }
    out.emplace_back(name, std::to_string(*v));
  };
  seed("SLURM_NNODES", options.nodes);
  seed("SLURM_JOB_NUM_NODES", options.nodes);
  seed("SLURM_GPUS_PER_NODE", options.gpus_per_node);
  return out;
}

nlohmann::json set_value(const std::string& text) {
  if (text == "true" || text == "True") return true;
  if (text == "false" || text == "False") return false;
  if (!text.empty()) {
    std::size_t used = 0;
    try {
      const long long i = std::stoll(text, &used);
      if (used == text.size()) return static_cast<std::int64_t>(i);
      const double d = std::stod(text, &used);
      if (used == text.size()) return d;
    } catch (const std::exception&) {  // not a number: the string itself
    }
  }
  return text;
}

const std::vector<std::string>& framework_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const Entry& e : kImporters) out.emplace_back(e.name);
    return out;
  }();
  return names;
}

ImportFn find_importer(std::string_view framework) {
  for (const Entry& e : kImporters) {
    if (framework == e.name) return e.fn;
  }
  return nullptr;
}

std::string spec_file(const std::string& spec) {
  std::error_code ec;
  if (std::filesystem::exists(spec, ec)) return spec;
  const std::size_t colon = spec.rfind(':');
  if (colon == std::string::npos || colon < 3) return spec;
  // FILE.py:FUNCTION, or a launch script's FILE:LAUNCH (a Megatron-Bridge script running several).
  if (spec.compare(colon - 3, 3, ".py") == 0 || std::filesystem::is_regular_file(spec.substr(0, colon), ec))
    return spec.substr(0, colon);
  return spec;
}

core::Result<std::vector<NamedImport>> import_all(std::string_view framework, const std::string& spec,
                                                  const ImportOptions& options) {
  ImportFn fn = find_importer(framework);
  if (!fn) {
    std::string known;
    for (const std::string& n : framework_names()) known += (known.empty() ? "" : ", ") + n;
    return core::Status::error("unknown framework '" + std::string(framework) + "' (known: " + known + ")");
  }
  const std::string path = spec_file(spec);
  const std::string function = path.size() < spec.size() ? spec.substr(path.size() + 1) : "";
  if (framework == "megatron-bridge" && ends_with(path, ".py")) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return core::Status::error(path + ": no such file");
    return import_bridge_recipes(path, function, options);
  }
  if (framework == "torchtitan" && ends_with(path, ".py")) {
    // The registry reader's input gate says what the path is (missing, a directory, a FIFO, ...).
    return import_torchtitan_registry(path, function, options);
  }
  if (!function.empty() && framework != "megatron-bridge") {
    return core::Status::error(spec + ": FILE:NAME names a function of a Python config or a launch of a "
                               "Megatron-Bridge script; a " + std::string(framework) + " config has neither");
  }
  if (!options.merge_files.empty() && framework != "neox") {
    return core::Status::error("--with " + options.merge_files.front() + ": only a GPT-NeoX run merges further "
                               "files into its config (deepy.py train.py a.yml b.yml); a " + std::string(framework) +
                               " run reads one config, " + path);
  }
  if (!options.sets.empty() && framework == "lingua") {
    return core::Status::error("--set / --script-args: planck does not apply them to a Lingua YAML yet; edit " +
                               path + " instead");
  }
  auto text = core::read_input(path, core::kMaxConfigBytes, core::kConfigLimitName);
  if (!text) return text.status();
  if (text->find('\0') != std::string::npos) {
    return core::Status::error(path + ": contains a NUL byte; not a text config");
  }
  if (framework == "megatron-bridge") {
    PLANCK_IMPORT_TRY(launches, import_bridge_launch(*text, path, options));
    if (function.empty()) return launches;
    // FILE:LAUNCH picks one: its name ("CONFIG=2,4,4,1,True", "line 40") or its number from 1.
    for (std::size_t k = 0; k < launches.size(); ++k) {
      if (launches[k].name == function || std::to_string(k + 1) == function) {
        std::vector<NamedImport> one;
        one.push_back(std::move(launches[k]));
        return one;
      }
    }
    std::string names;
    for (const NamedImport& n : launches) names += (names.empty() ? "" : "; ") + n.name;
    return core::Status::error(path + " runs no launch named '" + function + "' (its launches: " + names +
                               ", or their numbers from 1)");
  }
  auto one = fn(*text, path, options);
  if (!one) return one.status();
  std::vector<NamedImport> out;
  out.push_back({"", std::move(*one)});
  return out;
}

core::Result<ImportResult> import_file(std::string_view framework, const std::string& path,
                                       const ImportOptions& options) {
  auto all = import_all(framework, path, options);
  if (!all) return all.status();
  if (all->size() > 1) {
    std::string names;
    for (const NamedImport& n : *all) names += (names.empty() ? "" : ", ") + n.name;
    return core::Status::error(path + " defines " + std::to_string(all->size()) + " configs (" + names +
                               "); name one as " + path + ":FUNCTION (`planck verify` checks them all)");
  }
  if (!all->front().result.failed.empty()) return core::Status::error(all->front().result.failed);
  return std::move(all->front().result);
}

std::string finding_text(const ImportFinding& f) {
  const std::string where = f.line > 0 ? core::str_cat(f.file, ":", std::to_string(f.line), ": ") : f.file + ": ";
  return where + f.rule + ": " + f.message;
}

std::string detect_framework(const std::string& path, std::string_view text) {
  if (ends_with(spec_file(path), ".py")) {
    // Megatron-Bridge / NeMo 2 recipes build a ConfigContainer from megatron.bridge; torchtitan
    // registries return Trainer.Config.
    for (const char* marker : {"megatron.bridge", "ConfigContainer"}) {
      if (text.find(marker) != std::string_view::npos) return "megatron-bridge";
    }
    return "torchtitan";
  }
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return "";
  // GPT-NeoX: YAML (often JSON with # comments) holding DeepSpeed's keys beside NeoXArgs'.
  if (is_neox_config(text)) return "neox";
  if (text[first] == '{') {
    // DeepSpeed's own keys (deepspeed/runtime/constants.py); any other JSON is read as a plan.
    // gradient_accumulation_steps is a Hugging Face TrainingArguments field too (ms-swift's
    // examples/yaml/deepspeed/sft.json): with it, most top-level keys must be DeepSpeed's.
    for (const char* key : {"\"train_batch_size\"", "\"train_micro_batch_size_per_gpu\"", "\"zero_optimization\"",
                            "\"gradient_accumulation_steps\""}) {
      if (text.find(key) != std::string_view::npos && text.find("\"planck/") == std::string_view::npos &&
          (std::string_view(key) != "\"gradient_accumulation_steps\"" || mostly_deepspeed_keys(text)))
        return "deepspeed";
    }
    return is_deepspeed_config(text) ? "deepspeed" : "plan";
  }
  // hjson: a DeepSpeed config may open with a comment.
  if ((text[first] == '/' || text[first] == '#') && is_deepspeed_config(text)) return "deepspeed";
  if (is_accelerate_config(text)) return "accelerate";
  if (is_nemo1_config(text)) return "nemo";
  if (is_axolotl_config(text)) return "axolotl";
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    const std::size_t b = line.find_first_not_of(" \t");
    if (b == std::string_view::npos) continue;
    // Lingua's and LLaMA-Factory's keys below are top-level: the same name nested under another key
    // (llm-foundry's `variables: {model_name_or_path: ...}`) says nothing of the format.
    const bool top_level = b == 0;
    line.remove_prefix(b);
    for (const char* section : {"[parallelism]", "[training]", "[job]", "[model]", "[activation_checkpoint]",
                                "[experimental]"}) {
      if (line.rfind(section, 0) == 0) return "torchtitan";
    }
    if (!top_level) continue;
    if (line.rfind("distributed:", 0) == 0) return "lingua";
    // LLaMA-Factory's training YAML (HfArgumentParser keys; Lingua has no such key).
    if (line.rfind("finetuning_type:", 0) == 0 || line.rfind("model_name_or_path:", 0) == 0) return "llama-factory";
  }
  // Megatron-Bridge's launchers (scripts/training/run_recipe.py, scripts/performance/*.py).
  for (const char* marker : {"run_recipe.py", "scripts/performance/", "scripts/training/"}) {
    if (text.find(marker) != std::string_view::npos) return "megatron-bridge";
  }
  for (const char* marker : {"pretrain_gpt.py", "pretrain_mamba.py", "pretrain_bert.py", "pretrain_t5.py",
                             "--tensor-model-parallel-size", "--pipeline-model-parallel-size", "--micro-batch-size",
                             "--num-layers",
                             // epfLLM/Megatron-LLM spells its flags with underscores (megatron/arguments.py@806a833)
                             "--tensor_model_parallel_size", "--pipeline_model_parallel_size"}) {
    if (text.find(marker) != std::string_view::npos) return "megatron";
  }
  // A shell script whose launch is in files it sources (the SC21 scripts): the only shell
  // format planck reads is Megatron's.
  if (text.substr(first, 2) == "#!" && text.find("sh", first) < text.find('\n', first)) return "megatron";
  return "";
}

bool has_top_level_key(std::string_view text, std::initializer_list<const char*> keys) {
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = text.substr(start, end - start);
    for (const char* key : keys) {
      if (line.rfind(key, 0) == 0) return true;
    }
    start = end + 1;
  }
  return false;
}

bool is_accelerate_config(std::string_view text) {
  // distributed_type is the one key accelerate requires (config_args.py process_config); with it
  // at the top level, one of the keys `accelerate config` always writes.
  return has_top_level_key(text, {"distributed_type:"}) &&
         has_top_level_key(text, {"compute_environment:", "num_processes:", "num_machines:", "mixed_precision:",
                                  "machine_rank:", "fsdp_config:", "deepspeed_config:"});
}

}  // namespace planck::import
