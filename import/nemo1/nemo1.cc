// NeMo 1.x Hydra YAML (examples/nlp/language_modeling/conf/megatron_gpt_config.yaml and its
// kin, the NeMo-Framework-Launcher's training configs) -> plan.
//
// Semantics, NVIDIA/NeMo@8cfedd7 (HEAD of the mirror, 2025-09-20): MegatronGPTModel
// (nemo/collections/nlp/models/language_modeling/megatron_gpt_model.py) builds Megatron-Core's
// GPTModel from a TransformerConfig that megatron_base_model.py:500-613 build_transformer_config
// fills from the `model:` keys (a key named like a TransformerConfig field is copied as is,
// :600-613), and initializes Megatron-Core's parallel state from the same keys (:195-215). So each
// key becomes the Megatron-LM flag that sets that TransformerConfig field, and the Megatron-LM
// importer reads the flags as an args file: one set of Megatron semantics, as for Megatron-Bridge
// recipes (docs/import.md "NeMo 1.x (Hydra YAML)"). Where NeMo's defaults or checks differ from
// Megatron-LM's they are applied here (model.cc). The world is PyTorch Lightning's:
// trainer.devices x trainer.num_nodes processes.

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>
#include <utility>
#include <vector>

#include "import/formats/yaml_reader.h"
#include "import/importer.h"
#include "import/nemo1/keys.h"
#include "import/nemo1/reader.h"
#include "import/plan_builder.h"

namespace planck::import {

void Nemo1Args::add(const std::string& flag, const std::string& value, int line) {
  if (flags.count(flag)) return;
  flags.insert(flag);
  std::string v = value;
  // The args file is read as shell words: a value with shell characters is quoted.
  if (v.find_first_of("|()*;&<>$`\\\"' ") != std::string::npos && v.find('\'') == std::string::npos) v = "'" + v + "'";
  text += "--" + flag + (v.empty() ? "" : " " + v) + "\n";
  lines.push_back(line);
}

std::optional<Nemo1Value> Nemo1Reader::value(const std::string& key) {
  auto v = cfg_.get(key);
  if (v) return *v;
  for (const Unfollowed& u : unfollowed_) {
    if (u.settings == key) return std::nullopt;  // said once, however often it is read
  }
  const YAML::Node raw = cfg_.raw(key);
  const std::string written = raw.IsScalar() ? raw.Scalar() : std::string("...");
  unfollowed_.push_back({b_.path(), cfg_.line(key), key + ": " + written, v.message(), key});
  return std::nullopt;
}

core::Result<std::optional<std::string>> Nemo1Reader::text(const std::string& key) {
  auto v = value(key);
  if (!v || v->null) return std::optional<std::string>();
  if (!v->scalar) return b_.error(cfg_.line(key), key + " must be a single value, not a mapping or list");
  return std::optional<std::string>(v->text);
}

core::Result<std::optional<std::int64_t>> Nemo1Reader::integer(const std::string& key) {
  PLANCK_IMPORT_TRY(t, text(key));
  if (!t) return std::optional<std::int64_t>();
  std::int64_t n = 0;
  const char* first = t->data() + (t->size() > 1 && (*t)[0] == '+' ? 1 : 0);
  auto [end, ec] = std::from_chars(first, t->data() + t->size(), n);
  if (t->empty() || ec != std::errc() || end != t->data() + t->size()) {
    return b_.error(cfg_.line(key), key + " must be an integer, got '" + *t + "'");
  }
  return std::optional<std::int64_t>(n);
}

core::Result<std::optional<bool>> Nemo1Reader::boolean(const std::string& key) {
  PLANCK_IMPORT_TRY(t, text(key));
  if (!t) return std::optional<bool>();
  std::string s = *t;
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "true" || s == "yes" || s == "on") return std::optional<bool>(true);
  if (s == "false" || s == "no" || s == "off") return std::optional<bool>(false);
  return b_.error(cfg_.line(key), key + " must be true or false, got '" + *t + "'");
}

bool Nemo1Reader::set(const std::string& key) const {
  const YAML::Node n = cfg_.raw(key);
  return n.IsDefined() && !n.IsNull();
}

std::vector<std::string> Nemo1Reader::keys(const std::string& section) const {
  std::vector<std::string> out;
  const YAML::Node n = cfg_.raw(section);
  if (!n.IsMap()) return out;
  for (const auto& kv : n) {
    if (kv.first.IsScalar()) out.push_back(kv.first.Scalar());
  }
  return out;
}

namespace {

// NeMo configs of other models share trainer: and model: (examples/nlp/language_modeling/conf): T5 / BART /
// UL2 (encoder: and decoder: sections, mcore_t5), BERT (mcore_bert, bert_binary_head), RETRO (retro:),
// Mamba / Griffin (hybrid_override_pattern, mamba_ssm_ngroups, activations_checkpoint_recurrent); and the
// generation configs (an inference: section, megatron_gpt_generate.py) train nothing. Read as a GPT their
// keys were unknown-key and the verdict `ok`: refused, naming the key that says which.
core::Status nemo1_refuse_other_models(YamlReader& y, const YAML::Node& root, PlanBuilder& b) {
  const YAML::Node model = root["model"];
  if (root["inference"]) {
    return b.error(y.line_of(root, "inference"),
                   "a NeMo generation config (its inference: section, read by megatron_gpt_generate.py and the "
                   "evaluation scripts): it runs no optimizer step; planck verifies training configs");
  }
  struct Kind {
    const char* key;
    const char* what;
  };
  static const Kind kKinds[] = {{"encoder", "T5 / BART / UL2 encoder-decoder"},
                                {"mcore_t5", "T5 encoder-decoder"},
                                {"mcore_bert", "BERT"},
                                {"bert_binary_head", "BERT"},
                                {"retro", "RETRO"},
                                {"hybrid_override_pattern", "Mamba hybrid"},
                                {"mamba_ssm_ngroups", "Mamba"},
                                {"activations_checkpoint_recurrent", "Griffin / recurrent"}};
  for (const Kind& k : kKinds) {
    if (!model[k.key]) continue;
    return b.error(y.line_of(model, k.key), std::string("a NeMo ") + k.what + " config (model." + k.key +
                                                "): planck reads NeMo's decoder-only GPT-family configs "
                                                "(megatron_gpt_config.yaml and its kin); write a planck plan for it");
  }
  return core::Status::ok();
}

// PyTorch Lightning's world: trainer.devices processes on each of trainer.num_nodes nodes
// (Trainer(**cfg.trainer), megatron_trainer_builder.py); devices -1 or "auto" is every GPU of the
// node, which the file does not say. The command line's --nodes / --gpus-per-node win.
core::Status nemo1_world(Nemo1Reader& r, const ImportOptions& options, ImportOptions& megatron) {
  PlanBuilder& b = r.builder();
  PLANCK_IMPORT_TRY(devices, r.text("trainer.devices"));
  PLANCK_IMPORT_TRY(nodes, r.integer("trainer.num_nodes"));
  std::optional<std::int64_t> gpn;
  if (devices) {
    std::int64_t n = 0;
    auto [end, ec] = std::from_chars(devices->data(), devices->data() + devices->size(), n);
    if (ec == std::errc() && end == devices->data() + devices->size() && n >= 1) {
      gpn = n;
    } else if (*devices != "-1" && *devices != "auto") {
      return b.error(r.line("trainer.devices"), "trainer.devices '" + *devices +
                                                    "': planck reads a GPU count, -1 or auto");
    }
  }
  if (nodes && *nodes < 1) return b.error(r.line("trainer.num_nodes"), "trainer.num_nodes must be >= 1");
  b.locate("/cluster/gpus_per_node", r.line("trainer.devices"));
  b.locate("/cluster/nodes", r.line("trainer.num_nodes"));
  if (!options.gpus_per_node && gpn) {
    megatron.gpus_per_node = gpn;
    b.note("gpus_per_node = " + str(*gpn) + " from trainer.devices");
  }
  if (!options.nodes && (gpn || nodes)) {
    megatron.nodes = nodes.value_or(1);
    b.note("nodes = " + str(nodes.value_or(1)) +
           (nodes ? " from trainer.num_nodes" : " (trainer.num_nodes unset: PyTorch Lightning's default 1)"));
  }
  if (!gpn && !options.gpus_per_node && devices) {
    b.unmodelled("trainer.devices " + *devices, r.line("trainer.devices"),
                 "every GPU of a node: 8 assumed (pass --gpus-per-node G)", "/cluster/gpus_per_node");
  }
  if (options.gpus_per_node && gpn && *options.gpus_per_node != *gpn)
    b.note("--gpus-per-node " + str(*options.gpus_per_node) + " overrides trainer.devices " + str(*gpn));
  if (options.nodes && nodes && *options.nodes != *nodes)
    b.note("--nodes " + str(*options.nodes) + " overrides trainer.num_nodes " + str(*nodes));
  return core::Status::ok();
}

// "PATH:N" at the start of `text` with N an args-file line: the config line it came from.
std::string nemo1_relocate(const std::string& text, const std::string& path, const std::vector<int>& lines) {
  const std::string lead = path + ":";
  if (text.compare(0, lead.size(), lead) != 0) return text;
  std::size_t end = lead.size();
  while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
  if (end == lead.size() || end > lead.size() + 9 || end >= text.size() || text[end] != ':') return text;
  const std::size_t n = std::stoul(text.substr(lead.size(), end - lead.size()));
  if (n < 1 || n >= lines.size()) return text;
  return lead + std::to_string(lines[n]) + text.substr(end);
}

}  // namespace

// A NeMo 1.x config: a YAML mapping whose top level holds trainer: and model:, the model holding
// keys of NeMo's Megatron models (megatron_gpt_config.yaml's).
bool is_nemo1_config(std::string_view text) {
  bool trainer = false, model = false, key = false;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (line.rfind("trainer:", 0) == 0) trainer = true;
    if (line.rfind("model:", 0) == 0) model = true;
    const std::size_t b = line.find_first_not_of(' ');
    if (b == 0 || b == std::string_view::npos) continue;
    for (const char* k : {"tensor_model_parallel_size:", "encoder_seq_length:", "micro_batch_size:",
                          "pipeline_model_parallel_size:", "megatron_amp_O2:"}) {
      if (line.substr(b).rfind(k, 0) == 0) key = true;
    }
  }
  return trainer && model && key;
}

core::Result<ImportResult> import_nemo1(std::string_view text, const std::string& path, const ImportOptions& options) {
  PlanBuilder b("nemo", path);
  PLANCK_IMPORT_TRY(root, parse_yaml(std::string(text), b));
  if (!root.IsMap() || !root["model"].IsMap()) {
    return b.error(0, "a NeMo 1.x config is a YAML mapping with trainer: and model: sections");
  }
  if (!options.sets.empty()) {
    return core::Status::error("--set: planck does not apply Hydra overrides to a NeMo config yet; edit " + path +
                               " instead");
  }
  YamlReader y(root, b);
  if (auto st = nemo1_refuse_other_models(y, root, b); !st) return st;
  y.check_keys(root, nemo1_classes(), "Nemo1Root", "");
  const Nemo1Config cfg(root);
  Nemo1Reader r(cfg, b);
  ImportOptions megatron = options;
  if (auto st = nemo1_world(r, options, megatron); !st) return st;
  Nemo1Args args;
  if (auto st = nemo1_layout(r, args); !st) return st;
  if (auto st = nemo1_model(r, args); !st) return st;
  if (auto st = nemo1_precision(r, args); !st) return st;
  if (auto st = nemo1_unmodelled(r); !st) return st;

  auto m = import_megatron(args.text, path, megatron);
  if (!m) return core::Status::error(nemo1_relocate(m.message(), path, args.lines));
  ImportResult& out = *m;
  for (auto& [pointer, line] : out.positions) {
    if (line >= 1 && line < static_cast<int>(args.lines.size())) line = args.lines[static_cast<std::size_t>(line)];
  }
  for (ImportFinding& f : out.findings) {
    if (f.file == path && f.line >= 1 && f.line < static_cast<int>(args.lines.size()))
      f.line = args.lines[static_cast<std::size_t>(f.line)];
  }
  for (std::string& w : out.warnings) w = nemo1_relocate(w, path, args.lines);
  std::erase_if(out.notes, [](const std::string& n) {
    return n.rfind("imported by `planck import megatron`", 0) == 0 || n.rfind("args file: ", 0) == 0;
  });
  out.plan["notes"] = out.notes;
  std::string stem = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".yaml") == 0) stem.resize(stem.size() - 5);
  out.plan["name"] = "nemo-" + stem;
  b.note("NeMo 1.x config: its model keys read as the " + std::to_string(args.lines.size() - 1) +
         " Megatron-LM flags of the TransformerConfig fields they set (megatron_base_model.py "
         "build_transformer_config)");
  for (Unfollowed& u : r.unfollowed()) out.unfollowed.push_back(std::move(u));
  ImportResult own = b.finish();
  take_said(out, std::move(own), path);
  return std::move(out);
}

}  // namespace planck::import
