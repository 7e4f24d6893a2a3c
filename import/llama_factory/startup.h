#pragma once
// The LLaMA-Factory importer's parts (import/llama_factory/): the start-up checks LLaMA-Factory
// raises on (startup_checks.cc) and the DeepSpeed file a YAML names (deepspeed_file.cc).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/plan/json_doc.h"
#include "import/formats/yaml_reader.h"
#include "import/importer.h"
#include "import/plan_builder.h"

namespace planck::import::llama_factory {

// What get_train_args decides the run with: the DeepSpeed file (if any) and its ZeRO stage, and
// whether torchrun launches it (ParallelMode.DISTRIBUTED: more than one GPU, or any DeepSpeed run,
// which parser.py:471-472 requires under torchrun).
struct Launch {
  bool deepspeed = false;
  bool zero3 = false;  // HfDeepSpeedConfig.is_zero3(): zero_optimization.stage == 3
  bool distributed = false;
};

// The combinations and values LLaMA-Factory @ff6d4d12 raises on before training (hparams/parser.py
// get_train_args and _verify_model_args, finetuning_args.py __post_init__, train/tuner.py
// _training_function): an error at the setting's line, naming the check and the fix.
core::Status check_startup(YamlReader& y, const YAML::Node& root, PlanBuilder& b, const Launch& launch);

// The YAML's batch and dtype as TrainingArguments holds them.
struct Run {
  std::int64_t micro = 8, accumulation = 1;  // TrainingArguments defaults
  bool bf16 = false, fp16 = false, pure_bf16 = false;
  // The YAML key of the per-device batch (axolotl's micro_batch_size), for the fill and mismatch messages.
  const char* micro_key = "per_device_train_batch_size";
};

// planck's training.optimizer for a Hugging Face `optim` name (OptimizerNames: adamw_torch,
// adamw_bnb_8bit, adafactor, sgd, lion_32bit, ...), "" when planck has none for it.
std::string optimizer_of(const std::string& optim);

// The DeepSpeed file `deepspeed:` names, found and parsed (root is null when it is not JSON; the
// DeepSpeed importer then reports why).
struct DsFile {
  std::string path, text;
  std::optional<core::JsonDoc> doc;
  int line = 0;  // the YAML's deepspeed: line
  bool zero3() const;
  // The value at a JSON pointer; null when absent or the file is not JSON.
  const nlohmann::json* at(const std::string& pointer) const;
};
// `key` of the mapping `root` names the file (LLaMA-Factory's `deepspeed`, accelerate's
// deepspeed_config.deepspeed_config_file); `resolved_by` says, in the message for a file not found,
// where the framework looks for it.
core::Result<DsFile> load_deepspeed(YamlReader& y, const YAML::Node& root, PlanBuilder& b,
                                    const std::string& yaml_path, const std::string& key = "deepspeed",
                                    const std::string& resolved_by =
                                        "LLaMA-Factory resolves it from where llamafactory-cli runs");

// Hugging Face's trainer_config_process (transformers integrations/deepspeed.py): the DeepSpeed
// keys the trainer fills from TrainingArguments where they are "auto"; a fixed value that differs
// is a mismatch the trainer raises on (an error at the YAML's line naming each pair).
core::Result<std::vector<ImportOptions::Fill>> trainer_fills(YamlReader& y, const YAML::Node& root, PlanBuilder& b,
                                                             const DsFile& ds, const Run& run,
                                                             const ImportOptions& options);

// The DeepSpeed config is the run: imported by the DeepSpeed importer with what the trainer fills
// ("auto") from the YAML (trainer_fills); positions point into the DeepSpeed file.
core::Result<ImportResult> import_trainer_deepspeed(YamlReader& y, const YAML::Node& root, PlanBuilder& b,
                                                   const DsFile& ds, const Run& run, const ImportOptions& options);

// The Hugging Face Trainer's own FSDP (TrainingArguments fsdp: "full_shard auto_wrap" and fsdp_config),
// read as transformers' _process_fsdp_args and accelerate's plugin take it (trainer_fsdp.cc): the mesh,
// parallelism, stack (fsdp1 / fsdp2) and offload written into `b`'s plan. False when fsdp is off.
core::Result<bool> read_trainer_fsdp(YamlReader& y, const YAML::Node& root, PlanBuilder& b, const World& w);

// Training in the 16-bit weights as loaded (LLaMA-Factory's pure_bf16, axolotl's bf16 under DDP):
// no fp32 master copy, gradients reduced in bf16 and torch's optimizer states in the weights'
// dtype; placed at `line` of the setting and noted with `why`.
void set_bf16_as_loaded(nlohmann::ordered_json& training, PlanBuilder& b, int line, const std::string& why);

}  // namespace planck::import::llama_factory
