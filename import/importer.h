#pragma once
// Importers: a planck plan (docs/plan-format.md) from a framework's own config, with the framework's
// semantics (sources cited in each importer, facts in docs/sources/mesh.md §2-5).
//
// Every inference lands in `notes` (written into the plan's "notes" and printed by
// `planck import --explain`); unknown keys and doubtful values are `warnings` (stderr and notes).
// A config the framework would reject is either imported faithfully, so that `planck verify`
// reports it (a -1 that does not divide, a batch that does not factor), or refused with a
// Status naming the numbers and the file:line. Nothing is silently fixed.

#include <cstdint>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/status.h"

namespace planck::import {

// Lingua's apps/main/train.py computed the data rank as `dp_rank * dp_degree + dp_shard_rank`
// (dp_degree still |dp_replicate|) until commit d1fd421 (PR #70, issues #58/#66) made it
// `dp_rank * |dp_shard| + dp_shard_rank`; the same commit added set_requires_gradient_sync.
enum class LinguaFormula { kBeforeFix, kAfterFix };

struct ImportOptions {
  std::optional<std::int64_t> nodes;          // --nodes
  std::optional<std::int64_t> gpus_per_node;  // --gpus-per-node
  std::optional<std::int64_t> nvlink_domain;  // --nvlink-domain (cluster.nvlink_domain)
  LinguaFormula lingua_formula = LinguaFormula::kAfterFix;
  // --python-path: directories searched for the modules a Python config imports, after the
  // config's directory and its parents and before PYTHONPATH (torchtitan registries).
  std::vector<std::string> python_path;
  // --set NAME=VALUE (and --script-args), in order; what the command line sets wins over the
  // config and is noted: a dotted key of a torchtitan TOML or registry (`parallelism.
  // pipeline_parallel_degree`, the names torchtitan's CLI takes) or a DeepSpeed JSON
  // (`zero_optimization.stage`), a shell variable or positional parameter (`1`) of a launch script.
  std::vector<std::pair<std::string, std::string>> sets;
  // What a trainer writes into the config before the framework reads it, noted with where it came
  // from (not the command line): a LLaMA-Factory YAML's batch and dtype filled into its DeepSpeed
  // file's "auto" (or absent) keys, as Hugging Face's integrations/deepspeed.py does.
  struct Fill {
    std::string key, value, from;
  };
  std::vector<Fill> fills;
  // --micro-batch / --global-batch: the batch a config leaves to its trainer (a DeepSpeed JSON
  // without train_batch_size or train_micro_batch_size_per_gpu, filled by the HF Trainer).
  std::optional<std::int64_t> micro_batch, global_batch;
  // --with FILE: further files of the run the framework merges into the config, in order (GPT-NeoX's
  // `deepy.py train.py a.yml b.yml`); the other frameworks read one config and refuse them.
  std::vector<std::string> merge_files;
};

// A --set VALUE as the config would hold it: an integer, a number, true/false, else the string.
nlohmann::json set_value(const std::string& text);

// The variables a launch script starts with: `sets` (--set NAME=VALUE, --script-args), then what
// Slurm would set for the cluster --nodes / --gpus-per-node name (SLURM_NNODES,
// SLURM_JOB_NUM_NODES, SLURM_GPUS_PER_NODE; `sbatch --nodes=N script` sets them, over the
// script's #SBATCH lines), unless `sets` gives them.
std::vector<std::pair<std::string, std::string>> shell_presets(std::vector<std::pair<std::string, std::string>> sets,
                                                               const ImportOptions& options);

// A statement, call or value of the config that planck could not follow and that sets, or may
// set, the mesh, model, batch, parallelism, precision or recompute: planck will not assume the
// framework's defaults for it (verify: `config-unfollowed`, exit 2; import: exit 2).
struct Unfollowed {
  std::string file;       // where the construct is written
  int line = 0;           // 1-based, 0 = unknown
  std::string construct;  // the code, as written
  std::string why;        // why it was not followed
  std::string settings;   // the settings it may set ("the whole config" when not narrower)
};

// A warning with a rule of its own (docs/verify.md "Framework configs"), which `planck verify
// CONFIG` reports as a diagnostic at `line` of `file` (and --strict fails on):
//   setting-unmodelled: a setting the framework reads that changes the mesh, memory, time or
//     traffic, which planck neither follows nor prices; the message says what it assumed instead.
//   unknown-key: a key the framework itself does not know (a typo, a key of another version).
//   model-unmodelled-layers: layers of the model planck prices as something else.
struct ImportFinding {
  std::string rule;
  std::string message;  // without the file:line prefix
  std::string file;     // the config or the script the setting is written in
  int line = 0;
  // The plan field the assumption fills ("/training/micro_batch"), when it is one: the same fact
  // given on the command line (--micro-batch) settles it, and the finding goes.
  std::string pointer;
  // A setting-unmodelled whose setting saves GPU memory that the price keeps (activations moved to
  // the host, partitioned or chunked): that setting ("--checkpoint-in-cpu"), "" for any other
  // finding. The predicted peak is then an upper bound, and verify says a memory-exceeds as a
  // warning naming it (docs/verify.md).
  std::string memory_saving{};
};

// A finding as the importer's warnings and notes print it: "FILE:LINE: RULE: MESSAGE" ("FILE: ..."
// without a line).
std::string finding_text(const ImportFinding& f);

struct ImportResult {
  nlohmann::ordered_json plan;        // docs/plan-format.md plan, keys in the order docs/plan-format.md lists them
  std::vector<std::string> notes;     // inferences (also in plan["notes"])
  std::vector<std::string> warnings;  // unknown keys, assumptions worth a look (also in notes)
  std::vector<ImportFinding> findings;  // the warnings that have a rule (also in warnings)
  std::vector<std::string> hints;     // --explain only: e.g. commented-out flags in a script
  // Where the plan's fields came from: JSON pointer into `plan` ("/mesh/shape/4") -> 1-based line
  // of `source_path` (the config, or the script a Megatron flag was written in). `planck verify
  // CONFIG` places each diagnostic at the line of its pointer's longest located prefix.
  std::map<std::string, int> positions;
  // The file of a position when it is not `source_path` (a base function in another module).
  std::map<std::string, std::string> position_files;
  std::string source_path;
  // Constructs that matter and could not be followed; the plan is not to be checked when any.
  std::vector<Unfollowed> unfollowed;
  bool world_assumed = false;  // neither the options nor the config gave the cluster size
  // Set when this one config of a file that defines several could not be imported (a recipe whose
  // sizes Megatron itself would refuse): the message, and no plan. The file's other configs are
  // still read; one named on its own is an error instead.
  std::string failed;
};

// One plan of a config that defines several (a torchtitan registry: one per function).
struct NamedImport {
  std::string name;  // the registry function; "" for a config that is one plan
  ImportResult result;
};

using ImportFn = core::Result<ImportResult> (*)(std::string_view text, const std::string& path,
                                                const ImportOptions& options);

// "torchtitan", "lingua", "megatron", "megatron-bridge", "deepspeed", "llama-factory", "accelerate", "nemo", "neox",
// "axolotl".
const std::vector<std::string>& framework_names();
// The importer for `framework`, or nullptr when unknown.
ImportFn find_importer(std::string_view framework);

// Every plan `spec` defines. `spec` is a file, or for a torchtitan registry FILE.py:FUNCTION
// (one function) or FILE.py (every function). A .py file is a torchtitan registry.
core::Result<std::vector<NamedImport>> import_all(std::string_view framework, const std::string& spec,
                                                  const ImportOptions& options);

// The framework whose config `text` is, from its content ("plan" for a planck plan), or "" when
// nothing identifies it. `path` only helps (a .py suffix).
std::string detect_framework(const std::string& path, std::string_view text);

// The file part of a spec: "config_registry.py:llama3_70b" -> "config_registry.py" (when the
// whole spec is not itself a file).
std::string spec_file(const std::string& spec);

// Reads `path` and imports it (a registry defining several functions needs :FUNCTION). Unreadable file, unknown framework, unparseable config or a
// config planck refuses: an error Status naming file, line (where the parser gives one) and numbers.
core::Result<ImportResult> import_file(std::string_view framework, const std::string& path,
                                       const ImportOptions& options);

core::Result<ImportResult> import_torchtitan(std::string_view text, const std::string& path,
                                             const ImportOptions& options);
core::Result<ImportResult> import_lingua(std::string_view text, const std::string& path, const ImportOptions& options);
// Python registries (torchtitan/registry.cc): every function, or `function` alone when not "".
core::Result<std::vector<NamedImport>> import_torchtitan_registry(const std::string& path,
                                                                  const std::string& function,
                                                                  const ImportOptions& options);
core::Result<ImportResult> import_megatron(std::string_view text, const std::string& path,
                                           const ImportOptions& options);
// A Hugging Face accelerate config (`accelerate launch --config_file`; accelerate/accelerate.cc).
core::Result<ImportResult> import_accelerate(std::string_view text, const std::string& path,
                                             const ImportOptions& options);
// Whether a line of `text` starts with one of `keys` ("name:"): a key at the top level of a YAML.
bool has_top_level_key(std::string_view text, std::initializer_list<const char*> keys);
// accelerate's config file (commands/config/config_args.py ClusterConfig, written by `accelerate
// config`): top-level compute_environment and distributed_type keys.
bool is_accelerate_config(std::string_view text);
// Megatron-Bridge / NeMo 2 recipe functions (bridge/bridge.cc): every function, or `function` alone.
core::Result<std::vector<NamedImport>> import_bridge_recipes(const std::string& path, const std::string& function,
                                                             const ImportOptions& options);
// A Megatron-Bridge launch script (bridge/launch.cc): one plan per run_recipe.py launch it runs,
// the named recipe with the launch's overrides; --set NAME=VALUE gives a shell variable, --set
// a.b=c a ConfigContainer override over the script's.
core::Result<std::vector<NamedImport>> import_bridge_launch(std::string_view text, const std::string& path,
                                                            const ImportOptions& options);
core::Result<ImportResult> import_deepspeed(std::string_view text, const std::string& path,
                                            const ImportOptions& options);
// Whether `text` is a DeepSpeed config by its keys: a JSON (or hjson) object with no "format" that
// holds DeepSpeed top-level keys only (deepspeed/runtime/constants.py), none of a planck plan's.
bool is_deepspeed_config(std::string_view text);
// More of the JSON object's top-level keys are DeepSpeed's than not (true when it does not parse,
// so that the DeepSpeed importer reports the error at its line): a Hugging Face TrainingArguments
// JSON (ms-swift's, LLaMA-Factory's) shares gradient_accumulation_steps with DeepSpeed, little else.
bool mostly_deepspeed_keys(std::string_view text);
// LLaMA-Factory's training YAML (llama_factory.cc): the DeepSpeed config it names, or torchrun DDP,
// with its batch, sequence, model and LoRA settings.
core::Result<ImportResult> import_llama_factory(std::string_view text, const std::string& path,
                                                const ImportOptions& options);
// NeMo 1.x's Hydra YAML (nemo1/nemo1.cc): megatron_gpt_config.yaml and its kin, the model keys read
// as the Megatron-LM flags of the TransformerConfig fields they set.
core::Result<ImportResult> import_nemo1(std::string_view text, const std::string& path, const ImportOptions& options);
// A YAML whose top level holds trainer: and model:, the model holding NeMo's Megatron keys.
bool is_nemo1_config(std::string_view text);
// An EleutherAI/gpt-neox config (neox/neox.cc): one YAML of NeoXArgs and DeepSpeed keys (a run that
// merges several files is read from this one alone).
core::Result<ImportResult> import_neox(std::string_view text, const std::string& path, const ImportOptions& options);
// Whether `text` is a GPT-NeoX config: top-level pipe_parallel_size or model_parallel_size (dashes
// or underscores), or num_layers, hidden_size and num_attention_heads beside a NeoX training key.
bool is_neox_config(std::string_view text);
// An axolotl training YAML (axolotl/axolotl.cc): the Hugging Face Trainer's run with the DeepSpeed
// file, FSDP or ND parallelism it names, LoRA / QLoRA and RL settings.
core::Result<ImportResult> import_axolotl(std::string_view text, const std::string& path,
                                          const ImportOptions& options);
// A YAML whose top level holds base_model: beside one of axolotl's own keys (sequence_len:,
// micro_batch_size:, datasets:, adapter:, ...).
bool is_axolotl_config(std::string_view text);

}  // namespace planck::import
