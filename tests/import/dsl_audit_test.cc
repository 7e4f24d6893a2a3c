// DeepSpeed and LLaMA-Factory defects of audit 5 (research audit5/dsl FINDINGS.md D1-D13): what the
// frameworks refuse at start-up is an error at the setting's line, what the Hugging Face trainer
// fills is filled only where the DeepSpeed file says "auto", and what planck cannot price is named.
// Expected values follow hiyouga/LLaMA-Factory@ff6d4d12, deepspeedai/DeepSpeed@edaa722 and
// huggingface/transformers@02348331 (cited per case).

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/import/import_test_util.h"

namespace planck::import::test {
namespace {

bool has_finding(const ImportResult& r, const std::string& rule, const std::string& text) {
  for (const ImportFinding& f : r.findings) {
    if (f.rule == rule && f.message.find(text) != std::string::npos) return true;
  }
  return false;
}

bool has_note(const ImportResult& r, const std::string& text) {
  for (const std::string& n : r.notes) {
    if (n.find(text) != std::string::npos) return true;
  }
  return false;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, "test data lacks " << from);
  return text.replace(at, from.size(), to);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const std::string kBadam = "llama-factory/examples/extras/badam/llama3_full_sft.yaml";
const std::string kGalore = "llama-factory/examples/extras/galore/llama3_full_sft.yaml";
const std::string kPissa = "llama-factory/examples/extras/pissa/llama3_lora_sft.yaml";
const std::string kFullDs3 = "llama-factory/examples/train_full/qwen3_full_sft.yaml";
const std::string kLoraDs3 = "llama-factory/examples/train_lora/qwen3_lora_sft_ds3.yaml";

ImportResult lf_ok(const std::string& rel, const std::string& text, const ImportOptions& o) {
  return import_ok(&import_llama_factory, text, o, data_path(rel));
}
std::string lf_error(const std::string& rel, const std::string& text, const ImportOptions& o) {
  return import_error(&import_llama_factory, text, o, data_path(rel));
}

// D2: LLaMA-Factory's own BAdam example (layer-wise, no DeepSpeed) runs on one GPU; on 8 GPUs
// torchrun makes it distributed and hparams/parser.py:512-516 raises "Layer-wise BAdam only
// supports DeepSpeed ZeRO-3 training."; with ZeRO-3 it runs. badam_mode ratio distributed: :513-514.
TEST_CASE("llama_factory_badam_refusals_follow_get_train_args") {
  const std::string badam = read_data(kBadam);
  lf_ok(kBadam, badam, world(1, 1));
  const std::string e = lf_error(kBadam, badam, world(1, 8));
  CHECK(contains(e, ":9:"));  // use_badam's line
  CHECK(contains(e, "Layer-wise BAdam only supports DeepSpeed ZeRO-3 training."));
  CHECK(contains(e, "parser.py:515-516"));
  lf_ok(kBadam, replaced(badam, "# deepspeed: examples", "deepspeed: examples"), world(1, 8));
  const std::string ratio = lf_error(kBadam, replaced(badam, "badam_mode: layer", "badam_mode: ratio"), world(1, 8));
  CHECK(contains(ratio, "Radio-based BAdam does not yet support distributed training"));
}

// D2: GaLore example (layer-wise, pure_bf16, one GPU): with DeepSpeed parser.py:518-519 raises
// "GaLore and APOLLO are incompatible with DeepSpeed yet." (layer-wise GaLore is refused first on
// any distributed launch, :505-507); LoRA with GaLore: finetuning_args.py:615-616.
TEST_CASE("llama_factory_galore_refusals_follow_get_train_args") {
  const std::string galore = read_data(kGalore);
  CHECK(contains(lf_error(kGalore, galore, world(1, 8)), "Distributed training does not support layer-wise GaLore."));
  const std::string not_layerwise = replaced(galore, "galore_layerwise: true", "galore_layerwise: false");
  lf_ok(kGalore, not_layerwise, world(1, 8));
  const std::string ds = lf_error(
      kGalore, not_layerwise + "deepspeed: examples/deepspeed/ds_z2_config.json\n", world(1, 8));
  CHECK(contains(ds, "GaLore and APOLLO are incompatible with DeepSpeed yet."));
  const std::string lora = lf_error(kGalore, replaced(galore, "finetuning_type: full", "finetuning_type: lora"),
                                    world(1, 1));
  CHECK(contains(lora, "Cannot use LoRA with GaLore, APOLLO or BAdam together."));
}

// D2: ZeRO-3 refusals of get_train_args (parser.py:495-496 PiSSA, :498-503 pure_bf16, :532-533
// Unsloth, :535-536 KTransformers) and fp8 with quantization (:521-527).
TEST_CASE("llama_factory_zero3_and_fp8_refusals") {
  const std::string pissa = read_data(kPissa);
  lf_ok(kPissa, pissa, world(1, 8));
  CHECK(contains(lf_error(kPissa, pissa + "deepspeed: examples/deepspeed/ds_z3_config.json\n", world(1, 8)),
                 "Please use scripts/pissa_init.py to initialize PiSSA in DeepSpeed ZeRO-3."));
  const std::string full = read_data(kFullDs3);
  CHECK(contains(lf_error(kFullDs3, full + "pure_bf16: true\n", world(1, 8)),
                 "`pure_bf16` is incompatible with DeepSpeed ZeRO-3."));
  CHECK(contains(lf_error(kFullDs3, full + "use_unsloth: true\n", world(1, 8)),
                 "Unsloth is incompatible with DeepSpeed ZeRO-3."));
  CHECK(contains(lf_error(kFullDs3, full + "use_kt: true\n", world(1, 8)),
                 "KTransformers is incompatible with DeepSpeed ZeRO-3."));
  const std::string z2 = replaced(full, "ds_z3_config.json", "ds_z2_config.json");
  lf_ok(kFullDs3, z2 + "pure_bf16: true\n", world(1, 8));
  const std::string lora = read_data(kLoraDs3);
  CHECK(contains(lf_error(kLoraDs3, lora + "quantization_bit: 4\nfp8: true\n", world(1, 8)),
                 "FP8 training is not compatible with quantization."));
}

// D3 / D8: enumerated values and LoRA-only options (finetuning_args.py:595 asserts finetuning_type
// in lora/oft/freeze/full; train/tuner.py:150-151 raises on an unknown stage; :631-632 use_dora).
TEST_CASE("llama_factory_invalid_values_are_refused_at_their_line") {
  const std::string full = read_data(kFullDs3);
  const std::string qlora = lf_error(kFullDs3, replaced(full, "finetuning_type: full", "finetuning_type: qlora"),
                                     world(1, 8));
  CHECK(contains(qlora, ":8:"));
  CHECK(contains(qlora, "Invalid fine-tuning method."));
  CHECK(contains(qlora, "quantization_bit 4"));
  const std::string grpo = lf_error(kFullDs3, replaced(full, "stage: sft", "stage: grpo"), world(1, 8));
  CHECK(contains(grpo, ":6:"));
  CHECK(contains(grpo, "Unknown task: grpo."));
  CHECK(contains(lf_error(kFullDs3, full + "use_dora: true\n", world(1, 8)),
                 "`use_dora` is only valid for LoRA training."));
  CHECK(contains(lf_error(kFullDs3, full + "quantization_bit: 4\n", world(1, 8)),
                 "Quantization is only compatible with the LoRA or OFT method."));
}

// D1 / D11: the Hugging Face trainer fills only "auto" (integrations/deepspeed.py fill_match); a
// fixed value that differs from TrainingArguments raises in trainer_config_finalize. The
// DeepSpeedExamples bf16_full config fixes micro 4, lr 1e-4, weight_decay 0.01 and bf16 true; the
// LLaMA-Factory example says per_device_train_batch_size 1 and learning_rate 1.0e-5.
TEST_CASE("llama_factory_deepspeed_fixed_values_that_differ_are_refused") {
  const std::string fixed = std::string(PLANCK_TEST_DATA_DIR) +
                            "/corpus/deepspeed/dse__training__bf16_master_weight__configs__bf16_full.json";
  const std::string full = replaced(read_data(kFullDs3), "examples/deepspeed/ds_z3_config.json", fixed);
  const std::string e = lf_error(kFullDs3, full, world(1, 8));
  CHECK(contains(e, "ds train_micro_batch_size_per_gpu=4"));
  CHECK(contains(e, "vs hf per_device_train_batch_size=1"));
  CHECK(contains(e, "ds optimizer.params.lr=0.0001"));
  CHECK(contains(e, "ds optimizer.params.weight_decay=0.01"));
  CHECK(contains(e, "mismatch TrainingArguments values"));
  CHECK_FALSE(contains(e, "ds bf16.enabled"));  // bf16: true in both
  // The "auto" file is filled, and the notes say from where (no "--set ... from the command line").
  ImportResult r = lf_ok(kFullDs3, read_data(kFullDs3), world(1, 8));
  CHECK(r.plan["training"]["micro_batch"] == 1);
  CHECK(r.plan["training"]["grad_accumulation"] == 2);
  CHECK(has_note(r, "train_micro_batch_size_per_gpu = 1: filled from the YAML's per_device_train_batch_size"));
  CHECK_FALSE(has_note(r, "from the command line"));
}

// D7: with an optimizer section the DeepSpeed engine builds it (transformers deepspeed_optim_sched:
// DummyOptim); the trainer's optim is not used. Without one, create_optimizer reads optim.
TEST_CASE("llama_factory_deepspeed_optimizer_section_is_what_runs") {
  const std::string dir = std::string(PLANCK_TEST_DATA_DIR) + "/import/llama-factory/examples/deepspeed/";
  const std::string yaml = read_data(kFullDs3) + "optim: adamw_torch\n";
  std::string without = replaced(yaml, "examples/deepspeed/ds_z3_config.json", dir + "ds_z0_config.json");
  CHECK(lf_ok(kFullDs3, without, world(1, 8)).plan["training"]["optimizer"] == "adamw");
  // LLaMA-Factory's ds_z0_config.json with an SGD section (runtime/config.py optimizer.type).
  const std::string z0 = read_data("llama-factory/examples/deepspeed/ds_z0_config.json");
  const std::string sgd_path = (std::filesystem::temp_directory_path() / "planck_dsl_audit_sgd.json").string();
  {
    std::ofstream out(sgd_path);
    out << replaced(z0, "\"zero_allow_untested_optimizer\": true,",
                    "\"zero_allow_untested_optimizer\": true, \"optimizer\": {\"type\": \"SGD\"},");
  }
  ImportResult r = lf_ok(kFullDs3, replaced(yaml, "examples/deepspeed/ds_z3_config.json", sgd_path), world(1, 8));
  CHECK(r.plan["training"]["optimizer"] == "sgd");
  CHECK(has_note(r, "the YAML's optim adamw_torch"));
  std::filesystem::remove(sgd_path);
}

// D9: pure_bf16 keeps the trainable weights in bf16 without an fp32 copy (model/adapter.py:336-349);
// torch's AdamW keeps its states in the parameters' dtype.
TEST_CASE("llama_factory_pure_bf16_is_bf16_weights_and_states") {
  ImportResult r = lf_ok(kGalore, read_data(kGalore), world(1, 1));
  CHECK(r.plan["training"]["param_dtype"] == "bf16");
  CHECK(r.plan["training"]["master_dtype"] == "none");
  CHECK(r.plan["training"]["optimizer_state_dtype"] == "bf16");
  CHECK_FALSE(has_finding(r, "setting-unmodelled", "pure_bf16"));
}

// D10: an absolute deepspeed path from a container is looked for by its tail beside the YAML and
// its parents, and the file used is named; none found is an error at the YAML's line.
TEST_CASE("llama_factory_absolute_deepspeed_path_falls_back_to_its_tail") {
  const std::string lora = read_data(kLoraDs3);
  const std::string abs = replaced(lora, "deepspeed: examples/deepspeed/ds_z3_config.json",
                                   "deepspeed: /workspace/examples/deepspeed/ds_z3_config.json");
  ImportResult r = lf_ok(kLoraDs3, abs, world(1, 8));
  CHECK(r.plan["parallelism"]["data_parallel"] == "zero3");
  CHECK(has_finding(r, "setting-unmodelled", "deepspeed /workspace/examples/deepspeed/ds_z3_config.json"));
  const std::string missing = replaced(lora, "deepspeed: examples/deepspeed/ds_z3_config.json",
                                       "deepspeed: /workspace/nowhere/ds_none.json");
  const std::string e = lf_error(kLoraDs3, missing, world(1, 8));
  CHECK(contains(e, "qwen3_lora_sft_ds3.yaml:"));
  CHECK(contains(e, "no such file"));
}

// D4: runtime/config.py:827-828 asserts 'bfloat16 and fp16 modes cannot be simultaneously enabled'.
TEST_CASE("deepspeed_fp16_and_bf16_both_enabled_is_an_error") {
  const std::string both = "{\n\"train_micro_batch_size_per_gpu\": 1,\n\"fp16\": {\"enabled\": true},\n"
                           "\"bf16\": {\"enabled\": true}\n}";
  const std::string e = import_error(&import_deepspeed, both, world(1, 8));
  CHECK(contains(e, "config:4:"));
  CHECK(contains(e, "bfloat16 and fp16 modes cannot be simultaneously enabled"));
}

// D5: runtime/config.py:755-768 raises ElasticityConfigError when elasticity is on and a batch key
// is set (unless ignore_non_elastic_batch_info); otherwise the elastic batch replaces them.
TEST_CASE("deepspeed_elasticity_is_refused_or_named") {
  const std::string elastic = "{\"train_batch_size\": 64,\n\"elasticity\": {\"enabled\": true, "
                              "\"max_train_batch_size\": 2000, \"micro_batch_sizes\": [2, 4, 6]%s}}";
  const std::string refused = replaced(elastic, "%s", "");
  CHECK(contains(import_error(&import_deepspeed, refused, world(1, 8)), "ElasticityConfigError"));
  ImportResult r = import_ok(&import_deepspeed, replaced(elastic, "%s", ", \"ignore_non_elastic_batch_info\": true"),
                             world(1, 8));
  CHECK(has_finding(r, "setting-unmodelled", "elasticity"));
}

// D6: torch_autocast (engine.py:399-405) runs the safe modules in the autocast dtype; in another
// dtype than the engine's it is named, in the same one it changes nothing.
TEST_CASE("deepspeed_torch_autocast_is_named") {
  const std::string cast = "{\"train_micro_batch_size_per_gpu\": 2,\n\"torch_autocast\": {\"enabled\": true, "
                           "\"dtype\": \"bfloat16\"},\n\"zero_optimization\": {\"stage\": 2}}";
  ImportResult r = import_ok(&import_deepspeed, cast, world(1, 8));
  CHECK(has_finding(r, "setting-unmodelled", "torch_autocast (bf16)"));
  const std::string bf16_full = "../corpus/deepspeed/dse__training__bf16_master_weight__configs__bf16_full.json";
  ImportResult same = import_ok(&import_deepspeed, read_data(bf16_full), world(1, 8));
  CHECK_FALSE(has_finding(same, "setting-unmodelled", "torch_autocast"));
}

// D13: DeepSpeed reads tensorboard / wandb / csv_monitor / comet at the top level
// (monitor/config.py:12-14); LLaMA-Factory's ds_z3_fp8_config.json nests them in monitor_config.
TEST_CASE("deepspeed_monitor_config_is_an_unknown_key") {
  ImportResult r = import_ok(&import_deepspeed, read_data("llama-factory/examples/deepspeed/ds_z3_fp8_config.json"),
                             world(1, 8));
  CHECK(has_finding(r, "unknown-key", "monitor_config"));
}

}  // namespace
}  // namespace planck::import::test
