// The DeepSpeed file a LLaMA-Factory YAML names (`deepspeed: FILE`): where it is found, and what
// Hugging Face's trainer writes into it from the YAML before DeepSpeed reads it.
//
// huggingface/transformers@02348331 src/transformers/integrations/deepspeed.py:
// HfTrainerDeepSpeedConfig.fill_match replaces a value that is "auto" with the TrainingArguments
// value; a value that is set (not "auto", not null) and differs is recorded as a mismatch, and
// trainer_config_finalize raises ValueError("Please correct the following DeepSpeed config values
// that mismatch TrainingArguments values ...") when there is one. trainer_config_process matches
// train_micro_batch_size_per_gpu, gradient_accumulation_steps, train_batch_size (world x micro x
// accumulation), gradient_clipping, optimizer.params lr / betas / eps / weight_decay,
// scheduler.params.warmup_max_lr, fp16.enabled and bf16.enabled. TrainingArguments' defaults
// (training_args.py): per_device_train_batch_size 8, gradient_accumulation_steps 1,
// learning_rate 5e-5, weight_decay 0.0, adam_beta1 0.9, adam_beta2 0.999, adam_epsilon 1e-8,
// max_grad_norm 1.0.

#include <filesystem>
#include <string>
#include <vector>

#include "core/base/input_file.h"
#include "import/deepspeed/hjson.h"
#include "import/llama_factory/startup.h"

namespace planck::import::llama_factory {

namespace {

namespace fs = std::filesystem;

// `rel` beside the YAML or in the first parent directory holding it.
std::string find_upwards(const fs::path& rel, const std::string& yaml_path) {
  std::error_code ec;
  for (fs::path dir = fs::absolute(yaml_path, ec).parent_path(); !dir.empty(); dir = dir.parent_path()) {
    if (fs::is_regular_file(dir / rel, ec)) return (dir / rel).lexically_normal().string();
    if (dir == dir.parent_path()) break;
  }
  return "";
}

// Python's ==, as fill_match compares: numbers (and booleans, True == 1) by value, lists item by item.
bool same(const nlohmann::json& a, const nlohmann::json& b) {
  auto number = [](const nlohmann::json& v) { return v.is_number() || v.is_boolean(); };
  auto value = [](const nlohmann::json& v) { return v.is_boolean() ? (v.get<bool>() ? 1.0 : 0.0) : v.get<double>(); };
  if (number(a) && number(b)) return value(a) == value(b);
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!same(a[i], b[i])) return false;
    }
    return true;
  }
  return a == b;
}

std::string shown(const nlohmann::json& v) {
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";  // as Python prints it in the error
  return v.dump();
}

}  // namespace

bool DsFile::zero3() const {
  const nlohmann::json* s = at("/zero_optimization/stage");
  return s && s->is_number_integer() && s->get<std::int64_t>() == 3;
}

const nlohmann::json* DsFile::at(const std::string& pointer) const {
  if (!doc) return nullptr;
  const nlohmann::json::json_pointer p(pointer);
  return doc->root().contains(p) ? &doc->root().at(p) : nullptr;
}

// `deepspeed: examples/deepspeed/ds_z3_config.json` is relative to where llamafactory-cli runs, the
// repository root: found as given, else beside the YAML or in the first parent directory holding
// it. An absolute path that is not here (a container's /workspace/...) is looked for by its tail
// the same way, and the file used is named.
core::Result<DsFile> load_deepspeed(YamlReader& y, const YAML::Node& root, PlanBuilder& b,
                                    const std::string& yaml_path, const std::string& key,
                                    const std::string& resolved_by) {
  DsFile out;
  out.line = y.line_of(root, key);
  PLANCK_IMPORT_TRY(given_v, y.string(root, key, ""));
  const std::string given = given_v.value_or("");
  std::error_code ec;
  const fs::path as_given(given);
  if (fs::is_regular_file(as_given, ec)) {
    out.path = given;
  } else if (!as_given.is_absolute()) {
    out.path = find_upwards(as_given, yaml_path);
  } else {
    // The shortest tail first: the file's name, then its directory and name, ...
    std::vector<fs::path> parts;
    for (const fs::path& part : as_given.relative_path()) parts.push_back(part);
    for (std::size_t k = 1; k <= parts.size() && out.path.empty(); ++k) {
      fs::path tail;
      for (std::size_t i = parts.size() - k; i < parts.size(); ++i) tail /= parts[i];
      out.path = find_upwards(tail, yaml_path);
    }
    if (!out.path.empty()) {
      b.unmodelled(key + " " + given, out.line,
                   "that path is not on this machine; read " + out.path + ", the file of that name beside the "
                   "YAML or in a parent directory of it");
    }
  }
  if (out.path.empty()) {
    return b.error(out.line, key + " " + given + ": no such file here or beside " + yaml_path +
                                 " or in a parent directory of it" +
                                 (as_given.is_absolute() ? " (nor a file of its name there)" : "") + " (" +
                                 resolved_by + "); copy the DeepSpeed config beside the YAML");
  }
  auto text = core::read_input(out.path, core::kMaxConfigBytes, core::kConfigLimitName);
  if (!text) return b.error(out.line, key + " " + given + ": " + text.status().message());
  out.text = std::move(*text);
  const HjsonStripped plain = strip_hjson(out.text);
  core::JsonParseError perr;
  if (plain.error.line == 0) out.doc = core::JsonDoc::parse(plain.text, &perr);
  if (out.doc && !out.doc->root().is_object()) out.doc.reset();
  return out;
}

core::Result<std::vector<ImportOptions::Fill>> trainer_fills(YamlReader& y, const YAML::Node& root, PlanBuilder& b,
                                                             const DsFile& ds, const Run& run,
                                                             const ImportOptions& options) {
  PLANCK_IMPORT_TRY(auto_batch, y.boolean(root, "auto_find_batch_size", "", false));
  PLANCK_IMPORT_TRY(bf16_eval, y.boolean(root, "bf16_full_eval", "", false));
  PLANCK_IMPORT_TRY(fp16_eval, y.boolean(root, "fp16_full_eval", "", false));
  struct Match {
    const char* ds_key;  // dotted, as the trainer names it
    std::string hf_key;  // the TrainingArguments name(s), as the trainer's message gives them
    const char* yaml_key;
    nlohmann::json hf;
    bool must_match = true;
    bool fill_absent = false;  // planck fills a missing batch or dtype key too (accelerate adds them)
    std::string from;
    nlohmann::json fill = nullptr;  // what is filled when not the trainer's value (null: hf)
  };
  auto yaml_at = [&](const char* key) {
    const int line = y.line_of(root, key);
    return line > 0 ? std::string("the YAML's ") + key + " (line " + std::to_string(line) + ")"
                    : std::string("TrainingArguments' default ") + key;
  };
  std::vector<Match> matches = {
      {"train_micro_batch_size_per_gpu", "per_device_train_batch_size", run.micro_key, run.micro, !auto_batch, true,
       yaml_at(run.micro_key), nullptr},
      {"gradient_accumulation_steps", "gradient_accumulation_steps", "gradient_accumulation_steps", run.accumulation,
       true, true, yaml_at("gradient_accumulation_steps"), nullptr},
      {"fp16.enabled", "fp16|fp16_full_eval+fp16_backend(amp)", "fp16", run.fp16 || fp16_eval, true, true,
       yaml_at("fp16"), nullptr},
      // LLaMA-Factory loads the model in bf16 for pure_bf16 too (parser.py:640-641); the trainer's
      // own value, matched against a fixed one, is bf16 / bf16_full_eval.
      {"bf16.enabled", "bf16|bf16_full_eval", "bf16", run.bf16 || bf16_eval, true, true,
       run.pure_bf16 && !run.bf16 ? yaml_at("pure_bf16") + ": the model is loaded in bf16" : yaml_at("bf16"),
       run.bf16 || bf16_eval || run.pure_bf16},
  };
  if (options.nodes && options.gpus_per_node) {
    const std::int64_t world = *options.nodes * *options.gpus_per_node;
    matches.push_back({"train_batch_size", "train_batch_size (calculated)", run.micro_key,
                       run.micro * run.accumulation * world, !auto_batch, true,
                       std::string(run.micro_key) + " x gradient_accumulation_steps x world " + std::to_string(world),
                       nullptr});
  }
  PLANCK_IMPORT_TRY(clip, y.real(root, "max_grad_norm", ""));
  PLANCK_IMPORT_TRY(lr, y.real(root, "learning_rate", ""));
  PLANCK_IMPORT_TRY(beta1, y.real(root, "adam_beta1", ""));
  PLANCK_IMPORT_TRY(beta2, y.real(root, "adam_beta2", ""));
  PLANCK_IMPORT_TRY(eps, y.real(root, "adam_epsilon", ""));
  PLANCK_IMPORT_TRY(decay, y.real(root, "weight_decay", ""));
  // Matched only: planck does not price these, but a fixed value that differs stops the run.
  auto match = [&](const char* ds_key, const char* hf_key, const char* yaml_key, nlohmann::json hf) {
    Match m{ds_key, hf_key, yaml_key, std::move(hf), true, false, yaml_at(yaml_key), nullptr};
    matches.push_back(std::move(m));
  };
  match("gradient_clipping", "max_grad_norm", "max_grad_norm", clip.value_or(1.0));
  match("optimizer.params.lr", "learning_rate", "learning_rate", lr.value_or(5e-5));
  match("optimizer.params.betas", "adam_beta1+adam_beta2", "adam_beta1",
        nlohmann::json::array({beta1.value_or(0.9), beta2.value_or(0.999)}));
  match("optimizer.params.eps", "adam_epsilon", "adam_epsilon", eps.value_or(1e-8));
  match("optimizer.params.weight_decay", "weight_decay", "weight_decay", decay.value_or(0.0));
  match("scheduler.params.warmup_max_lr", "learning_rate", "learning_rate", lr.value_or(5e-5));

  std::vector<ImportOptions::Fill> fills;
  std::string mismatches;
  int first_line = 0;
  for (const Match& m : matches) {
    std::string ptr = "/";
    for (const char* c = m.ds_key; *c; ++c) ptr += *c == '.' ? '/' : *c;
    const nlohmann::json* v = ds.at(ptr);
    const bool is_auto = v && v->is_string() && v->get<std::string>() == "auto";
    const nlohmann::json& filled = m.fill.is_null() ? m.hf : m.fill;
    const std::string value = filled.is_boolean() ? (filled.get<bool>() ? "true" : "false") : filled.dump();
    if (is_auto || ((!v || v->is_null()) && m.fill_absent)) {
      fills.push_back({m.ds_key, value, m.from + (is_auto ? " (the file's \"auto\")" : " (the file does not set it)")});
      continue;
    }
    if (!v || v->is_null() || !m.must_match || same(*v, m.hf)) continue;
    const int yaml_line = y.line_of(root, m.yaml_key);
    if (first_line == 0 && yaml_line > 0) first_line = yaml_line;
    mismatches += std::string(mismatches.empty() ? "" : "; ") + "ds " + m.ds_key + "=" + shown(*v) + " (" +
                  ds.path + ":" + std::to_string(ds.doc->position(ptr).line) + ") vs hf " + m.hf_key + "=" +
                  shown(m.hf) + (yaml_line > 0 ? " (line " + std::to_string(yaml_line) + ")" : " (its default)");
  }
  if (!mismatches.empty()) {
    return b.error(first_line > 0 ? first_line : ds.line,
                   "the DeepSpeed file fixes values that differ from the trainer's arguments: " + mismatches +
                       ". The Hugging Face Trainer fills only \"auto\" values and raises ValueError \"Please correct "
                       "the following DeepSpeed config values that mismatch TrainingArguments values\" at start-up "
                       "(transformers integrations/deepspeed.py HfTrainerDeepSpeedConfig.fill_match, "
                       "trainer_config_finalize); set those DeepSpeed values to \"auto\" or to the YAML's");
  }
  return fills;
}

core::Result<ImportResult> import_trainer_deepspeed(YamlReader& y, const YAML::Node& root, PlanBuilder& b,
                                                   const DsFile& ds, const Run& run, const ImportOptions& options) {
  PLANCK_IMPORT_TRY(fills, trainer_fills(y, root, b, ds, run, options));
  ImportOptions o = options;
  o.fills = std::move(fills);
  auto imported = import_deepspeed(ds.text, ds.path, o);
  if (!imported) return imported.status();
  ImportResult r = std::move(*imported);
  for (const auto& [pointer, line] : r.positions) r.position_files.emplace(pointer, ds.path);
  b.note("deepspeed " + ds.path + ": the run's layout, its \"auto\" batch and dtype filled from this YAML "
         "(Hugging Face integrations/deepspeed.py)");
  return r;
}

}  // namespace planck::import::llama_factory
