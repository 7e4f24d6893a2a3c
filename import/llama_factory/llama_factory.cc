// LLaMA-Factory training YAML (`llamafactory-cli train X.yaml`) -> plan.
//
// Semantics, hiyouga/LLaMA-Factory@ff6d4d12: src/llamafactory/hparams/ (the YAML's keys are the
// fields of ModelArguments, DataArguments, TrainingArguments (Hugging Face's Seq2SeqTrainingArguments
// and LLaMA-Factory's additions), FinetuningArguments, GeneratingArguments, parsed by
// HfArgumentParser, parser.py _TRAIN_ARGS); finetuning_args.py (finetuning_type default "lora",
// lora_rank 8, lora_target "all"); model_args.py (gradient checkpointing on unless
// disable_gradient_checkpointing); data_args.py (cutoff_len 2048). With `deepspeed: FILE` the run is
// that DeepSpeed config, its "auto" values filled by Hugging Face's integrations/deepspeed.py from
// the YAML's batch and dtype; without it, torchrun's DDP.

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "core/base/input_file.h"
#include "import/llama_factory/hf_training_args.h"
#include "import/importer.h"
#include "import/llama_factory/keys.h"
#include "import/llama_factory/startup.h"
#include "import/plan_builder.h"
#include "import/formats/yaml_reader.h"

namespace planck::import {

namespace {

using llama_factory::DsFile;
using llama_factory::Launch;
using llama_factory::Run;

// The keys HfArgumentParser(_TRAIN_ARGS) accepts.
std::vector<std::string> known_keys() {
  std::vector<std::string> out = kHfTrainingArguments;
  for (const char* cls : {"ModelArguments", "DataArguments", "TrainingArguments", "FinetuningArguments",
                          "GeneratingArguments"}) {
    for (const auto& [field, kind] : config_fields(llama_factory_classes(), cls)) out.push_back(field);
  }
  return out;
}

// The finetuning method: LoRA adapters, or a warning where planck prices every weight as trained.
core::Status read_finetuning(YamlReader& y, const YAML::Node& root, PlanBuilder& b, nlohmann::ordered_json& t) {
  PLANCK_IMPORT_TRY(type, y.string(root, "finetuning_type", ""));
  const std::string kind = type.value_or("lora");
  if (kind == "freeze" || kind == "oft") {
    b.unmodelled("finetuning_type " + kind, y.line_of(root, "finetuning_type"),
                 "every weight priced as trained (full fine-tuning)");
    return core::Status::ok();
  }
  if (kind != "lora") return core::Status::ok();
  PLANCK_IMPORT_TRY(rank, y.integer(root, "lora_rank", ""));
  PLANCK_IMPORT_TRY(target, y.string(root, "lora_target", ""));
  t["lora_rank"] = rank.value_or(8);
  // lora_target: "all" (every Linear but the output layer) or PEFT module names, comma-separated.
  const std::string names = target.value_or("all");
  std::string other;
  if (names != "all") {
    nlohmann::json list = nlohmann::json::array();
    std::size_t start = 0;
    while (start <= names.size()) {
      const std::size_t comma = std::min(names.find(',', start), names.size());
      std::string n = names.substr(start, comma - start);
      n.erase(0, n.find_first_not_of(' '));
      n.erase(n.find_last_not_of(' ') + 1);
      if (!n.empty()) list.push_back(n);
      start = comma + 1;
    }
    t["lora_targets"] = map_lora_targets(list, hf_lora_modules(), &other);
  }
  b.note("finetuning_type lora: adapters of rank " + std::to_string(t["lora_rank"].get<std::int64_t>()) + " on " +
         names + ", the base weights frozen");
  if (!other.empty()) {
    b.unmodelled("lora_target " + other, y.line_of(root, "lora_target"),
                 "no adapters priced on them (planck prices q_proj ... down_proj)");
  }
  for (const char* key : {"use_dora", "use_llama_pro"}) {
    PLANCK_IMPORT_TRY(on, y.boolean(root, key, "", false));
    if (on) b.unmodelled(std::string(key) + " true", y.line_of(root, key), "priced as plain LoRA adapters");
  }
  PLANCK_IMPORT_TRY(additional, y.string(root, "additional_target", ""));
  if (additional) {
    b.unmodelled("additional_target " + *additional, y.line_of(root, "additional_target"),
                 "those modules priced as frozen");
  }
  return core::Status::ok();
}

// Formats that are LLaMA-Factory's but not the HfArgumentParser YAML planck reads: refused with
// the key that shows them, rather than a DDP plan from defaults.
core::Status refuse_other_paths(YamlReader& y, const YAML::Node& root, PlanBuilder& b) {
  // v1 (examples/v1): model / model_class / dist_config / micro_batch_size instead of
  // model_name_or_path and per_device_train_batch_size.
  for (const char* key : {"dist_config", "model_class", "model"}) {
    if (root[key] && !root["model_name_or_path"]) {
      return b.error(y.line_of(root, key),
                     std::string(key) + ": a LLaMA-Factory v1 config (model, model_class, dist_config), a format "
                     "planck does not read; import the DeepSpeed JSON its dist_config.config_file names "
                     "(`planck import deepspeed FILE --micro-batch N`)");
    }
  }
  // USE_MCA=1 / use_mca / use_megatron_bridge: mcore_adapter's or Megatron-Bridge's training
  // arguments build Megatron-Core (hparams/parser.py:73-80, 397-398 @ff6d4d12), not the HF trainer.
  std::string keys;
  int line = 0;
  for (const auto& [field, kind] : config_fields(llama_factory_classes(), "MegatronBridgeArguments")) {
    if (!root[field]) continue;
    const int at = y.line_of(root, field);
    if (line == 0 || at < line) line = at;
    keys += (keys.empty() ? "" : ", ") + field;
  }
  for (const char* flag : {"use_mca", "use_megatron_bridge"}) {
    PLANCK_IMPORT_TRY(on, y.boolean(root, flag, "", false));
    if (on && line == 0) line = y.line_of(root, flag);
    if (on) keys += (keys.empty() ? "" : ", ") + std::string(flag);
  }
  if (keys.empty()) return core::Status::ok();
  return b.error(line, "LLaMA-Factory's Megatron path (USE_MCA=1 with mcore_adapter, or use_megatron_bridge) "
                       "reads " + keys + "; planck does not read that path, and pricing the file as the Hugging "
                       "Face trainer's DDP would be wrong. Write the layout as a Megatron-LM launch or a planck "
                       "plan (tp, pp, ep, distributed optimizer)");
}

// A TRL script config (`trl sft --config X.yaml`, open-r1's `src/open_r1/sft.py --config X.yaml`:
// trl/scripts/utils.py TrlParser:321-327 @f2cd577 loads the YAML into ModelConfig, ScriptArguments and
// SFTConfig / GRPOConfig / DPOConfig) shares model_name_or_path and TrainingArguments with a
// LLaMA-Factory YAML, but its fields are others: read as LLaMA-Factory's, the run would be priced
// with LLaMA-Factory's defaults (LoRA rank 8, cutoff_len 2048, DDP) that TRL never applies. Refused
// when the file has a key of TRL's classes that LLaMA-Factory lacks and none of LLaMA-Factory's own.
core::Status refuse_trl_script_config(YamlReader& y, const YAML::Node& root, PlanBuilder& b,
                                      const std::vector<std::string>& known) {
  // trl@f2cd577: trainer/model_config.py ModelConfig (dtype:89, torch_dtype before its rename,
  // attn_implementation:96, use_peft:103, lora_r:107, lora_target_modules:119, load_in_4bit:156),
  // scripts/utils.py ScriptArguments (dataset_name:169, dataset_config:173, dataset_train_split:180),
  // trainer/sft_config.py (dataset_text_field:182, dataset_num_proc:195, eos_token:199,
  // completion_only_loss:261; max_seq_length before max_length), trainer/grpo_config.py
  // (num_generations:474, max_completion_length:488, use_vllm:577, reward_weights:760).
  static const char* const kTrl[] = {"dtype", "torch_dtype", "attn_implementation", "use_peft", "lora_r",
                                     "lora_target_modules", "load_in_4bit", "dataset_name", "dataset_config",
                                     "dataset_train_split", "dataset_text_field", "dataset_num_proc", "eos_token",
                                     "completion_only_loss", "max_seq_length", "num_generations",
                                     "max_completion_length", "use_vllm", "reward_weights"};
  // LLaMA-Factory's own (hparams/ data_args.py, finetuning_args.py @ff6d4d12): a TRL config has none.
  static const char* const kOwn[] = {"stage", "finetuning_type", "template", "dataset", "cutoff_len"};
  for (const char* key : kOwn) {
    if (root[key]) return core::Status::ok();
  }
  std::string keys;
  int line = 0;
  for (const char* key : kTrl) {
    if (!root[key] || std::find(known.begin(), known.end(), key) != known.end()) continue;
    const int at = y.line_of(root, key);
    if (line == 0 || at < line) line = at;
    keys += (keys.empty() ? "" : ", ") + std::string(key);
  }
  if (keys.empty()) return core::Status::ok();
  return b.error(line, "a TRL script config (" + keys + " are fields of TRL's ModelConfig, ScriptArguments and "
                       "SFTConfig / GRPOConfig, and it has none of LLaMA-Factory's stage, finetuning_type, template, "
                       "dataset, cutoff_len): planck does not read it, and reading it as LLaMA-Factory's would price "
                       "LLaMA-Factory's defaults (LoRA rank 8, cutoff_len 2048). Verify the accelerate config its "
                       "launch names with the run's facts (`planck verify ACCELERATE.yaml --model MODEL --seq-len "
                       "S --micro-batch B`)");
}

// What the trainer runs besides the layout: model, sequence, checkpointing, optimizer, methods.
// `ds_optimizer`: the DeepSpeed file has an optimizer section, which is what runs.
core::Status read_training(YamlReader& y, const YAML::Node& root, PlanBuilder& b, nlohmann::ordered_json& t,
                           bool ds_optimizer) {
  PLANCK_IMPORT_TRY(cutoff, y.integer(root, "cutoff_len", ""));
  t["seq_len"] = cutoff.value_or(2048);
  if (!cutoff) b.note("seq_len 2048: LLaMA-Factory's cutoff_len default (data_args.py)");
  PLANCK_IMPORT_TRY(no_gc, y.boolean(root, "disable_gradient_checkpointing", "", false));
  t["activation_checkpointing"] = no_gc ? "none" : "full";
  if (!no_gc) b.note("gradient checkpointing of every layer: LLaMA-Factory's default (disable_gradient_checkpointing)");
  PLANCK_IMPORT_TRY(optim, y.string(root, "optim", ""));
  if (ds_optimizer) {
    // transformers@02348331 integrations/deepspeed.py deepspeed_optim_sched: with "optimizer" in the
    // DeepSpeed config the engine builds that one (DummyOptim); trainer.create_optimizer(), which
    // reads optim, runs only without it.
    b.note("the DeepSpeed file's optimizer runs (Hugging Face deepspeed_optim_sched)" +
           (optim ? "; the YAML's optim " + *optim + " (line " + std::to_string(y.line_of(root, "optim")) +
                        ") is not used"
                  : std::string()));
  } else if (optim) {
    const std::string kind = llama_factory::optimizer_of(*optim);
    if (!kind.empty()) t["optimizer"] = kind;
    else b.unmodelled("optim " + *optim, y.line_of(root, "optim"), "AdamW's two fp32 states assumed");
  }
  PLANCK_IMPORT_TRY(muon, y.boolean(root, "use_muon", "", false));
  if (muon && !ds_optimizer) t["optimizer"] = "muon";
  for (const char* key : {"use_galore", "use_apollo", "use_badam", "use_adam_mini", "use_unsloth",
                          "enable_liger_kernel", "use_unsloth_gc", "use_liger_kernel",
                          "torch_compile", "use_hyper_parallel", "train_mm_proj_only", "freeze_language_model"}) {
    PLANCK_IMPORT_TRY(on, y.boolean(root, key, "", false));
    if (on) b.unmodelled(std::string(key) + " true", y.line_of(root, key), "priced without it");
  }
  // Mixture-of-depths (model_args.py: Literal["convert", "load"] | None): MoD layers skip tokens.
  PLANCK_IMPORT_TRY(mod, y.string(root, "mixture_of_depths", ""));
  if (mod) {
    b.unmodelled("mixture_of_depths " + *mod, y.line_of(root, "mixture_of_depths"),
                 "priced as the dense model, every layer over every token");
  }
  // KTransformers (model_args.py KTransformersArguments.use_kt): the routed experts run on the CPU
  // (AMX kernels), which no plan field states.
  PLANCK_IMPORT_TRY(kt, y.boolean(root, "use_kt", "", false));
  if (kt) {
    b.unmodelled("use_kt true", y.line_of(root, "use_kt"),
                 "KTransformers keeps the routed experts on the CPU; planck prices them on the GPUs (their weights, "
                 "compute and any memory-exceeds are overstated by the experts' share)");
  }
  PLANCK_IMPORT_TRY(bits, y.integer(root, "quantization_bit", ""));
  if (bits) {
    b.unpriced_saving("quantization_bit " + std::to_string(*bits), y.line_of(root, "quantization_bit"),
                      "the frozen base weights priced in the training dtype, not " + std::to_string(*bits) + "-bit");
  }
  PLANCK_IMPORT_TRY(stage, y.string(root, "stage", ""));
  PLANCK_IMPORT_TRY(pref_loss, y.string(root, "pref_loss", ""));
  // finetuning_args.py:593 @ff6d4d12: use_ref_model = stage == "dpo" and pref_loss not in
  // ["orpo", "simpo"]; train/dpo/workflow.py:57-63 builds no reference model otherwise.
  const bool reference_free = stage && *stage == "dpo" && pref_loss && (*pref_loss == "orpo" || *pref_loss == "simpo");
  if (reference_free) {
    b.note("stage dpo with pref_loss " + *pref_loss + ": no reference model (LLaMA-Factory's use_ref_model is false), "
           "one policy model priced");
  } else if (stage && (*stage == "dpo" || *stage == "kto" || *stage == "ppo")) {
    b.unmodelled("stage " + *stage, y.line_of(root, "stage"),
                 "one policy model priced: the reference (and reward / value) models' weights and forward passes "
                 "are not");
  }
  PLANCK_IMPORT_TRY(fp8, y.boolean(root, "fp8", "", false));
  if (fp8) t["fp8"] = "tensorwise";
  PLANCK_IMPORT_TRY(attn, y.string(root, "flash_attn", ""));
  if (attn && *attn == "disabled") t["attention"] = "standard";
  else if (attn && (*attn == "fa2" || *attn == "fa3" || *attn == "sdpa")) t["attention_kernel"] = *attn;
  return core::Status::ok();
}

}  // namespace

std::string llama_factory::optimizer_of(const std::string& o) {
  // paged_adamw_32bit, paged_lion_8bit, ...: bitsandbytes' paged variants keep the same states.
  if (o.rfind("paged_", 0) == 0) return optimizer_of(o.substr(6));
  if (o.rfind("adamw", 0) == 0 && o.find("8bit") == std::string::npos) return "adamw";
  if (o.find("8bit") != std::string::npos && o.find("adam") != std::string::npos) return "adam8bit";
  if (o == "adafactor") return "adafactor";
  if (o == "sgd") return "sgd";
  if (o.rfind("lion", 0) == 0) return "lion";
  return "";
}

core::Result<ImportResult> import_llama_factory(std::string_view text, const std::string& path,
                                                const ImportOptions& options) {
  PlanBuilder b("llama-factory", path);
  PLANCK_IMPORT_TRY(root, parse_yaml(std::string(text), b));
  if (!root.IsMap()) return b.error(0, "a LLaMA-Factory config is a YAML mapping (model_name_or_path, stage, ...)");
  YamlReader y(root, b);
  if (auto st = refuse_other_paths(y, root, b); !st) return st;
  const std::vector<std::string> known = known_keys();
  if (auto st = refuse_trl_script_config(y, root, b, known); !st) return st;
  for (const auto& kv : root) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
    if (std::find(known.begin(), known.end(), key) == known.end())
      b.unknown_key(key, YamlReader::line(kv.first), known);
  }
  Run run;
  PLANCK_IMPORT_TRY(micro, y.integer(root, "per_device_train_batch_size", ""));
  PLANCK_IMPORT_TRY(acc, y.integer(root, "gradient_accumulation_steps", ""));
  PLANCK_IMPORT_TRY(bf16, y.boolean(root, "bf16", "", false));
  PLANCK_IMPORT_TRY(pure, y.boolean(root, "pure_bf16", "", false));
  PLANCK_IMPORT_TRY(fp16, y.boolean(root, "fp16", "", false));
  run.micro = micro.value_or(8);
  run.accumulation = acc.value_or(1);
  run.bf16 = bf16;
  run.pure_bf16 = pure;
  run.fp16 = fp16;
  DsFile ds;
  if (root["deepspeed"]) {
    PLANCK_IMPORT_TRY(found, llama_factory::load_deepspeed(y, root, b, path));
    ds = std::move(found);
  }
  // torchrun runs every DeepSpeed launch (parser.py:471-472) and any over more than one GPU. A
  // YAML states no world: without --nodes / --gpus-per-node nothing is refused for being
  // distributed (verify then asks for the cluster size rather than refuse on an assumed one).
  Launch launch;
  launch.deepspeed = !ds.path.empty();
  launch.zero3 = ds.zero3();
  const bool world_given = options.nodes || options.gpus_per_node;
  launch.distributed =
      launch.deepspeed || (world_given && options.nodes.value_or(1) * options.gpus_per_node.value_or(8) > 1);
  if (auto st = llama_factory::check_startup(y, root, b, launch); !st) return st;
  ImportResult r;
  if (launch.deepspeed) {
    PLANCK_IMPORT_TRY(imported, llama_factory::import_trainer_deepspeed(y, root, b, ds, run, options));
    r = std::move(imported);
    if (pure) {
      b.unmodelled("pure_bf16 true", y.line_of(root, "pure_bf16"),
                   "the bf16 model under DeepSpeed priced with DeepSpeed's fp32 master partition");
    }
  } else {
    PLANCK_IMPORT_TRY(world, b.resolve_world(options, {}));
    b.set_cluster(world);
    PLANCK_IMPORT_TRY(fsdp, llama_factory::read_trainer_fsdp(y, root, b, world));
    if (!fsdp) {
      b.set_mesh({"dp"}, {world.size});
      b.plan()["parallelism"] = {{"data_parallel", world.size > 1 ? "ddp" : "none"}};
      b.set_data_rank_program({"dp"}, "Hugging Face Trainer's DistributedSampler over torchrun's ranks");
      b.note("no deepspeed: torchrun with PyTorch DDP (the Hugging Face Trainer's default)");
    }
    nlohmann::ordered_json& t = b.plan()["training"];
    t["micro_batch"] = run.micro;
    t["grad_accumulation"] = run.accumulation;
    t["global_batch"] = run.micro * run.accumulation * world.size;
    t["grad_sync"] = "last_microbatch";
    t["param_dtype"] = run.fp16 ? "fp16" : (run.bf16 || pure ? "bf16" : "fp32");
    if (!t.contains("stack")) t["stack"] = "fsdp2";  // PyTorch's eager runtime; fsdp1 under FSDP1
    if (pure) {
      // model/adapter.py:336-349 @ff6d4d12: with pure_bf16 the trainable weights stay in bf16 (no fp32
      // upcast, no master copy); torch's optimizers keep their states in the parameters' dtype.
      llama_factory::set_bf16_as_loaded(t, b, y.line_of(root, "pure_bf16"),
                                        "pure_bf16 (LLaMA-Factory model/adapter.py init_adapter keeps the trainable "
                                        "weights in half precision)");
    }
    r = b.finish();
    b = PlanBuilder("llama-factory", path);
  }
  nlohmann::ordered_json& t = r.plan["training"];
  if (auto st = read_training(y, root, b, t, ds.at("/optimizer") != nullptr); !st) return st;
  if (auto st = read_finetuning(y, root, b, t); !st) return st;
  PLANCK_IMPORT_TRY(model, y.string(root, "model_name_or_path", ""));
  set_hf_model(r, b, model, "model_name_or_path", y.line_of(root, "model_name_or_path"));
  r.plan["name"] = "llama-factory-" + std::filesystem::path(path).stem().string();
  take_said(r, b.finish(), path);
  return r;
}

}  // namespace planck::import
