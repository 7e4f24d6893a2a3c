// axolotl training YAMLs (axolotl-ai-cloud/axolotl@067b021c8 examples/, tests/data/import/axolotl/).
// Expected values come from the configs and axolotl's own code: the batch as written
// (schemas/training.py defaults 1), the data ranks world / (tp x cp) (utils/config/__init__.py:221-230),
// the ParallelismConfig sizes of utils/distributed.py _get_parallel_config_kwargs, the LoRA rank as
// written.

#include <doctest/doctest.h>

#include <string>

#include "tests/import/import_test_util.h"

namespace planck::import::test {
namespace {

constexpr const char* kAxolotlFiles[] = {
    "axolotl/fft-8b-liger-fsdp.yaml",   "axolotl/adamw-pretrain-fsdp2.yaml",
    "axolotl/lora-8b.yml",              "axolotl/qlora.yml",
    "axolotl/instruct-dpo-lora-8b.yml", "axolotl/gpt-oss-20b-fft-deepspeed-zero3.yaml",
    "axolotl/qwen3-8b-fsdp-tp-cp.yaml", "axolotl/llama-3_1-8b-hsdp-tp.yaml",
    "axolotl/qwen3_30ba3b_ep_fsdp_fft_4gpu.yaml"};

// The 1-based line of the first line of `rel` starting with `prefix` (read off the file, not planck).
int line_of(const std::string& rel, const std::string& prefix) {
  const std::string text = read_data(rel);
  int line = 1;
  for (std::size_t at = 0; at < text.size(); ++line) {
    if (text.compare(at, prefix.size(), prefix) == 0) return line;
    const std::size_t nl = text.find('\n', at);
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  return 0;
}

TEST_CASE("axolotl_configs_are_detected_by_base_model_and_an_axolotl_key") {
  for (const char* rel : kAxolotlFiles) {
    CAPTURE(rel);
    CHECK(detect_framework(rel, read_data(rel)) == "axolotl");
  }
  CHECK(detect_framework("a.yaml", "base_model: x\nsequence_len: 512\n") == "axolotl");
  // base_model alone says nothing; LLaMA-Factory's keys stay LLaMA-Factory's.
  CHECK(detect_framework("a.yaml", "base_model: x\n") != "axolotl");
  CHECK(detect_framework("x.yaml", "model_name_or_path: x\nfinetuning_type: lora\n") == "llama-factory");
  CHECK(detect_framework("n.yaml", "model:\n  base_model: x\n  sequence_len: 4\n") != "axolotl");
}

TEST_CASE("axolotl_fsdp2_full_finetune_shards_over_the_world") {
  ImportResult r = import_data_ok("axolotl", "axolotl/adamw-pretrain-fsdp2.yaml", world(1, 8));
  CHECK(r.plan["mesh"]["dims"].dump() == R"(["dp_shard"])");
  CHECK(r.plan["mesh"]["shape"].dump() == R"([8])");
  CHECK(r.plan["parallelism"]["data_parallel"] == "fsdp");
  CHECK(r.plan["parallelism"]["reshard_after_forward"] == true);  // fsdp_reshard_after_forward: true
  const auto& t = r.plan["training"];
  CHECK(t["stack"] == "fsdp2");  // fsdp_config.fsdp_version: 2
  CHECK(t["micro_batch"] == 4);
  CHECK(t["grad_accumulation"] == 1);
  CHECK(t["global_batch"] == 4 * 1 * 8);
  CHECK(t["seq_len"] == 2048);
  CHECK(t["activation_checkpointing"] == "none");  // gradient_checkpointing: false
  CHECK(t["param_dtype"] == "bf16");              // bf16: auto
  CHECK(!t.contains("lora_rank"));
  CHECK(findings(r, "unknown-key") == 0);
  CHECK(error_rules(verify(r)).empty());
}

TEST_CASE("axolotl_fsdp1_list_with_prefixed_config_offloads_and_warns_the_keys_axolotl_drops") {
  ImportResult r = import_data_ok("axolotl", "axolotl/fft-8b-liger-fsdp.yaml", world(1, 8));
  CHECK(r.plan["parallelism"]["data_parallel"] == "fsdp");
  const auto& t = r.plan["training"];
  CHECK(t["stack"] == "fsdp1");  // no fsdp_version: validation.py pins 1
  CHECK(t["offload_params"] == "cpu");  // fsdp_offload_params: true
  CHECK(t["global_batch"] == 2 * 4 * 8);
  CHECK(t["seq_len"] == 4096);
  CHECK(t["activation_checkpointing"] == "full");
  // FSDPConfig (utils/schemas/fsdp.py) has no sharding_strategy, backward_prefetch or
  // limit_all_gathers: pydantic drops them.
  CHECK(findings(r, "unknown-key") == 3);
  CHECK(findings(r, "unknown-key", "fsdp_config.fsdp_sharding_strategy") == 1);
  CHECK(findings(r, "unknown-key", "axolotl ignores it") == 3);
  CHECK(r.plan.value("model", std::string()) == "llama3-8b");  // NousResearch/Meta-Llama-3.1-8B
  CHECK(error_rules(verify(r)).empty());
}

TEST_CASE("axolotl_lora_8bit_is_ddp_with_rank_32_and_the_quantized_base_warned") {
  ImportResult r = import_data_ok("axolotl", "axolotl/lora-8b.yml", world(1, 8));
  CHECK(r.plan["mesh"]["dims"].dump() == R"(["dp"])");
  CHECK(r.plan["parallelism"]["data_parallel"] == "ddp");
  const auto& t = r.plan["training"];
  CHECK(t["lora_rank"] == 32);
  CHECK(!t.contains("lora_targets"));  // lora_target_linear: every Linear
  CHECK(t["global_batch"] == 2 * 4 * 8);
  CHECK(t["optimizer"] == "adam8bit");  // adamw_bnb_8bit
  CHECK(findings(r, "setting-unmodelled", "load_in_8bit") == 1);
  CHECK(findings(r, "setting-unmodelled", "lora_modules_to_save embed_tokens, lm_head") == 1);
  CHECK(findings(r, "unknown-key") == 0);
  CHECK(error_rules(verify(r)).empty());
}

TEST_CASE("axolotl_qlora_reads_rank_and_warns_the_4bit_base") {
  ImportResult r = import_data_ok("axolotl", "axolotl/qlora.yml", world(1, 8));
  const auto& t = r.plan["training"];
  CHECK(t["lora_rank"] == 32);
  CHECK(t["optimizer"] == "adamw");  // paged_adamw_32bit
  CHECK(findings(r, "setting-unmodelled", "load_in_4bit true") == 1);
  CHECK(findings(r, "unknown-key") == 0);
}

TEST_CASE("axolotl_lora_without_lora_r_is_refused_and_a_saved_adapter_is_said") {
  // _build_peft_lora_config passes r=cfg.lora_r to PEFT's LoraConfig (loaders/adapter.py:188); with
  // none it is None, and LoRA's update_layer compares `r <= 0` (peft@5d602fd tuners/lora/layer.py:239):
  // axolotl stops at start-up.
  const std::string no_r = replace(read_data("axolotl/qlora.yml"), "lora_r: 32", "");
  const std::string err = import_error(&import_axolotl, no_r, world(1, 8));
  CHECK(err.find("without lora_r") != std::string::npos);
  // With lora_model_dir, PeftModel.from_pretrained loads the saved adapter (adapter.py:371-380),
  // whose own adapter_config.json gives the rank: not read, said.
  const std::string saved = replace(no_r, "lora_model_dir:", "lora_model_dir: ./my-adapter");
  ImportResult r = import_ok(&import_axolotl, saved, world(1, 8));
  CHECK(findings(r, "setting-unmodelled", "lora_model_dir ./my-adapter") == 1);
}

TEST_CASE("axolotl_dpo_with_an_adapter_has_no_separate_reference_model") {
  ImportResult r = import_data_ok("axolotl", "axolotl/instruct-dpo-lora-8b.yml", world(1, 8));
  CHECK(findings(r, "setting-unmodelled", "rl dpo") == 0);
  // Without the adapter, setup_reference_model (train.py:137-153) loads a second model.
  std::string text = replace(read_data("axolotl/instruct-dpo-lora-8b.yml"), "adapter: lora", "adapter:");
  ImportResult full = import_ok(&import_axolotl, text, world(1, 8));
  CHECK(findings(full, "setting-unmodelled", "reference model") == 1);
}

TEST_CASE("axolotl_deepspeed_zero3_file_is_the_run_with_the_yaml_batch_filled") {
  ImportResult r = import_data_ok("axolotl", "axolotl/gpt-oss-20b-fft-deepspeed-zero3.yaml", world(1, 8));
  CHECK(r.plan["parallelism"]["data_parallel"] == "zero3");
  const auto& t = r.plan["training"];
  CHECK(t["micro_batch"] == 1);        // "auto" <- micro_batch_size
  CHECK(t["grad_accumulation"] == 2);  // "auto" <- gradient_accumulation_steps
  CHECK(t["global_batch"] == 1 * 2 * 8);
  CHECK(t["seq_len"] == 4096);
  CHECK(r.plan.value("model", std::string()) == "gpt-oss-20b");
  CHECK(findings(r, "setting-unmodelled", "activation_offloading") == 1);
  // A missing file is an error at the deepspeed: line.
  std::string text = replace(read_data("axolotl/gpt-oss-20b-fft-deepspeed-zero3.yaml"), "zero3_bf16.json", "nope.json");
  const std::string e = import_error(&import_axolotl, text, world(1, 8), data_path("axolotl/x.yaml"));
  CHECK(e.find(":" + std::to_string(line_of("axolotl/gpt-oss-20b-fft-deepspeed-zero3.yaml", "deepspeed:")) + ":") !=
        std::string::npos);
  CHECK(e.find("no such file") != std::string::npos);
}

TEST_CASE("axolotl_nd_parallel_fsdp_tp_cp_is_the_parallelism_config_mesh") {
  // dp_shard 2 x cp 2 x tp 2 = 8.
  ImportResult r = import_data_ok("axolotl", "axolotl/qwen3-8b-fsdp-tp-cp.yaml", world(1, 8));
  CHECK(r.plan["mesh"]["dims"].dump() == R"(["dp_replicate","dp_shard","cp","tp"])");
  CHECK(r.plan["mesh"]["shape"].dump() == R"([1,2,2,2])");
  CHECK(r.plan["parallelism"]["data_parallel"] == "fsdp");
  CHECK(r.plan["parallelism"]["fsdp_dims"].dump() == R"(["dp_shard","cp"])");
  CHECK(r.plan["training"]["global_batch"] == 1 * 1 * (8 / (2 * 2)));
  CHECK(error_rules(verify(r)).empty());
  // dp_replicate 2 x dp_shard 4 x tp 2 = 16 on 2 nodes of 8.
  ImportResult h = import_data_ok("axolotl", "axolotl/llama-3_1-8b-hsdp-tp.yaml", world(2, 8));
  CHECK(h.plan["mesh"]["shape"].dump() == R"([2,4,1,2])");
  CHECK(h.plan["parallelism"]["data_parallel"] == "hsdp");
  CHECK(h.plan["training"]["global_batch"] == 1 * 1 * (16 / 2));
  CHECK(error_rules(verify(h)).empty());
}

TEST_CASE("axolotl_sizes_that_do_not_fill_the_world_are_refused_at_their_line") {
  // 8 GPUs: tp 2 leaves 4, dp_replicate 2 leaves 2, dp_shard 4 leaves 2 // 4 = 0: the
  // ParallelismConfig total 2 x 4 x 2 = 16 is not 8.
  const std::string rel = "axolotl/llama-3_1-8b-hsdp-tp.yaml";
  auto r = import_file("axolotl", data_path(rel), world(1, 8));
  REQUIRE(!r.is_ok());
  CHECK(r.message().find(rel + ":" + std::to_string(line_of(rel, "dp_shard_size:")) + ":") != std::string::npos);
  CHECK(r.message().find("multiply to 16") != std::string::npos);
  CHECK(r.message().find("world 8") != std::string::npos);
  // 12 GPUs: tp 2 x cp 2 leave 3, dp_shard 2 leaves 1: total 8, not 12.
  auto q = import_file("axolotl", data_path("axolotl/qwen3-8b-fsdp-tp-cp.yaml"), world(1, 12));
  REQUIRE(!q.is_ok());
  CHECK(q.message().find("multiply to 8") != std::string::npos);
  // expert parallelism: ep 2 x dp_shard 2 is 4; on 8 GPUs the plugin's product check refuses.
  ImportResult ep = import_data_ok("axolotl", "axolotl/qwen3_30ba3b_ep_fsdp_fft_4gpu.yaml", world(1, 4));
  CHECK(ep.plan["mesh"]["shape"].dump() == R"([1,4,1,1])");
  CHECK(findings(ep, "setting-unmodelled", "expert_parallel_size 2") == 1);
  auto ep8 = import_file("axolotl", data_path("axolotl/qwen3_30ba3b_ep_fsdp_fft_4gpu.yaml"), world(1, 8));
  REQUIRE(!ep8.is_ok());
  CHECK(ep8.message().find("plugin.py") != std::string::npos);
}

TEST_CASE("axolotl_validators_refuse_what_axolotl_refuses") {
  const std::string nd = read_data("axolotl/qwen3-8b-fsdp-tp-cp.yaml");
  // context parallelism without flash attention (validation.py:1652-1657).
  const std::string sdpa = replace(nd, "attn_implementation: flash_attention_2", "attn_implementation: sdpa");
  CHECK(import_error(&import_axolotl, sdpa, world(1, 8)).find("requires flash attention") != std::string::npos);
  // dp_shard_size without fsdp_config (distributed.py:359-363).
  std::string no_fsdp = replace(nd, "fsdp_version: 2\nfsdp_config:", "fsdp_version: 2\nxfsdp_config:");
  no_fsdp = replace(no_fsdp, "context_parallel_size: 2", "context_parallel_size: 1");
  no_fsdp = replace(no_fsdp, "tensor_parallel_size: 2", "tensor_parallel_size: 1");
  CHECK(import_error(&import_axolotl, no_fsdp, world(1, 8)).find("without fsdp_config") != std::string::npos);
  // Fewer than two batch keys (validation.py:218-226); GA beside batch_size (:272-279).
  CHECK(import_error(&import_axolotl, "base_model: x\nmicro_batch_size: 2\n", world(1, 8)).find("At least two") !=
        std::string::npos);
  const std::string both = "base_model: x\nmicro_batch_size: 2\ngradient_accumulation_steps: 2\nbatch_size: 8\n";
  CHECK(import_error(&import_axolotl, both, world(1, 8)).find("only one of") != std::string::npos);
  // A hostile size is an error, not a crash.
  CHECK(!import_error(&import_axolotl,
                      "base_model: x\nmicro_batch_size: 1\ngradient_accumulation_steps: 1\n"
                      "tensor_parallel_size: 9223372036854775807\n",
                      world(1, 8))
             .empty());
}

TEST_CASE("axolotl_typo_is_an_unknown_key_with_the_close_name") {
  std::string text = replace(read_data("axolotl/adamw-pretrain-fsdp2.yaml"), "gradient_checkpointing: false",
                             "gradient_checkpointng: true");
  ImportResult r = import_ok(&import_axolotl, text, world(1, 8));
  CHECK(findings(r, "unknown-key", "gradient_checkpointng") == 1);
  CHECK(findings(r, "unknown-key", "gradient_checkpointing") == 1);  // did you mean
  CHECK(r.plan["training"]["activation_checkpointing"] == "none");   // axolotl ignores the misspelt key
}

TEST_CASE("axolotl_yaml_1_1_integers_with_underscores_are_read_as_pyyaml_reads_them") {
  // examples/alst/llama3-8b-fsdp2-alst.yaml writes sequence_len: 500_000 (PyYAML: 500000).
  std::string text = replace(read_data("axolotl/adamw-pretrain-fsdp2.yaml"), "sequence_len: 2048",
                             "sequence_len: 500_000");
  ImportResult r = import_ok(&import_axolotl, text, world(1, 8));
  CHECK(r.plan["training"]["seq_len"] == 500000);
}

}  // namespace
}  // namespace planck::import::test
