// DeepSpeed configs of audit 6d (InternVL, LLaVA-NeXT, ms-swift): what DeepSpeed builds or
// refuses, with expected values read off deepspeedai/DeepSpeed @edaa722 (cited per case), never
// planck's output.

#include <doctest/doctest.h>

#include <string>

#include "tests/import/import_test_util.h"

namespace planck::import::test {
namespace {

// OpenGVLab/InternVL@2410d1d segmentation/zero_configs/adam_zero1_amp.json: Apex AMP, no ZeRO,
// fp32 weights: DeepSpeed runs it (engine.py:1997-2009 @edaa722, amp without a 16-bit mode), so
// it is read with amp warned. The same file with fp16 or bf16 enabled raises NotImplementedError
// "Cannot enable both amp with (legacy) fp16 or bfloat16 mode" (engine.py:2006-2007): refused.
TEST_CASE("deepspeed_amp_with_a_16_bit_mode_and_no_zero_is_refused") {
  const std::string text = read_data("deepspeed/internvl_seg_adam_zero1_amp.json");
  ImportResult r = import_ok(&import_deepspeed, text, world(1, 8));
  CHECK(r.plan["parallelism"]["data_parallel"] == "ddp");
  CHECK(r.plan["training"]["param_dtype"] == "fp32");
  CHECK(any_contains(r.warnings, "setting-unmodelled: amp"));
  for (const char* mode : {"fp16", "bf16"}) {
    CAPTURE(mode);
    ImportOptions o = world(1, 8);
    o.sets.push_back({std::string(mode) + ".enabled", "true"});
    const std::string why = import_error(&import_deepspeed, text, o);
    CHECK(why.find("Cannot enable both amp") != std::string::npos);
    CHECK(why.find(":11:") != std::string::npos);  // "enabled": true of the amp section
  }
  // Both 16-bit modes, one of them only from --set: DeepSpeed asserts "bfloat16 and fp16 modes
  // cannot be simultaneously enabled" (runtime/config.py:827-828 @edaa722).
  ImportOptions both = world(1, 8);
  both.sets.push_back({"fp16.enabled", "true"});
  both.sets.push_back({"bf16.enabled", "true"});
  CHECK(import_error(&import_deepspeed, text, both).find("cannot be simultaneously enabled") != std::string::npos);
}

// LLaVA-VL/LLaVA-NeXT@df17966 scripts/zero3pp.json: ZeRO++ with zero_hpz_partition_size 16. Every
// rank keeps a secondary copy of tensor_size / 16 elements in the parameter's dtype
// (zero/partition_parameters.py:1884-1898 _partition_param_sec @edaa722), which the plan's zero3
// does not hold: a setting-unmodelled warning at its line (36), not a note alone.
TEST_CASE("deepspeed_hpz_secondary_copy_is_warned_not_noted") {
  ImportResult r = import_ok(&import_deepspeed, read_data("deepspeed/llava_next_zero3pp.json"), world(2, 8));
  CHECK(r.plan["parallelism"]["data_parallel"] == "zero3");
  bool warned = false;
  for (const ImportFinding& f : r.findings) {
    if (f.rule == "setting-unmodelled" && f.message.find("zero_hpz_partition_size 16") != std::string::npos) {
      warned = true;
      CHECK(f.line == 36);
      CHECK(f.message.find("1/16 of the parameters") != std::string::npos);
    }
  }
  CHECK(warned);
}

// modelscope/ms-swift@3602360 examples/yaml/deepspeed/sft.json is ms-swift's own argument file
// (Hugging Face TrainingArguments names: per_device_train_batch_size, learning_rate, ...,
// "deepspeed": "zero2"), which shares gradient_accumulation_steps with DeepSpeed's config
// (deepspeed/runtime/constants.py) and nothing else: it is not a DeepSpeed config, so it must not
// be read as one (it was: every other key "ignored", ZeRO off and fp32 priced, a false
// memory-exceeds). A DeepSpeed config whose only batch key is gradient_accumulation_steps still is.
TEST_CASE("training_arguments_json_with_gradient_accumulation_steps_is_not_deepspeed") {
  CHECK(detect_framework("sft.json", read_data("deepspeed/ms_swift_sft_args.json")) == "plan");
  CHECK(detect_framework("ds.json", "{\"gradient_accumulation_steps\": 4, \"bf16\": {\"enabled\": true},\n"
                                    " \"gradient_clipping\": 1.0, \"typo_key\": 1}") == "deepspeed");
  CHECK(detect_framework("ds.json", read_data("deepspeed/internvl_seg_adam_zero1_amp.json")) == "deepspeed");
}

// mosaicml/llm-foundry@8c8dd48f scripts/eval/yamls/hf_8bit_eval.yaml is llm-foundry's evaluation config:
// its `model_name_or_path:` is nested under `variables:`. LLaMA-Factory's keys are top-level
// (HfArgumentParser.parse_yaml_file reads the top-level mapping, hparams/parser.py), as are Lingua's
// (`distributed:`, lingua/args.py). Taken for LLaMA-Factory, it verified `ok` with six unknown keys.
TEST_CASE("nested_llama_factory_key_is_not_a_llama_factory_config") {
  CHECK(detect_framework("hf_8bit_eval.yaml", read_data("llm-foundry/hf_8bit_eval.yaml")).empty());
  CHECK(detect_framework("lf.yaml", "model_name_or_path: meta-llama/Llama-3.1-8B\nstage: sft\n") == "llama-factory");
  CHECK(detect_framework("x.yaml", "run:\n  distributed:\n    fsdp_type: full_shard\n").empty());
  CHECK(detect_framework("l.yaml", "dump_dir: /tmp/x\ndistributed:\n  fsdp_type: full_shard\n") == "lingua");
}

}  // namespace
}  // namespace planck::import::test
