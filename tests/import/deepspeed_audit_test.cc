// DeepSpeed and LLaMA-Factory configs of the second corpus audit (research corpus2 FINDINGS.md):
// what DeepSpeed accepts is read, what it refuses is an error naming the line, and what planck
// cannot price is a setting-unmodelled warning naming the setting. Expected values follow
// deepspeedai/DeepSpeed @edaa722 and hiyouga/LLaMA-Factory @ff6d4d12 (cited per case).

#include <doctest/doctest.h>

#include <string>

#include "tests/import/import_test_util.h"

namespace planck::import::test {
namespace {

std::string corpus(const std::string& name) { return read_data("../corpus/deepspeed/" + name); }

// runtime/config.py:699 reads a config file with hjson.load: `//`, `#` and `/* */` comments and
// trailing commas (hjson-py decoder.py JSONObject / JSONArray skip a comma before } or ]) are valid.
TEST_CASE("deepspeed_config_with_comments_is_read_as_hjson") {
  const std::string annotated = corpus("dse__claude_tutorials__annotated_configs__zero3_nvme_offload_annotated.json");
  ImportResult r = import_ok(&import_deepspeed, annotated, world(1, 8));
  CHECK(r.plan["parallelism"]["data_parallel"] == "zero3");  // "stage": 3 below a // comment
  CHECK(r.plan["training"]["offload_params"] == "nvme");
  const std::string text =
      "{\n"
      "  # hash comment\n"
      "  \"train_micro_batch_size_per_gpu\": 2, // line comment\n"
      "  /* block\n"
      "     comment */ \"zero_optimization\": {\"stage\": 2,},\n"
      "  \"note\": \"a // and a # inside a string stay\",\n"
      "}\n";
  ImportResult c = import_ok(&import_deepspeed, text, world(1, 4));
  CHECK(c.plan["parallelism"]["data_parallel"] == "zero2");
  CHECK(c.plan["training"]["global_batch"] == 2 * 1 * 4);
  // Positions stay the file's: the stage value is on line 5, the unknown "note" key on line 6.
  REQUIRE(c.findings.size() == 1);
  CHECK(c.findings[0].rule == "unknown-key");
  CHECK(c.findings[0].line == 6);
  // A JSON error after a comment is still placed at its own line and column.
  const std::string bad = "{\n  // ok\n  \"stage\": x,\n  \"a\": 1\n}\n";
  CHECK(import_error(&import_deepspeed, bad, world(1, 1)).find(":3:12:") != std::string::npos);
  CHECK(import_error(&import_deepspeed, "{\n  /* never closed\n}", world(1, 1)).find(":2:3: a /* comment") !=
        std::string::npos);
}

// runtime/config.py:721-722 @edaa722: world_size = world / sequence_parallel_size, and the batch
// assertion (:937) is train_batch = micro x gas x that world. autosp_config.json runs on 2 GPUs
// (DeepSpeedExamples benchmarks/autosp configs/autosp_config.yaml num_processes 2): 1 = 1 x 1 x 1.
TEST_CASE("deepspeed_sequence_parallel_size_leaves_the_data_parallel_world") {
  const std::string text = corpus("dse__benchmarks__autosp__configs__autosp_config.json");
  ImportResult r = import_ok(&import_deepspeed, text, world(1, 2));
  // parallel_state_sp.py:43-44: sequence-parallel groups are range(i * sp, (i + 1) * sp).
  CHECK(dims_of(r) == Dims{"dp", "cp"});
  CHECK(shape_of(r) == Shape{2 / 2, 2});
  CHECK(groups(r, {"cp"}) == std::vector<std::vector<std::int64_t>>{{0, 1}});
  CHECK(r.plan["training"]["global_batch"] == 1);
  CHECK(r.plan["training"]["micro_batch"] == 1);
  CHECK(r.plan["training"]["grad_accumulation"] == 1);
  // engine.py:1857 + constants.py:296: gradients reduced in seq_parallel_communication_data_type, fp32.
  CHECK(r.plan["training"]["reduce_dtype"] == "fp32");
  CHECK(any_contains(r.warnings, "setting-unmodelled: sequence_parallel_size 2"));
  core::Diagnostics d = verify(r);
  CHECK_MESSAGE(!d.has_errors(), error_rules(d));
  // 16 ranks, sp 4, micro 2, gas 2: train_batch = 2 x 2 x 16 / 4 = 16.
  const std::string big = "{\"train_micro_batch_size_per_gpu\": 2, \"gradient_accumulation_steps\": 2, "
                          "\"sequence_parallel_size\": 4, \"zero_optimization\": {\"stage\": 3}}";
  ImportResult b = import_ok(&import_deepspeed, big, world(2, 8));
  CHECK(shape_of(b) == Shape{16 / 4, 4});
  CHECK(b.plan["training"]["global_batch"] == 2 * 2 * (16 / 4));
  // parallel_state_sp.py:29-31 raises when sp does not divide the world.
  CHECK(import_error(&import_deepspeed, text, world(1, 3)).find("not divisible by sequence_parallel_size 2") !=
        std::string::npos);
}

// engine.py:2152 @edaa722 asserts "1bit-Adam is not compatible with ZeRO"; :1986-1990 asserts an
// optimizer outside ZERO_SUPPORTED_OPTIMIZERS (zero/utils.py:45-48) without zero_allow_untested_optimizer.
TEST_CASE("deepspeed_optimizer_zero_refuses_is_an_error_at_its_line") {
  const std::string onebit = corpus("dse__claude_tutorials__model_configs__llama__llama_70b_multi_node.json");
  const std::string e = import_error(&import_deepspeed, onebit, world(4, 8));
  CHECK(e.find("config:25:") != std::string::npos);
  CHECK(e.find("not compatible with ZeRO") != std::string::npos);
  auto cfg = [](const std::string& extra) {
    return "{\"train_micro_batch_size_per_gpu\": 1, \"zero_optimization\": {\"stage\": 2},\n"
           "\"optimizer\": {\"type\": \"Lamb\"}" + extra + "}";
  };
  const std::string lamb = import_error(&import_deepspeed, cfg(""), world(1, 8));
  CHECK(lamb.find("config:2:") != std::string::npos);
  CHECK(lamb.find("\"zero_allow_untested_optimizer\": true") != std::string::npos);
  ImportResult allowed = import_ok(&import_deepspeed, cfg(", \"zero_allow_untested_optimizer\": true"), world(1, 8));
  CHECK(allowed.plan["training"]["optimizer"] == "lamb");
  // ZeRO stage 0 runs any of them, and AdamW / Adagrad / Lion are ZeRO's own.
  for (const char* ok : {"AdamW", "Adagrad", "Lion"}) {
    const std::string t = "{\"train_micro_batch_size_per_gpu\": 1, \"zero_optimization\": {\"stage\": 3}, "
                          "\"optimizer\": {\"type\": \"" + std::string(ok) + "\"}}";
    CAPTURE(ok);
    import_ok(&import_deepspeed, t, world(1, 8));
  }
}

bool has_finding(const ImportResult& r, const std::string& rule, const std::string& text) {
  for (const ImportFinding& f : r.findings) {
    if (f.rule == rule && f.message.find(text) != std::string::npos) return true;
  }
  return false;
}

// Settings DeepSpeed reads (runtime/config.py @edaa722) that change memory or time and planck does
// not price: each is setting-unmodelled, named.
TEST_CASE("deepspeed_unpriced_settings_are_named") {
  const std::string deepcompile = corpus("ds__tests__torch_compile__ds_config_z3_deepcompile_no_persist.json");
  ImportResult dc = import_ok(&import_deepspeed, deepcompile, world(1, 8));
  CHECK(has_finding(dc, "setting-unmodelled", "compile.deepcompile"));
  const std::string w8a8 = corpus("dse__compression__gpt2__config__ds_config_W8A8_Qgroup64_fp16.json");
  ImportResult w8 = import_ok(&import_deepspeed, w8a8, world(1, 2));
  CHECK(has_finding(w8, "setting-unmodelled", "compression_training"));
  ImportOptions moq = world(1, 8);
  moq.sets = {{"train_micro_batch_size_per_gpu", "4"}};
  CHECK(has_finding(import_ok(&import_deepspeed, corpus("dse__training__MoQ__test.json"), moq), "setting-unmodelled",
                    "quantize_training"));
  // Apex AMP (OpenGVLab/InternVL segmentation/zero_configs/adam_zero1_amp.json writes this section):
  // fp16 compute the plan cannot state; with ZeRO DeepSpeed asserts (engine.py:1983-1985@edaa722).
  const std::string amp = "{\"train_batch_size\": 8,\n \"amp\": {\"enabled\": true, \"opt_level\": \"O1\"}";
  CHECK(has_finding(import_ok(&import_deepspeed, amp + "}", world(1, 8)), "setting-unmodelled", "amp is not"));
  const std::string amp_zero =
      import_error(&import_deepspeed, amp + ",\n \"zero_optimization\": {\"stage\": 1}}", world(1, 8));
  CHECK(amp_zero.find("config:2:") != std::string::npos);
  CHECK(amp_zero.find("Amp and ZeRO are not currently compatible") != std::string::npos);
  // bf16 + ZeRO-1 + grad_accum_dtype fp32 selects BF16_Optimizer (engine.py:1994-1996@edaa722),
  // whose gradient buffer is a full fp32 copy of the parameters (bf16_optimizer.py:176): the plan
  // states it as training.grad_accum_dtype, reduced in bf16 (communication_data_type's default).
  const std::string uc = corpus("mds__examples_deepspeed__universal_checkpointing__ds_config.json");
  ImportResult bf16_opt = import_ok(&import_deepspeed, uc, world(1, 1));
  CHECK(bf16_opt.plan["training"]["grad_accum_dtype"] == "fp32");
  CHECK(bf16_opt.plan["training"]["reduce_dtype"] == "bf16");
  CHECK(!has_finding(bf16_opt, "setting-unmodelled", "grad_accum_dtype"));
  ImportOptions bf = world(1, 1);
  bf.sets = {{"data_types.grad_accum_dtype", "bf16"}};
  CHECK(!import_ok(&import_deepspeed, uc, bf).plan["training"].contains("grad_accum_dtype"));
  // Other ZeRO stages never read it (engine.py uses it only to pick BF16_Optimizer); without ZeRO a
  // dtype other than the model's raises "unsupported mix of model_dtype and grad_accum_dtype".
  const std::string acc = "{\"train_batch_size\": 8, \"bf16\": {\"enabled\": true},\n"
                          " \"data_types\": {\"grad_accum_dtype\": \"fp32\"}, \"zero_optimization\": {\"stage\": ";
  ImportResult z2 = import_ok(&import_deepspeed, acc + "2}}", world(1, 8));
  CHECK(!z2.plan["training"].contains("grad_accum_dtype"));
  CHECK(std::any_of(z2.notes.begin(), z2.notes.end(), [](const std::string& n) {
    return n.find("grad_accum_dtype fp32 is ignored by DeepSpeed at ZeRO stage 2") != std::string::npos;
  }));
  const std::string z0 = import_error(&import_deepspeed, acc + "0}}", world(1, 8));
  CHECK(z0.find("config:2:") != std::string::npos);
  CHECK(z0.find("unsupported mix of model_dtype and grad_accum_dtype") != std::string::npos);
  // DtypeEnum's spellings (runtime/config.py:101-106): "float32" is fp32, "fp8" is refused.
  ImportOptions spelled = world(1, 1);
  spelled.sets = {{"data_types.grad_accum_dtype", "float32"}};
  CHECK(import_ok(&import_deepspeed, uc, spelled).plan["training"]["grad_accum_dtype"] == "fp32");
  spelled.sets = {{"data_types.grad_accum_dtype", "fp8"}};
  CHECK(import_error(&import_deepspeed, uc, spelled).find("DeepSpeed accepts fp32, fp16 or bf16") != std::string::npos);
}

std::string lmf(const std::string& name) { return read_data("llama-factory/corpus2/" + name); }

// LLaMA-Factory @ff6d4d12: use_kt (hparams/model_args.py:469) runs the routed experts on the CPU.
TEST_CASE("llama_factory_ktransformers_is_named") {
  ImportResult r = import_ok(&import_llama_factory, lmf("lmf_kt_deepseek_v3_lora_sft.yaml"), world(1, 8),
                             data_path("llama-factory/corpus2/lmf_kt_deepseek_v3_lora_sft.yaml"));
  CHECK(has_finding(r, "setting-unmodelled", "use_kt true"));
}

// LLaMA-Factory's own mixture-of-depths example: mixture_of_depths is Literal["convert", "load"]
// (hparams/model_args.py:125@ff6d4d12), once refused here as "must be true or false". A key no
// argument class defines is refused by HfArgumentParser unless ALLOW_EXTRA_ARGS (parser.py:149-162).
TEST_CASE("llama_factory_mixture_of_depths_is_a_mode_and_unknown_keys_are_refused_by_it") {
  const std::string rel = "llama-factory/examples/extras/mod/llama3_full_sft.yaml";
  ImportResult r = import_ok(&import_llama_factory, read_data(rel), world(1, 8), data_path(rel));
  CHECK(has_finding(r, "setting-unmodelled", "mixture_of_depths convert"));
  ImportResult typo = import_ok(&import_llama_factory, read_data(rel) + "mixture_of_depth: load\n", world(1, 8),
                                data_path(rel));
  CHECK(has_finding(typo, "unknown-key", "LLaMA-Factory's HfArgumentParser refuses a key"));
  CHECK(has_finding(typo, "unknown-key", "did you mean 'mixture_of_depths'?"));
  // Keys of older releases stay known (keys.h merges 12 commits, 2023-09 to 2026-08):
  // train_mm_proj_only (finetuning_args.py@585c475f, trains the projector alone: warned, every
  // weight priced), visual_inputs (model_args.py@b1b7d735), ray_run_name (training_args.py@585c475f).
  ImportResult old = import_ok(&import_llama_factory,
                               read_data(rel) + "train_mm_proj_only: true\nvisual_inputs: true\nray_run_name: x\n",
                               world(1, 8), data_path(rel));
  CHECK_FALSE(has_finding(old, "unknown-key", ""));
  CHECK(has_finding(old, "setting-unmodelled", "train_mm_proj_only true"));
}

// hparams/parser.py:73-80, 397-398: with USE_MCA=1 the keys are mcore_adapter's and the run is
// Megatron-Core (PP 4 x EP 2 here); a v1 YAML (examples/v1) is another format. Both are refused.
TEST_CASE("llama_factory_megatron_and_v1_configs_are_refused") {
  const std::string mca = import_error(&import_llama_factory, lmf("lmf_megatron_qwen3_moe_full.yaml"), world(1, 8));
  CHECK(mca.find("config:24:") != std::string::npos);  // tensor_model_parallel_size, the first of them
  CHECK(mca.find("pipeline_model_parallel_size") != std::string::npos);
  CHECK(mca.find("Megatron path") != std::string::npos);
  const std::string v1 = import_error(&import_llama_factory, lmf("lmf_v1_train_full_deepspeed.yaml"), world(1, 8));
  CHECK(v1.find("LLaMA-Factory v1") != std::string::npos);
  CHECK(v1.find("planck import deepspeed") != std::string::npos);
}

// runtime/config.py _batch_assertion needs train_batch_size or train_micro_batch_size_per_gpu; the
// HF Trainer fills them (integrations/deepspeed.py), and --micro-batch says what it fills.
TEST_CASE("deepspeed_config_without_batch_takes_the_command_line_batch") {
  const std::string moq = corpus("dse__training__MoQ__test.json");
  const std::string e = import_error(&import_deepspeed, moq, world(1, 8));
  CHECK(e.find("--micro-batch") != std::string::npos);
  CHECK(e.find("--set train_micro_batch_size_per_gpu=N") != std::string::npos);
  ImportOptions o = world(1, 8);
  o.micro_batch = 4;
  ImportResult r = import_ok(&import_deepspeed, moq, o);
  CHECK(r.plan["training"]["micro_batch"] == 4);
  CHECK(r.plan["training"]["global_batch"] == 4 * 1 * 8);  // gas 1, dp 8 (config.py derives the product)
  o.micro_batch.reset();
  o.global_batch = 64;  // micro = 64 / 8, gas 1
  CHECK(import_ok(&import_deepspeed, moq, o).plan["training"]["micro_batch"] == 64 / 8);
  // Its keys (steps_per_print, gradient_clipping, fp16, quantize_training) are DeepSpeed's
  // (runtime/constants.py), so it is detected as DeepSpeed, not read as a planck plan.
  CHECK(detect_framework("test.json", moq) == "deepspeed");
  CHECK(detect_framework("c.json", "// hjson\n{\"fp16\": {\"enabled\": true}}") == "deepspeed");
  CHECK(detect_framework("plan.json", "{\"mesh\": {\"dims\": [\"dp\"], \"shape\": [8]}}") == "plan");
}

}  // namespace
}  // namespace planck::import::test
