// What an axolotl run trains besides its layout (axolotl-ai-cloud/axolotl@067b021c8): LoRA / QLoRA
// adapters (utils/schemas/peft.py), quantized base weights (load_in_8bit / load_in_4bit), the RL
// trainers' reference model (train.py:137-153 setup_reference_model), activation checkpointing and
// offloading (utils/schemas/config.py:600-630) and the optimizer (HyperparametersConfig.optimizer).

#include <string>
#include <tuple>

#include "import/axolotl/axolotl.h"
#include "import/llama_factory/startup.h"

namespace planck::import::axolotl {

namespace {

// A YAML scalar that is set and not false: `key: true`, `key: offload`, `key: auto`.
core::Result<std::optional<std::string>> set_on(YamlReader& y, const YAML::Node& map, const char* key) {
  PLANCK_IMPORT_TRY(v, y.string(map, key, ""));
  for (const char* off : {"false", "False", "FALSE", "no", "off", "0"}) {
    if (v && *v == off) return std::optional<std::string>();
  }
  return v;
}

// adapter lora / qlora: the rank and the modules (peft.py:41-60; lora_target_linear: every Linear,
// utils/lora.py find_all_linear_names, which is planck's default of all targets).
core::Status read_adapter(YamlReader& y, const YAML::Node& root, PlanBuilder& b, nlohmann::ordered_json& t) {
  PLANCK_IMPORT_TRY(adapter, y.string(root, "adapter", ""));
  PLANCK_IMPORT_TRY(in8, y.boolean(root, "load_in_8bit", "", false));
  PLANCK_IMPORT_TRY(in4, y.boolean(root, "load_in_4bit", "", false));
  for (auto [key, on, bits] : {std::tuple<const char*, bool, const char*>{"load_in_8bit", in8, "8"},
                               {"load_in_4bit", in4, "4"}}) {
    if (!on) continue;
    b.unpriced_saving(std::string(key) + " true", y.line_of(root, key),
                      std::string("the frozen base weights priced in the training dtype, not ") + bits +
                          "-bit (bitsandbytes)");
  }
  if (!adapter) return core::Status::ok();
  if (*adapter != "lora" && *adapter != "qlora") {
    b.unmodelled("adapter " + *adapter, y.line_of(root, "adapter"),
                 "every weight priced as trained (full fine-tuning)");
    return core::Status::ok();
  }
  PLANCK_IMPORT_TRY(rank, y.integer(root, "lora_r", ""));
  PLANCK_IMPORT_TRY(linear, y.boolean(root, "lora_target_linear", "", false));
  PLANCK_IMPORT_TRY(saved_dir, y.string(root, "lora_model_dir", ""));
  if (saved_dir && !saved_dir->empty()) {
    // loaders/adapter.py:371-380: PeftModel.from_pretrained(lora_model_dir): the saved
    // adapter_config.json's rank and targets govern, the YAML's are not used.
    b.unmodelled("lora_model_dir " + *saved_dir, y.line_of(root, "lora_model_dir"),
                 "the saved adapter's rank and targets (its adapter_config.json) are not read: priced at " +
                     (rank ? "lora_r " + str(*rank) : std::string("rank 8")) + " on the YAML's targets");
  } else if (!rank) {
    // _build_peft_lora_config passes r=cfg.lora_r (None) to LoraConfig (adapter.py:188), and
    // get_peft_model's update_layer compares `r <= 0` (huggingface/peft@5d602fd
    // src/peft/tuners/lora/layer.py:239): a TypeError at start-up.
    return b.error(y.line_of(root, "adapter"),
                   "adapter " + *adapter + " without lora_r: axolotl passes lora_r (None) to PEFT's LoraConfig "
                   "(loaders/adapter.py:188), whose layers compare r <= 0 and raise at start-up "
                   "(peft tuners/lora/layer.py:239); set lora_r");
  }
  t["lora_rank"] = rank.value_or(8);
  const YAML::Node modules = root["lora_target_modules"];
  std::string targets = "every Linear layer (lora_target_linear)", other;
  if (!linear && modules && !modules.IsNull()) {
    nlohmann::json list = nlohmann::json::array();
    if (modules.IsScalar()) list.push_back(modules.Scalar());  // a str is one module name (peft.py:56)
    if (modules.IsSequence()) {
      for (const YAML::Node& m : modules)
        if (m.IsScalar()) list.push_back(m.Scalar());
    }
    t["lora_targets"] = map_lora_targets(list, hf_lora_modules(), &other);
    targets = list.dump();
  } else if (!linear) {
    targets = "PEFT's default modules for the model (no lora_target_modules); priced as every Linear layer";
  }
  b.note("adapter " + *adapter + ": adapters of rank " + std::to_string(t["lora_rank"].get<std::int64_t>()) +
         " on " + targets + ", the base weights frozen");
  if (!other.empty()) {
    b.unmodelled("lora_target_modules " + other, y.line_of(root, "lora_target_modules"),
                 "no adapters priced on them (planck prices q_proj ... down_proj)");
  }
  // lora_modules_to_save (peft.py): whole modules (embed_tokens, lm_head) trained beside the adapters.
  const YAML::Node saved = root["lora_modules_to_save"];
  if (saved && saved.IsSequence() && saved.size() > 0) {
    std::string names;
    for (const YAML::Node& m : saved) names += (names.empty() ? "" : ", ") + (m.IsScalar() ? m.Scalar() : "?");
    b.unmodelled("lora_modules_to_save " + names, y.line_of(root, "lora_modules_to_save"),
                 "those modules priced as frozen (their gradients and optimizer states are not)");
  }
  return core::Status::ok();
}

// rl: the trainers of TRL axolotl builds (core/builders/rl.py). setup_reference_model
// (train.py:137-153) loads a second model unless rl is orpo or an adapter stands in for it (the
// adapter disabled, without rl_adapter_ref_model); GRPO / EBFT with trl.beta 0 still load it
// (reference_model=False changes only how).
core::Status read_rl(YamlReader& y, const YAML::Node& root, PlanBuilder& b) {
  PLANCK_IMPORT_TRY(rl, y.string(root, "rl", ""));
  if (!rl) return core::Status::ok();
  const int line = y.line_of(root, "rl");
  PLANCK_IMPORT_TRY(adapter, y.string(root, "adapter", ""));
  PLANCK_IMPORT_TRY(ref_adapter, y.boolean(root, "rl_adapter_ref_model", "", false));
  const YAML::Node trl = root["trl"];
  const bool generates = *rl == "grpo" || *rl == "gdpo" || *rl == "ebft";
  if (*rl != "orpo" && !(adapter && !ref_adapter)) {
    b.unmodelled("rl " + *rl, line,
                 "one policy model priced: the reference model setup_reference_model loads (train.py:137-153) is "
                 "not, neither its weights nor its forward passes");
  } else {
    b.note("rl " + *rl + ": no separate reference model (train.py:137-153: " +
           std::string(*rl == "orpo" ? "ORPO needs none" : "the policy with its adapter disabled") + ")");
  }
  if (!generates) return core::Status::ok();
  PLANCK_IMPORT_TRY(vllm, y.boolean(trl, "use_vllm", "trl.", false));
  PLANCK_IMPORT_TRY(mode, y.string(trl, "vllm_mode", "trl."));
  b.unmodelled("rl " + *rl, line,
               "the rollouts (trl.num_generations completions per prompt, generated before each step) are not "
               "priced, only the training step on them");
  if (vllm) {
    b.unmodelled("trl.use_vllm true" + (mode ? ", vllm_mode " + *mode : std::string()), y.line_of(trl, "use_vllm"),
                 mode && *mode == "colocate"
                     ? "vLLM's engine shares these GPUs (its weights and KV cache) and is not priced"
                     : "the vLLM server's GPUs (axolotl vllm-serve) are outside this plan and not priced");
  }
  return core::Status::ok();
}

}  // namespace

core::Status read_methods(YamlReader& y, const YAML::Node& root, PlanBuilder& b, nlohmann::ordered_json& t,
                          bool ds_optimizer) {
  if (auto st = read_adapter(y, root, b, t); !st) return st;
  if (auto st = read_rl(y, root, b); !st) return st;
  // gradient_checkpointing (config.py:600-605, default False): true, "offload" or "offload_disk"
  // (checkpoints kept on the host or the disk), or fsdp_config.activation_checkpointing.
  PLANCK_IMPORT_TRY(gc, set_on(y, root, "gradient_checkpointing"));
  PLANCK_IMPORT_TRY(fsdp_ckpt, y.boolean(root["fsdp_config"], "activation_checkpointing", "fsdp_config.", false));
  const bool ckpt = fsdp_ckpt || gc;
  t["activation_checkpointing"] = ckpt ? "full" : "none";
  if (gc && (*gc == "offload" || *gc == "offload_disk")) {
    b.unpriced_saving("gradient_checkpointing " + *gc, y.line_of(root, "gradient_checkpointing"),
                      "checkpointed activations priced on the GPU");
  }
  // activation_offloading (config.py:623-630): true, legacy, disk or hidden_states.
  PLANCK_IMPORT_TRY(offload, set_on(y, root, "activation_offloading"));
  if (offload) {
    b.unpriced_saving("activation_offloading " + *offload, y.line_of(root, "activation_offloading"),
                      "activations priced on the GPU");
  }
  PLANCK_IMPORT_TRY(optimizer, y.string(root, "optimizer", ""));
  if (ds_optimizer) {
    b.note("the DeepSpeed file's optimizer runs (Hugging Face deepspeed_optim_sched)");
  } else if (optimizer) {
    const std::string kind = *optimizer == "muon" ? "muon" : llama_factory::optimizer_of(*optimizer);
    if (!kind.empty()) t["optimizer"] = kind;
    else b.unmodelled("optimizer " + *optimizer, y.line_of(root, "optimizer"), "AdamW's two fp32 states assumed");
  }
  // unfrozen_parameters (config.py; the Spectrum plugin writes it): only the matching weights train.
  const YAML::Node unfrozen = root["unfrozen_parameters"];
  if (unfrozen && unfrozen.IsSequence() && unfrozen.size() > 0) {
    b.unmodelled("unfrozen_parameters (" + std::to_string(unfrozen.size()) + " patterns)",
                 y.line_of(root, "unfrozen_parameters"), "every weight priced as trained");
  }
  for (const char* key : {"torch_compile", "unsloth_lora_mlp", "unsloth_lora_qkv", "unsloth_lora_o",
                          "lora_mlp_kernel", "lora_qkv_kernel", "lora_o_kernel", "fp8_enable_fsdp_float8_all_gather"}) {
    PLANCK_IMPORT_TRY(on, set_on(y, root, key));
    if (on) b.unmodelled(std::string(key) + " " + *on, y.line_of(root, key), "priced without it");
  }
  return core::Status::ok();
}

}  // namespace planck::import::axolotl
