// GPT-NeoX configs (EleutherAI/gpt-neox @ea7aefd configs/): recognised by their NeoXArgs keys and
// read as NeoX reads them, never as DeepSpeed JSON. NeoX's own reading: a YAML file
// (yaml.load, megatron/neox_arguments/arguments.py:242) whose keys may be spelt with dashes
// (arguments.py:251-253 turns '-' into '_'); pipe_parallel_size and model_parallel_size are
// NeoXArgs fields (megatron/neox_arguments/neox_args.py:60, :65).

#include <doctest/doctest.h>

#include <string>

#include "tests/import/import_test_util.h"

namespace planck::import::test {
namespace {

constexpr const char* kNeoxFiles[] = {"neox/pythia_1B.yml",  "neox/pythia_12B.yml", "neox/pythia_14M.yml",
                                     "neox/llemma_7B.yml",  "neox/llemma_34B.yml", "neox/rwkv_170M.yml"};

TEST_CASE("neox_configs_are_detected_as_neox_not_deepspeed") {
  for (const char* rel : kNeoxFiles) {
    CAPTURE(rel);
    CHECK(detect_framework(rel, read_data(rel)) == "neox");
  }
  // Block-style YAML, underscores or dashes.
  CHECK(detect_framework("a.yml", "model_parallel_size: 2\nnum_layers: 4\n") == "neox");
  CHECK(detect_framework("a.yml", "pipe-parallel-size: 1\n") == "neox");
  // The three sizes beside a NeoX training key; without one (a Hugging Face config.json) it is not NeoX.
  CHECK(detect_framework("a.yml", "num_layers: 2\nhidden_size: 64\nnum_attention_heads: 4\nseq_length: 128\n") ==
        "neox");
  CHECK(detect_framework("c.json", "{\"num_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4}") !=
        "neox");
  // The sizes nested under a section (NeMo's model:) are not NeoX's top level.
  CHECK(detect_framework("n.yaml", "model:\n  model_parallel_size: 2\n  num_layers: 2\n  hidden_size: 64\n"
                                   "  num_attention_heads: 4\n  seq_length: 128\n") != "neox");
  // DeepSpeed JSONs stay DeepSpeed's.
  CHECK(detect_framework("ds.json", "{\"train_micro_batch_size_per_gpu\": 4, \"zero_optimization\": {\"stage\": 1}}") ==
        "deepspeed");
  CHECK(detect_framework("ds.json", read_data("deepspeed/mics_shard8_from_docs.json")) == "deepspeed");
}

TEST_CASE("neox_configs_given_to_the_deepspeed_importer_are_refused_not_misread") {
  // Read as DeepSpeed's JSON, pythia/1B.yml gave an unknown-key for each NeoX key and a tp 1, pp 1
  // layout although NeoX builds model_parallel_size x pipe_parallel_size; rwkv/170M.yml (`True`,
  // YAML) was "not valid JSON".
  for (const char* rel : {"neox/pythia_1B.yml", "neox/llemma_7B.yml", "neox/rwkv_170M.yml"}) {
    CAPTURE(rel);
    ImportResult r = import_ok(&import_deepspeed, read_data(rel), world(2, 8));
    REQUIRE(r.unfollowed.size() == 1);
    CHECK(r.unfollowed[0].why.find("GPT-NeoX config") != std::string::npos);
    CHECK(r.unfollowed[0].why.find("--framework neox") != std::string::npos);
    CHECK(findings(r, "unknown-key") == 0);
  }
}

// The configs as NeoX reads them (EleutherAI/gpt-neox @ea7aefd). On 2 nodes x 8 GPUs: dp = 16 /
// (max(pipe_parallel_size, 1) x model_parallel_size) (arguments.py:919-926); the mesh is pipe,
// data, model from outermost (initialize.py:166-170).

TEST_CASE("neox_pythia_1b_is_ddp_over_16_fp16_full_recompute") {
  ImportResult r = import_data_ok("neox", "neox/pythia_1B.yml", world(2, 8));
  CHECK(r.unfollowed.empty());
  CHECK(dims_of(r) == Dims{"pp", "dp", "tp"});
  CHECK(shape_of(r) == Shape{1, 16, 1});  // pipe 1, model 1
  CHECK(r.plan["parallelism"]["data_parallel"] == "ddp");  // zero_optimization.stage 0
  // micro 4 x gradient_accumulation_steps 4 x dp 16 (arguments.py:844-846).
  CHECK(r.plan["training"]["micro_batch"] == 4);
  CHECK(r.plan["training"]["grad_accumulation"] == 4);
  CHECK(r.plan["training"]["global_batch"] == 4 * 4 * 16);
  CHECK(r.plan["training"]["seq_len"] == 2048);
  // fp16.enabled true (its "type": "bfloat16" is not read, arguments.py:967): fp16; fp32_allreduce true.
  CHECK(r.plan["training"]["param_dtype"] == "fp16");
  CHECK(r.plan["training"]["reduce_dtype"] == "fp32");
  CHECK(r.plan["training"]["activation_checkpointing"] == "full");
  // No attention_config: "global" on every layer, NeoX's own attention (scores materialised).
  CHECK(r.plan["training"]["attention"] == "standard");
  CHECK(findings(r, "unknown-key") == 0);
  // The vocabulary is the tokenizer's: no preset of this shape, so the model is left out.
  CHECK(!r.plan.contains("model"));
  CHECK(any_contains(r.warnings, "model left out"));
}

TEST_CASE("neox_pythia_1b_model_with_its_padded_vocab") {
  // padded_vocab_size 50304: EleutherAI/pythia-1b's config.json vocab_size.
  const std::string text = replace(read_data("neox/pythia_1B.yml"), "\"num_layers\": 16,",
                                   "\"num_layers\": 16,\n  \"padded_vocab_size\": 50304,");
  ImportResult r = import_ok(&import_neox, text, world(2, 8));
  REQUIRE(r.plan["model"].is_object());
  CHECK(r.plan["model"]["layers"] == 16);
  CHECK(r.plan["model"]["hidden"] == 2048);
  CHECK(r.plan["model"]["heads"] == 8);
  CHECK(r.plan["model"]["vocab"] == 50304);
  // gelu, not gated: 4h = 8192 rounded to 2 x mlp_multiple_of 1 (transformer.py:122, :137-140).
  CHECK(r.plan["model"]["ffn_hidden"] == 8192);
  core::Diagnostics d = verify(r);
  CHECK_MESSAGE(!d.has_errors(), error_rules(d));
}

TEST_CASE("neox_pythia_12b_is_pipe_1_model_4_zero1") {
  ImportResult r = import_data_ok("neox", "neox/pythia_12B.yml", world(2, 8));
  CHECK(shape_of(r) == Shape{1, 4, 4});  // 16 / (1 x 4)
  CHECK(r.plan["parallelism"]["data_parallel"] == "zero1");
  CHECK(r.plan["training"]["micro_batch"] == 8);
  CHECK(r.plan["training"]["grad_accumulation"] == 2);
  CHECK(r.plan["training"]["global_batch"] == 8 * 2 * 4);
  CHECK(r.plan["training"]["param_dtype"] == "fp16");
  CHECK(r.plan["training"]["reduce_dtype"] == "fp16");  // no fp32_allreduce
  CHECK(r.plan["training"]["attention"] == "flash");    // attention_config [[["flash"], 36]]
  // partition_activations with model_parallel_size 4: DeepSpeed splits the checkpoints, not priced.
  CHECK(findings(r, "setting-unmodelled", "partition_activations") == 1);
  CHECK(findings(r, "unknown-key") == 0);
}

TEST_CASE("neox_llemma_7b_and_34b_model_parallel_without_pipeline") {
  ImportResult r = import_data_ok("neox", "neox/llemma_7B.yml", world(2, 8));
  CHECK(shape_of(r) == Shape{1, 8, 2});  // pipe_parallel_size 0 -> 1; model 2
  CHECK(r.plan["parallelism"]["data_parallel"] == "zero1");
  CHECK(r.plan["training"]["global_batch"] == 4 * 2 * 8);
  CHECK(r.plan["training"]["param_dtype"] == "bf16");  // precision "bfloat16", bf16.enabled
  CHECK(r.plan["training"]["reduce_dtype"] == "fp32");  // fp32_allreduce
  CHECK(r.plan["training"]["grad_accum_dtype"] == "fp32");  // data_types.grad_accum_dtype, ZeRO 1, bf16
  CHECK(r.plan["training"]["seq_len"] == 4096);
  // decay_lr_to and warmup_iters (llemma's own branch) are fields of no NeoXArgs class at ea7aefd:
  // NeoXArgs(**config) raises on them (arguments.py:285).
  CHECK(findings(r, "unknown-key") == 2);
  CHECK(findings(r, "unknown-key", "decay_lr_to") == 1);
  CHECK(findings(r, "unknown-key", "warmup_iters") == 1);
  ImportResult big = import_data_ok("neox", "neox/llemma_34B.yml", world(2, 8));
  CHECK(shape_of(big) == Shape{1, 2, 8});
  CHECK(big.plan["training"]["micro_batch"] == 2);
  CHECK(big.plan["training"]["grad_accumulation"] == 16);
  CHECK(big.plan["training"]["global_batch"] == 2 * 16 * 2);
  CHECK(findings(big, "unknown-key", "attention_type") == 1);  // likewise no NeoXArgs field
  // swiglu, no intermediate_size: 4h = 16384, 2/3 -> 10922, a half 5461 rounded up to
  // mlp_multiple_of 256 = 5632 (transformer.py:122-143).
  const std::string text = replace(read_data("neox/llemma_7B.yml"), "\"num_layers\": 32,",
                                   "\"num_layers\": 32,\n  \"padded_vocab_size\": 32016,");
  ImportResult m = import_ok(&import_neox, text, world(2, 8));
  REQUIRE(m.plan["model"].is_object());
  CHECK(m.plan["model"]["ffn_hidden"] == 5632);
  CHECK(m.plan["model"]["kv_heads"] == 32);
}

TEST_CASE("neox_rwkv_layers_are_unmodelled_and_yaml_booleans_read") {
  ImportResult r = import_data_ok("neox", "neox/rwkv_170M.yml", world(1, 8));
  CHECK(findings(r, "model-unmodelled-layers", "rwkv") == 1);
  CHECK(r.plan["training"]["param_dtype"] == "bf16");
}

TEST_CASE("neox_refusals_name_the_numbers") {
  const std::string text = read_data("neox/pythia_12B.yml");
  // 12 GPUs: 12 / (1 x 4) = 3, whole; 10 GPUs is not (arguments.py:926-934).
  CHECK(import_error(&import_neox, text, world(1, 10)).find("not a multiple") != std::string::npos);
  // train_batch_size that does not factor (arguments.py:879-883).
  const std::string bad = replace(text, "\"gradient_accumulation_steps\": 2,", "\"train_batch_size\": 100,");
  CHECK(import_error(&import_neox, bad, world(2, 8)).find("train_batch_size 100") != std::string::npos);
  // An unknown key: NeoXArgs(**config) raises.
  ImportResult u = import_ok(&import_neox, replace(text, "\"num_layers\"", "\"num_layer\""), world(2, 8));
  CHECK(findings(u, "unknown-key", "num_layer") >= 1);
}

TEST_CASE("neox_importer_on_a_file_that_is_not_neox_says_so") {
  CHECK(import_error(&import_neox, "name: x\nsteps: 2\n", world(1, 8)).find("not a GPT-NeoX config") !=
        std::string::npos);
}

}  // namespace
}  // namespace planck::import::test
