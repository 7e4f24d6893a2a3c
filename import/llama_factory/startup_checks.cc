// LLaMA-Factory's start-up refusals: combinations and values hiyouga/LLaMA-Factory@ff6d4d12 raises
// on before the first step, so a config planck would otherwise price as a run is an error at the
// setting's line naming LLaMA-Factory's check (file:line) and the fix.

#include <algorithm>
#include <string>
#include <vector>

#include "import/llama_factory/startup.h"

namespace planck::import::llama_factory {

namespace {

struct Flags {
  bool galore = false, apollo = false, badam = false, galore_layerwise = false, apollo_layerwise = false;
  bool pissa = false, dora = false, rslora = false, llama_pro = false, pure_bf16 = false, unsloth = false;
  bool kt = false, fp8 = false, predict_with_generate = false;
};

core::Result<Flags> read_flags(YamlReader& y, const YAML::Node& root) {
  Flags f;
  const std::pair<const char*, bool*> keys[] = {
      {"use_galore", &f.galore},         {"use_apollo", &f.apollo},
      {"use_badam", &f.badam},           {"galore_layerwise", &f.galore_layerwise},
      {"apollo_layerwise", &f.apollo_layerwise}, {"pissa_init", &f.pissa},
      {"use_dora", &f.dora},             {"use_rslora", &f.rslora},
      {"use_llama_pro", &f.llama_pro},   {"pure_bf16", &f.pure_bf16},
      {"use_unsloth", &f.unsloth},       {"use_kt", &f.kt},
      {"fp8", &f.fp8},                   {"predict_with_generate", &f.predict_with_generate}};
  for (const auto& [key, out] : keys) {
    PLANCK_IMPORT_TRY(on, y.boolean(root, key, "", false));
    *out = on;
  }
  return f;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

core::Status check_startup(YamlReader& y, const YAML::Node& root, PlanBuilder& b, const Launch& launch) {
  // "WHAT: LLaMA-Factory raises "MESSAGE" at start-up (CITE); FIX".
  auto refuse = [&](const char* key, const std::string& what, const std::string& message, const std::string& cite,
                    const std::string& fix) {
    return b.error(y.line_of(root, key),
                   what + ": LLaMA-Factory raises \"" + message + "\" at start-up (" + cite + "); " + fix);
  };
  // Enumerated values. HfArgumentParser.parse_dict builds the dataclasses without checking their
  // Literal types, so these are the checks that refuse a wrong value.
  PLANCK_IMPORT_TRY(stage_v, y.string(root, "stage", ""));
  const std::string stage = stage_v.value_or("sft");
  const std::vector<std::string> stages = {"pt", "sft", "rm", "ppo", "dpo", "kto"};
  if (std::find(stages.begin(), stages.end(), stage) == stages.end()) {
    return refuse("stage", "stage " + stage,
                  "Unknown task: " + stage + ".", "train/tuner.py:150-151; the stages are " + join(stages),
                  "use one of them (GRPO and other RL stages are not LLaMA-Factory's)");
  }
  PLANCK_IMPORT_TRY(type_v, y.string(root, "finetuning_type", ""));
  const std::string type = type_v.value_or("lora");
  const std::vector<std::string> types = {"lora", "oft", "freeze", "full"};
  if (std::find(types.begin(), types.end(), type) == types.end()) {
    return refuse("finetuning_type", "finetuning_type " + type,
                  "Invalid fine-tuning method.",
                  "hparams/finetuning_args.py:595 asserts finetuning_type in " + join(types),
                  std::string("use one of them") +
                      (type == "qlora" ? " (QLoRA is finetuning_type lora with quantization_bit 4)" : ""));
  }
  PLANCK_IMPORT_TRY(f, read_flags(y, root));
  PLANCK_IMPORT_TRY(bits, y.integer(root, "quantization_bit", ""));
  PLANCK_IMPORT_TRY(loraplus, y.real(root, "loraplus_lr_ratio", ""));
  // FinetuningArguments.__post_init__ (hparams/finetuning_args.py).
  if (f.llama_pro && type == "full") {
    return refuse("use_llama_pro", "use_llama_pro with finetuning_type full",
                  "`use_llama_pro` is only valid for Freeze or LoRA training.", "finetuning_args.py:612-613",
                  "use finetuning_type freeze or lora");
  }
  const char* method = f.galore ? "use_galore" : f.apollo ? "use_apollo" : f.badam ? "use_badam" : nullptr;
  if (method && type == "lora") {
    return refuse(method, std::string(method) + " with finetuning_type lora",
                  "Cannot use LoRA with GaLore, APOLLO or BAdam together.", "finetuning_args.py:615-616",
                  "use finetuning_type full (or freeze) with them, or drop " + std::string(method));
  }
  if (int(f.galore) + int(f.apollo) + int(f.badam) > 1) {
    return refuse(f.badam ? "use_badam" : "use_apollo", "more than one of use_galore, use_apollo, use_badam",
                  "Cannot use GaLore, APOLLO or BAdam together.", "finetuning_args.py:618-619",
                  "keep one of them");
  }
  if (type != "lora") {
    const std::pair<const char*, bool> lora_only[] = {{"loraplus_lr_ratio", loraplus.has_value()},
                                                      {"use_rslora", f.rslora},
                                                      {"use_dora", f.dora},
                                                      {"pissa_init", f.pissa}};
    for (const auto& [key, on] : lora_only) {
      if (!on) continue;
      std::string message = "`";
      message.append(key).append("` is only valid for LoRA training.");
      return refuse(key, std::string(key) + " with finetuning_type " + type, message, "finetuning_args.py:624-635",
                    "use finetuning_type lora or drop " + std::string(key));
    }
  }
  // _verify_model_args (hparams/parser.py:235-240).
  if (bits && type != "lora" && type != "oft") {
    return refuse("quantization_bit", "quantization_bit with finetuning_type " + type,
                  "Quantization is only compatible with the LoRA or OFT method.", "parser.py:235-237",
                  "use finetuning_type lora (QLoRA) or oft, or drop quantization_bit");
  }
  // get_train_args (hparams/parser.py).
  if (f.predict_with_generate && stage != "sft") {
    return refuse("predict_with_generate", "predict_with_generate with stage " + stage,
                  "`predict_with_generate` cannot be set as True except SFT.", "parser.py:418-420",
                  "drop predict_with_generate");
  }
  // With ZeRO-3 (parser.py:485-503, 532-536; checked here before the distributed ones, which
  // LLaMA-Factory runs between them: the first refusal may differ, not whether there is one).
  struct Zero3 {
    bool on;
    const char* key;
    const char* message;
    const char* cite;
    const char* fix;
  };
  const Zero3 zero3_refusals[] = {
      {f.predict_with_generate, "predict_with_generate",
       "`predict_with_generate` is incompatible with DeepSpeed ZeRO-3.", "parser.py:485-487",
       "drop predict_with_generate or use ZeRO stage 0-2"},
      {f.pissa, "pissa_init", "Please use scripts/pissa_init.py to initialize PiSSA in DeepSpeed ZeRO-3.",
       "parser.py:495-496", "initialize PiSSA offline with scripts/pissa_init.py and drop pissa_init"},
      {f.pure_bf16, "pure_bf16", "`pure_bf16` is incompatible with DeepSpeed ZeRO-3.", "parser.py:498-503",
       "use bf16: true instead, or ZeRO stage 0-2"},
      {f.unsloth, "use_unsloth", "Unsloth is incompatible with DeepSpeed ZeRO-3.", "parser.py:532-533",
       "use ZeRO stage 0-2"},
      {f.kt, "use_kt", "KTransformers is incompatible with DeepSpeed ZeRO-3.", "parser.py:535-536",
       "use ZeRO stage 0-2"},
  };
  for (const Zero3& z : zero3_refusals) {
    if (z.on && launch.zero3) {
      return refuse(z.key, std::string(z.key) + " with DeepSpeed ZeRO-3", z.message, z.cite, z.fix);
    }
  }
  if (launch.distributed) {
    const std::string dist = "distributed training (torchrun over " + std::string(launch.deepspeed ? "DeepSpeed" :
                                                                                  "more than one GPU") + ")";
    if (f.galore && f.galore_layerwise) {
      return refuse("galore_layerwise", "layer-wise GaLore in " + dist,
                    "Distributed training does not support layer-wise GaLore.", "parser.py:505-507",
                    "set galore_layerwise false, or train on one GPU");
    }
    if (f.apollo && f.apollo_layerwise) {
      return refuse("apollo_layerwise", "layer-wise APOLLO in " + dist,
                    "Distributed training does not support layer-wise APOLLO.", "parser.py:509-510",
                    "set apollo_layerwise false, or train on one GPU");
    }
    if (f.badam) {
      PLANCK_IMPORT_TRY(mode, y.string(root, "badam_mode", ""));
      if (mode.value_or("layer") == "ratio") {
        return refuse("badam_mode", "ratio-based BAdam in " + dist,
                      "Radio-based BAdam does not yet support distributed training, use layer-wise BAdam.",
                      "parser.py:512-514",
                      "set badam_mode layer with DeepSpeed ZeRO-3, or train on one GPU");
      }
      if (!launch.zero3) {
        return refuse("use_badam", "layer-wise BAdam in " + dist + " without DeepSpeed ZeRO-3",
                      "Layer-wise BAdam only supports DeepSpeed ZeRO-3 training.", "parser.py:515-516",
                      "add deepspeed: a ZeRO-3 config (examples/deepspeed/ds_z3_config.json), or train on one GPU");
      }
    }
  }
  if (launch.deepspeed && (f.galore || f.apollo)) {
    return refuse(f.galore ? "use_galore" : "use_apollo", "GaLore / APOLLO with DeepSpeed",
                  "GaLore and APOLLO are incompatible with DeepSpeed yet.", "parser.py:518-519",
                  "drop deepspeed (DDP) or the optimizer");
  }
  if (f.fp8 && bits) {
    return refuse("fp8", "fp8 with quantization_bit " + std::to_string(*bits),
                  "FP8 training is not compatible with quantization. Please disable one of them.",
                  "parser.py:521-527",
                  "drop fp8 or quantization_bit");
  }
  return core::Status::ok();
}

}  // namespace planck::import::llama_factory
