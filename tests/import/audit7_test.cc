// Audit 7: Megatron-family launches of sources not read before (llm-jp/scripts, swiss-ai/Megatron-LM,
// HYGON-AI/Megatron-LM-das, GeodesicResearch/geodesic-megatron) and one flag they led to. Expected
// values from each framework's code, cited per case.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/import/import_test_util.h"

namespace planck::import::test {

namespace {

// NVIDIA's Qwen3-235B-A22B model flags (a conf that examples/post_training/modelopt sources) with a
// launch line: the conf holds --micro-batch-size, --seq-length and --moe-layer-recompute.
std::string qwen3_launch(const std::string& extra) {
  return read_data("megatron-lm/audit7/Qwen3-235B-A22B.sh") +
         "\ntorchrun --nproc_per_node 8 pretrain_gpt.py ${MODEL_ARGS} --global-batch-size 64 "
         "--expert-model-parallel-size 8 --vocab-size 151936 " +
         extra + "\n";
}

std::vector<std::string> modules_of(const ImportResult& r) {
  std::vector<std::string> out;
  for (const auto& m : r.plan["training"]["recompute_modules"]) out.push_back(m.get<std::string>());
  return out;
}

}  // namespace

TEST_CASE("megatron_moe_layer_recompute_is_selective_recompute_of_the_moe_layer") {
  // megatron/core/transformer/transformer_config.py@d98e8a6: recompute_modules defaults to
  // ["core_attn"] (:1940-1941); moe_layer_recompute makes recompute_granularity "selective" and
  // appends "moe" (:2014-2025). Before, planck read the flag as nothing: the MoE layers' activations
  // were priced as kept.
  ImportResult r = import_ok(&import_megatron, qwen3_launch(""), world(1, 8), "qwen3.sh");
  CHECK(r.plan["training"]["activation_checkpointing"] == "selective_attention");
  CHECK(modules_of(r) == std::vector<std::string>{"core_attn", "moe"});

  // With a module list of its own, "moe" is appended to it (:2024-2025).
  ImportResult listed = import_ok(&import_megatron,
                                  qwen3_launch("--recompute-granularity selective --recompute-modules moe_act"),
                                  world(1, 8), "qwen3.sh");
  CHECK(modules_of(listed) == std::vector<std::string>{"moe_act", "moe"});

  // With full granularity Megatron raises ValueError (:2019-2022): refused, naming the flag.
  const std::string err = import_error(&import_megatron,
                                       qwen3_launch("--recompute-granularity full --recompute-method uniform"),
                                       world(1, 8), "qwen3.sh");
  CHECK(err.find("--moe-layer-recompute") != std::string::npos);
  CHECK(err.find("full recompute granularity") != std::string::npos);
}

TEST_CASE("megatron_pytest_run_under_torchrun_is_no_training_launch") {
  // geodesic-megatron's functional test (@df06386) runs `torch.distributed.run ... -m coverage run ...
  // -m pytest tests/.../test_llama_recipes_pretrain_1b.py`: pytest runs the file's test cases, so the
  // launch is no Megatron training entry point, and "Megatron refuses to start without
  // --micro-batch-size" (what planck said) is not what happens.
  auto r = import_file("megatron", data_path("megatron-bridge/audit7/L0_Launch_recipes_llama_1b.sh"), world(1, 2));
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.message().find("runs pytest") != std::string::npos);
  CHECK(r.message().find("micro-batch-size") == std::string::npos);
}

TEST_CASE("megatron_epfllm_launch_is_not_blooms_fork") {
  // epfLLM/Megatron-LLM's examples/finetune.sh (@806a833) passes --position_embedding_type rotary, a
  // value BLOOM's fork shares (epfLLM megatron/arguments.py:461), with flags only epfLLM defines
  // (--use_rms_norm, arguments.py:447) and Megatron-LM's own --sequence_parallel / --recompute_granularity
  // / --use_flash_attn, which epfLLM keeps (arguments.py:698, 618, 678) and BLOOM's fork lacks. Read as
  // BLOOM's fork, those three were "unknown, argparse refuses at start-up": false.
  ImportOptions o = world(1, 8);
  o.sets.emplace_back("1", "llama2");
  auto r = import_file("megatron", data_path("megatron-lm/audit7/epfllm_finetune.sh"), o);
  REQUIRE_MESSAGE(r.is_ok(), (r.is_ok() ? std::string() : r.message()));
  for (const char* flag : {"--sequence-parallel is not a key", "--recompute-granularity is not a key",
                           "--use-flash-attn is not a key"}) {
    CHECK_FALSE(finding_says(*r, "unknown-key", flag));
  }
  for (const auto& n : r->plan["notes"]) CHECK(n.get<std::string>().find("BLOOM's fork") == std::string::npos);
  CHECK(r->plan["parallelism"]["sequence_parallel"] == true);
  CHECK(r->plan["training"]["activation_checkpointing"] == "selective_attention");
}

}  // namespace planck::import::test
