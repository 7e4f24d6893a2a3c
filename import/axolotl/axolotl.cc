// axolotl training YAML (`axolotl train X.yaml`) -> plan.
//
// Semantics, axolotl-ai-cloud/axolotl@067b021c8: the YAML is AxolotlInputConfig
// (src/axolotl/utils/schemas/config.py and the classes it derives from: model.py, peft.py,
// training.py, ...), checked by its validators (utils/schemas/validation.py) and normalised by
// utils/config/__init__.py normalize_config. The run is the Hugging Face Trainer's: with `deepspeed:
// FILE` that DeepSpeed config, its "auto" values filled from the YAML (integrations/deepspeed.py);
// with fsdp_config, FSDP through TrainingArguments; with neither, DDP. ND parallelism (tp, cp, ep,
// dp_shard, dp_replicate) is accelerate's ParallelismConfig (layout.cc). A YAML states no world:
// --nodes / --gpus-per-node give it, as for LLaMA-Factory.

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "import/axolotl/axolotl.h"
#include "import/axolotl/keys.h"
#include "import/llama_factory/startup.h"

namespace planck::import {

namespace {

using llama_factory::Run;

// AxolotlInputConfig's fields (its bases' included), the pydantic aliases RemappedParameters
// takes (schemas/deprecated.py:149-170), and the fields the integrations' plugins add to the schema
// when `plugins:` lists them (the input-args class of each integrations/*/args.py; any plugin's
// counts, whether or not this YAML lists it).
std::vector<std::string> axolotl_keys() {
  std::vector<std::string> out = {"model_config", "model_kwargs", "model_type", "model_revision"};
  for (const char* cls : {"AxolotlInputConfig", "CutCrossEntropyArgs", "DenseMixerArgs", "DiffusionArgs",
                          "ExpertParallelArgs", "GrokfastArgs", "HatcheryArgs", "KDArgs", "KernelsArgs", "LigerArgs",
                          "LLMCompressorArgs", "LMEvalArgs", "MoraArgs", "NemoGymArgs", "SpectrumArgs",
                          "SwanLabConfig"}) {
    for (const auto& [field, kind] : config_fields(axolotl_classes(), cls)) out.push_back(field);
  }
  return out;
}

// The batch as normalize_config leaves it (utils/config/__init__.py:199-207): micro_batch_size and
// gradient_accumulation_steps default to 1 (schemas/training.py:71-82), and two of the three
// batch keys must be written (validation.py:218-226), not both GA and batch_size (:272-279).
core::Result<Run> read_axolotl_batch(YamlReader& y, const YAML::Node& root, PlanBuilder& b) {
  PLANCK_IMPORT_TRY(micro, y.integer(root, "micro_batch_size", ""));
  PLANCK_IMPORT_TRY(acc, y.integer(root, "gradient_accumulation_steps", ""));
  PLANCK_IMPORT_TRY(batch, y.integer(root, "batch_size", ""));
  const int set = int(micro.value_or(0) != 0) + int(acc.value_or(0) != 0) + int(batch.value_or(0) != 0);
  if (set < 2) {
    return b.error(micro ? y.line_of(root, "micro_batch_size") : 0,
                   "axolotl raises \"At least two of micro_batch_size, gradient_accumulation_steps, batch_size must "
                   "be set\" (utils/schemas/validation.py:218-226); add gradient_accumulation_steps");
  }
  if (acc.value_or(0) != 0 && batch.value_or(0) != 0) {
    return b.error(y.line_of(root, "batch_size"),
                   "axolotl raises \"please set only one of gradient_accumulation_steps or batch_size\" "
                   "(utils/schemas/validation.py:272-279); drop batch_size");
  }
  for (auto [key, v] : {std::pair<const char*, std::optional<std::int64_t>>{"micro_batch_size", micro},
                        {"gradient_accumulation_steps", acc}}) {
    if (v && *v < 1) return b.error(y.line_of(root, key), std::string(key) + " " + str(*v) + " is below 1");
  }
  Run run;
  run.micro_key = "micro_batch_size";
  run.micro = micro.value_or(1);
  run.accumulation = acc.value_or(1);
  if (batch && !acc) {
    // The schema's default gradient_accumulation_steps 1 is already set when normalize_config reads
    // `gradient_accumulation_steps or batch_size // micro_batch_size`, so batch_size sets nothing.
    b.finding("import-warning", y.line_of(root, "batch_size"),
              "batch_size " + str(*batch) + " does not set the accumulation: HyperparametersConfig's "
              "gradient_accumulation_steps default 1 (schemas/training.py:71-76) is what normalize_config "
              "(utils/config/__init__.py:202-204) keeps; priced with 1 (write gradient_accumulation_steps)");
  }
  // Precision (config.py:559-600; utils/trainer.py:683-688 prepare_optim_env; resolve_dtype,
  // utils/config/__init__.py:191-196): bf16 true or "auto" (bf16 where the GPU has it), else fp16 for
  // fp16 or load_in_8bit.
  PLANCK_IMPORT_TRY(bf16, y.string(root, "bf16", ""));
  PLANCK_IMPORT_TRY(fp16, y.boolean(root, "fp16", "", false));
  PLANCK_IMPORT_TRY(in8, y.boolean(root, "load_in_8bit", "", false));
  run.bf16 = bf16 && (*bf16 == "auto" || *bf16 == "true" || *bf16 == "True");
  if (bf16 && *bf16 == "auto") b.note("bf16 auto: bf16, as on any GPU with bf16 (is_torch_bf16_gpu_available)");
  run.fp16 = !run.bf16 && (fp16 || in8);
  return run;
}

// Refusals of axolotl's validators that concern the layout.
core::Status check_refusals(YamlReader& y, const YAML::Node& root, PlanBuilder& b, const axolotl::Sizes& s,
                            const Run& run) {
  if (root["deepspeed"] && root["fsdp"] && !root["fsdp"].IsNull()) {
    return b.error(y.line_of(root, "fsdp"), "deepspeed and fsdp: axolotl raises \"deepspeed and fsdp cannot be used "
                                            "together.\" (utils/schemas/validation.py:1226-1228); keep one");
  }
  if (s.cp > 1) {
    // validation.py:1652-1662; the legacy flash_attention: true is flash_attention_2.
    PLANCK_IMPORT_TRY(attn, y.string(root, "attn_implementation", ""));
    PLANCK_IMPORT_TRY(legacy, y.boolean(root, "flash_attention", "", false));
    const std::vector<std::string> flash = {"flash_attention_2", "flash_attention_3", "kernels-community/flash-attn2",
                                            "kernels-community/flash-attn3"};
    const bool dsa = root["use_glm_dsa_kernels"] && root["use_glm_dsa_kernels"].IsScalar() &&
                     root["use_glm_dsa_kernels"].Scalar() == "true";
    if (!dsa && !legacy && (!attn || std::find(flash.begin(), flash.end(), *attn) == flash.end())) {
      return b.error(s.line, "context_parallel_size " + str(s.cp) + ": axolotl raises \"context_parallel_size > 1 "
                             "requires flash attention\" (utils/schemas/validation.py:1652-1657); set "
                             "attn_implementation: flash_attention_2");
    }
    PLANCK_IMPORT_TRY(packing, y.boolean(root, "sample_packing", "", false));
    if (!dsa && packing && run.micro > 1) {
      return b.error(y.line_of(root, "micro_batch_size"),
                     "micro_batch_size " + str(run.micro) + " with sample_packing and context parallelism: axolotl "
                     "raises \"micro_batch_size must be set to 1 when sample_packing is enabled\" "
                     "(utils/schemas/validation.py:1659-1663); set micro_batch_size: 1");
    }
  }
  PLANCK_IMPORT_TRY(optimizer, y.string(root, "optimizer", ""));
  if (s.tp > 1 && optimizer && (*optimizer == "paged_adamw_8bit" || *optimizer == "adamw_8bit" ||
                                *optimizer == "adamw_bnb_8bit")) {
    return b.error(y.line_of(root, "optimizer"), "optimizer " + *optimizer + " with tensor_parallel_size " +
                                                     str(s.tp) + ": axolotl raises (utils/schemas/validation.py:"
                                                     "1777-1782); use adamw_torch_fused");
  }
  return core::Status::ok();
}

}  // namespace

core::Result<ImportResult> import_axolotl(std::string_view text, const std::string& path,
                                          const ImportOptions& options) {
  PlanBuilder b("axolotl", path);
  PLANCK_IMPORT_TRY(root, parse_yaml(std::string(text), b));
  if (!root.IsMap()) return b.error(0, "an axolotl config is a YAML mapping (base_model, datasets, ...)");
  YamlReader y(root, b);
  const std::vector<std::string> known = axolotl_keys();
  for (const auto& kv : root) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
    if (std::find(known.begin(), known.end(), key) == known.end())
      b.unknown_key(key, YamlReader::line(kv.first), known);
  }
  PLANCK_IMPORT_TRY(run, read_axolotl_batch(y, root, b));
  PLANCK_IMPORT_TRY(sizes, axolotl::read_sizes(y, root, b));
  if (auto st = check_refusals(y, root, b, sizes, run); !st) return st;
  llama_factory::DsFile ds;
  ImportResult r;
  if (root["deepspeed"] && !root["deepspeed"].IsNull()) {
    if (!root["deepspeed"].IsScalar()) {
      return b.error(y.line_of(root, "deepspeed"), "deepspeed: an inline DeepSpeed config, which planck does not read; "
                                                   "write it to a JSON file and name that file");
    }
    PLANCK_IMPORT_TRY(found, llama_factory::load_deepspeed(y, root, b, path, "deepspeed",
                                                           "axolotl opens it from where `axolotl train` runs, the "
                                                           "repository root for deepspeed_configs/..."));
    ds = std::move(found);
    PLANCK_IMPORT_TRY(imported, llama_factory::import_trainer_deepspeed(y, root, b, ds, run, options));
    r = std::move(imported);
    if (sizes.any()) {
      b.unmodelled("parallel sizes with deepspeed", sizes.line,
                   "priced as the DeepSpeed file's data parallelism over the world (tensor_parallel_size becomes "
                   "DeepSpeed AutoTP's autotp_size, utils/schemas/validation.py:1156-1170; context parallelism "
                   "runs as Ulysses / ring attention)");
    }
  } else {
    PLANCK_IMPORT_TRY(world, b.resolve_world(options, {}));
    b.set_cluster(world);
    if (auto st = axolotl::read_layout(y, root, b, world, sizes); !st) return st;
    const nlohmann::ordered_json& built = b.plan();
    const std::string dp_kind = built.contains("parallelism") && built["parallelism"].contains("data_parallel")
                                    ? built["parallelism"]["data_parallel"].get<std::string>()
                                    : "none";
    PLANCK_IMPORT_TRY(adapter_v, y.string(root, "adapter", ""));
    nlohmann::ordered_json& t = b.plan()["training"];
    t["micro_batch"] = run.micro;
    t["grad_accumulation"] = run.accumulation;
    b.locate("/training/micro_batch", y.line_of(root, "micro_batch_size"));
    b.locate("/training/grad_accumulation", y.line_of(root, "gradient_accumulation_steps"));
    // normalize_config (utils/config/__init__.py:221-230): the data ranks are the world over cp x tp.
    const std::int64_t data = std::max<std::int64_t>(1, world.size / (sizes.cp * sizes.tp));
    t["global_batch"] = run.micro * run.accumulation * data;
    t["grad_sync"] = "last_microbatch";
    t["param_dtype"] = run.fp16 ? "fp16" : (run.bf16 ? "bf16" : "fp32");
    if (run.bf16 && !run.fp16 && !adapter_v && (dp_kind == "ddp" || dp_kind == "none")) {
      // bf16 loads the model in bfloat16 (utils/config/__init__.py:191-192, loaders/model.py:611-612)
      // and DDP trains the weights as loaded (accelerate upcasts them to fp32 only under FSDP): no
      // fp32 master copy, gradients reduced in bf16, torch's optimizers' states in the weights' dtype.
      llama_factory::set_bf16_as_loaded(t, b, y.line_of(root, "bf16"),
                                        "bf16 full fine-tuning without FSDP or DeepSpeed (the model loaded in "
                                        "bfloat16, utils/config/__init__.py:191-192)");
    }
    if (!t.contains("stack")) t["stack"] = "fsdp2";  // PyTorch's eager runtime; fsdp1 under FSDP1
    r = b.finish();
    b = PlanBuilder("axolotl", path);
  }
  nlohmann::ordered_json& t = r.plan["training"];
  // sequence_len (config.py:665-670, default 512) is the row length: with sample_packing rows are
  // packed to it, without they are at most it (priced at it, as LLaMA-Factory's cutoff_len).
  PLANCK_IMPORT_TRY(seq, y.integer(root, "sequence_len", ""));
  t["seq_len"] = seq.value_or(512);
  if (!seq) b.note("seq_len 512: axolotl's sequence_len default (utils/schemas/config.py:665)");
  if (seq) r.positions["/training/seq_len"] = y.line_of(root, "sequence_len");
  PLANCK_IMPORT_TRY(fp8, y.boolean(root, "fp8", "", false));
  if (fp8) t["fp8"] = "tensorwise";  // torchao Float8 training, as accelerate's fp8 recipe
  if (auto st = axolotl::read_methods(y, root, b, t, ds.at("/optimizer") != nullptr); !st) return st;
  PLANCK_IMPORT_TRY(model, y.string(root, "base_model", ""));
  set_hf_model(r, b, model, "base_model", y.line_of(root, "base_model"));
  r.plan["name"] = "axolotl-" + std::filesystem::path(path).stem().string();
  take_said(r, b.finish(), path);
  return r;
}

bool is_axolotl_config(std::string_view text) {
  // base_model (schemas/model.py:17, required) at the top level, with a key only axolotl's schema
  // has beside it. LLaMA-Factory names the model model_name_or_path; NeMo, Lingua, accelerate and
  // NeoX are detected before this.
  return has_top_level_key(text, {"base_model:"}) &&
         has_top_level_key(text, {"sequence_len:", "micro_batch_size:", "datasets:", "adapter:", "sample_packing:",
                                  "lora_target_linear:"});
}

}  // namespace planck::import
