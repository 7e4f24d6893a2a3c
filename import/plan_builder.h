#pragma once
// Shared pieces of the importers: the plan under construction with its notes and warnings, the
// world size, model presets, and overflow-checked arithmetic on the framework's numbers.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/plan/plan.h"
#include "core/base/status.h"
#include "import/importer.h"

namespace planck::import {

// A count or size as text, for the readers' messages.
inline std::string str(std::int64_t v) { return std::to_string(v); }

// a x b, or nullopt when it overflows int64 (hostile configs write 2^62-sized degrees).
std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b);
std::optional<std::int64_t> checked_product(std::initializer_list<std::int64_t> values);

struct World {
  std::int64_t nodes = 1;
  std::int64_t gpus_per_node = 8;
  std::int64_t size = 8;
  std::int64_t nvlink_domain = 0;  // cluster.nvlink_domain; 0: a node
};

// What the config itself says about the world (launch-script variables, torchrun flags).
struct ConfigWorld {
  std::optional<std::int64_t> nodes, gpus_per_node, world_size;
  std::string source;  // "GPUS_PER_NODE/NUM_NODES in the script", for the notes
  // Set when the launcher runs on as many nodes as the job was given (bcprun without -n), which
  // the config does not say: the node count is not taken as 1.
  bool nodes_from_job = false;
  // Set when gpus_per_node is the launcher's default, not written (torchrun's --nproc-per-node "1"):
  // said as an import-warning at `default_line`, since the run then leaves the node's other GPUs idle.
  bool per_node_defaulted = false;
  int default_line = 0;
};

// A Hugging Face model id (Megatron-Bridge's AutoBridge.from_hf_pretrained, LLaMA-Factory's
// model_name_or_path) -> planck's preset of that checkpoint ("" when none); an -Instruct / -Base
// suffix names the same shape.
std::string preset_of_hf_id(const std::string& hf_id);

// Module names a framework's LoRA config targets -> the plan's training.lora_targets
// (core/plan/trainable.h): `table` gives planck's targets for each name; names it lacks are
// listed in *other (comma-separated, as written) for the importer to warn about.
using LoraNames = std::vector<std::pair<std::string, std::vector<std::string>>>;
nlohmann::ordered_json map_lora_targets(const nlohmann::json& names, const LoraNames& table, std::string* other);
// PEFT's module names in Hugging Face Llama-style models (q_proj ... down_proj) -> planck's targets:
// the names LLaMA-Factory's lora_target and axolotl's lora_target_modules list.
inline const LoraNames& hf_lora_modules() {
  static const LoraNames k = {{"q_proj", {"q"}},       {"k_proj", {"k"}}, {"v_proj", {"v"}},    {"o_proj", {"o"}},
                              {"gate_proj", {"gate"}}, {"up_proj", {"up"}}, {"down_proj", {"down"}}};
  return k;
}

// A place in the config: a 1-based line (0 = unknown) of the config itself, or of `file`, another
// file of the same run (GPT-NeoX's further YAMLs). An int converts to a line of the config.
struct Where {
  Where(int at_line) : line(at_line) {}  // NOLINT(google-explicit-constructor): a line of the config
  Where(int at_line, std::string in_file) : line(at_line), file(std::move(in_file)) {}
  int line = 0;
  std::string file;  // "" = the config
};

class PlanBuilder {
 public:
  PlanBuilder(std::string framework, std::string path);

  void note(std::string text);  // an inference: plan notes and --explain
  void warn(std::string text);  // stderr and plan notes
  void hint(std::string text);  // --explain only
  // setting-unmodelled (importer.h ImportFinding): `setting` as written in the config, at `line`
  // (0 = unknown), and what planck assumed instead.
  // `pointer`: the plan field the assumption fills (ImportFinding::pointer), when it is one.
  void unmodelled(const std::string& setting, const Where& line, const std::string& assumed,
                  const std::string& pointer = "");
  // unmodelled, for a setting that saves GPU memory the price keeps (ImportFinding::memory_saving).
  void unpriced_saving(const std::string& setting, const Where& line, const std::string& assumed);
  // unknown-key: `key` (its full name, e.g. "/zero_optimization/offload_optimzer") is not one of
  // `known`, the framework's own keys at that level; the message offers the closest.
  // `file`: where the key is written when not the config itself (a module a registry imports).
  void unknown_key(const std::string& key, const Where& line, const std::vector<std::string>& known,
                   const std::string& file = "");
  // A warning with its own rule (model-unmodelled-layers, ...); `pointer` as for unmodelled.
  void finding(const std::string& rule, const Where& line, const std::string& message, const std::string& file = "",
               const std::string& pointer = "");
  // The plan field at `pointer` was set from line `line` of the config (0 = unknown, ignored).
  void locate(const std::string& pointer, const Where& line);

  const std::string& path() const { return path_; }
  // "PATH:LINE: message" (":LINE" left out when line is 0) as an error Status.
  core::Status error(const Where& line, const std::string& message) const;

  // --nodes/--gpus-per-node first, then the config, then 1 node x 8 GPUs (with a warning).
  core::Result<World> resolve_world(const ImportOptions& options, const ConfigWorld& config);

  nlohmann::ordered_json& plan() { return plan_; }
  void set_cluster(const World& world);
  void set_mesh(const std::vector<std::string>& dims, const std::vector<std::int64_t>& shape);
  // The plan's rank_program when the framework's data rank is the mixed-radix index over
  // `data_dims` in mesh order (slowest first): dp_rank = (a.rank * b.size + b.rank) ...;
  // `source` names the framework's file and function, for the note.
  void set_data_rank_program(const std::vector<std::string>& data_dims, const std::string& source);
  // A preset name when the dims match one (core/plan/presets.h), else the docs/plan-format.md model object.
  void set_model(const core::ModelSpec& model, const std::string& described_as);

  // resolve_world found the cluster size in neither the options nor the config.
  bool world_assumed() const { return result_.world_assumed; }

  ImportResult finish();

 private:
  std::string framework_;
  std::string path_;
  nlohmann::ordered_json plan_;
  ImportResult result_;
};

// A result imported by another importer (the DeepSpeed file a YAML names) taking what the outer
// importer said: `own`'s notes (into the plan's notes too), warnings, findings and the positions
// `into` lacks; the source becomes `source_path`.
void take_said(ImportResult& into, ImportResult own, const std::string& source_path);

// The plan's model from a Hugging Face id written at `key` (line `line`): its preset, noted; with
// none (a local path, an unknown checkpoint, no key), the model is left out and that is warned.
void set_hf_model(ImportResult& r, PlanBuilder& b, const std::optional<std::string>& hf_id, const std::string& key,
                  int line);

// The model preset of `shape`'s layers, hidden size, heads and KV heads, whose vocabulary stands in for a
// tokenizer planck does not read (its caller says so, as a guess); with none, the model is left out:
// warned as "no MISSING: the vocabulary comes from the tokenizer, ... model left out (FIX)", and nullopt.
std::optional<core::ModelSpec> vocab_preset_or_warn(PlanBuilder& b, const core::ModelSpec& shape,
                                                    const std::string& missing, const std::string& fix);

}  // namespace planck::import

// `auto var = *expr` for a core::Result, returning its Status from the enclosing function on error.
#define PLANCK_IMPORT_TRY(var, expr)               \
  auto var##_result = (expr);                      \
  if (!var##_result) return var##_result.status(); \
  auto var = std::move(*var##_result)
