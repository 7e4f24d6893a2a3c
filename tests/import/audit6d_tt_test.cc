// torchtitan registries of audit 6d (pytorch/torchtitan@b5bcd76c, the package copy in
// tests/data/import/torchtitan/pkg-b5bcd76c): what torchtitan builds, with expected values read
// off torchtitan's own source (cited per case), never planck's output.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/import/import_test_util.h"

namespace planck::import::test {
namespace {

ImportResult import_function(const std::string& model, const std::string& function, const ImportOptions& opts) {
  const std::string path = data_path("torchtitan/pkg-b5bcd76c/torchtitan/models/" + model + "/config_registry.py");
  auto all = import_all("torchtitan", path + ":" + function, opts);
  REQUIRE_MESSAGE(all.is_ok(), (all.is_ok() ? std::string() : all.message()));
  REQUIRE(all->size() == 1);
  return std::move(all->front().result);
}

std::vector<std::string> messages(const ImportResult& r, const std::string& rule) {
  std::vector<std::string> out;
  for (const ImportFinding& f : r.findings) {
    if (f.rule == rule) out.push_back(f.message);
  }
  return out;
}

// torchtitan/models/qwen3_5/__init__.py @b5bcd76c: _27b (:841-895) builds 64 layers with
// _build_qwen35_layers (:320-386), whose layer i is softmax attention when (i + 1) %
// full_attention_interval == 0 (default 4, :334, :341) and Gated DeltaNet otherwise (16 key heads,
// 48 value heads of 128, :878-881), and a vision encoder of 27 blocks of dim 1152 (:883-893).
// planck prices every layer as attention and no vision tower: both must be said.
TEST_CASE("torchtitan_qwen3_5_registry_says_gated_deltanet_layers_and_vision_encoder") {
  ImportResult r = import_function("qwen3_5", "qwen35_27b", world(8, 8));
  REQUIRE(r.plan["model"].is_object());
  CHECK(r.plan["model"]["layers"] == 64);
  const std::vector<std::string> said = messages(r, "model-unmodelled-layers");
  REQUIRE(said.size() == 2);
  CHECK(said[0].find("48 of 64 layers are Gated DeltaNet") != std::string::npos);
  CHECK(said[0].find("16 key heads of 128, 48 value heads of 128") != std::string::npos);
  CHECK(said[1].find("vision encoder (27 blocks of dim 1152)") != std::string::npos);
  core::Diagnostics d = verify(r);
  CHECK_MESSAGE(!d.has_errors(), error_rules(d));
}

// _35b_a3b (:897-958): 40 layers, 256 experts of 512, top 8, and a shared expert of
// shared_expert_hidden_dim 512 (:936-939), one SwiGLU (_shared_experts_config :136-151): one
// routed-width shared expert, which the model lacked.
TEST_CASE("torchtitan_qwen3_5_moe_registry_prices_the_shared_expert") {
  ImportResult r = import_function("qwen3_5", "qwen35_35b_a3b", world(8, 8));
  REQUIRE(r.plan["model"].is_object());
  CHECK(r.plan["model"]["experts"] == 256);
  CHECK(r.plan["model"]["experts_per_token"] == 8);
  CHECK(r.plan["model"]["moe_ffn_hidden"] == 512);
  CHECK(r.plan["model"]["shared_experts"] == 1);
  const std::vector<std::string> said = messages(r, "model-unmodelled-layers");
  REQUIRE(said.size() == 2);
  CHECK(said[0].find("30 of 40 layers are Gated DeltaNet") != std::string::npos);
  // A model without those layers (qwen3's 30B-A3B, a preset) says nothing of them.
  ImportResult plain = import_function("qwen3", "qwen3_30b_a3b", world(8, 8));
  CHECK(messages(plain, "model-unmodelled-layers").empty());
}

// torchtitan since #4121 (73aed7f6c) @b5bcd76c: a pipeline micro-batch is one dataloader batch of
// num_tokens_per_microbatch_per_dp_rank tokens, and trainer.py:856-863 fetches num_pp_microbatches
// of them per accumulation step (:409-414: tokens per dp rank = tokens x num_pp_microbatches;
// num_tokens_per_train_step defaults to that x dp, config/configs.py:43-48, so one accumulation
// step). planck read the count as splitting one batch of tokens (1 row into 2: "does not split").
TEST_CASE("torchtitan_registry_num_pp_microbatches_multiplies_the_local_batch") {
  // qwen35_debugmodel_moe (qwen3_5/config_registry.py:86-123): 512 tokens of context 512 = 1 row,
  // pp 2 x num_pp_microbatches 2, dp_shard 2 (EP 4 borrows from dp_shard x tp, the batch keeps dp 2).
  ImportResult q = import_function("qwen3_5", "qwen35_debugmodel_moe", world(1, 8));
  CHECK(q.plan["training"]["micro_batch"] == 1);
  CHECK(q.plan["training"]["grad_accumulation"] == 2);
  CHECK(q.plan["training"]["global_batch"] == 1 * 2 * 2);
  for (const std::string& w : q.warnings) CHECK(w.find("does not split") == std::string::npos);
  // torchtitan_recipes/tests/models.py:42-53 deepseek_v3_debugmodel_fsdp2_tp2_pp2_ep4: 2048 tokens
  // of context 2048 (deepseek_v3/config_registry.py:61-62) = 1 row, 8 pipeline micro-batches, dp 2.
  const std::string models = data_path("torchtitan/pkg-b5bcd76c/torchtitan_recipes/tests/models.py");
  auto all = import_all("torchtitan", models + ":deepseek_v3_debugmodel_fsdp2_tp2_pp2_ep4", world(1, 8));
  REQUIRE(all.is_ok());
  const ImportResult& d = all->front().result;
  CHECK(d.plan["training"]["micro_batch"] == 1);
  CHECK(d.plan["training"]["grad_accumulation"] == 8);
  CHECK(d.plan["training"]["global_batch"] == 1 * 8 * 2);
  // num_pp_microbatches 0: torchtitan raises at start-up (trainer.py:124-127).
  ImportOptions zero = world(1, 8);
  zero.sets.push_back({"parallelism.num_pp_microbatches", "0"});
  CHECK_FALSE(import_all("torchtitan", models + ":deepseek_v3_debugmodel_fsdp2_tp2_pp2_ep4", zero).is_ok());
}

// torchtitan/models/gpt_oss/__init__.py:200-209 @b5bcd76c: even-indexed layers use a sliding
// window of 128 tokens (sliding_window_size=128 if layer_id % 2 == 0), which the gpt-oss presets
// price as full attention: said, as the Hugging Face reader says it for gpt-oss's config.json.
TEST_CASE("torchtitan_gpt_oss_preset_says_its_sliding_window_layers") {
  ImportResult r = import_function("gpt_oss", "gpt_oss_20b", world(8, 8));
  CHECK(r.plan["model"] == "gpt-oss-20b");
  const std::vector<std::string> said = messages(r, "model-unmodelled-layers");
  REQUIRE(said.size() == 1);
  CHECK(said[0].find("sliding-window attention (window 128)") != std::string::npos);
}

}  // namespace
}  // namespace planck::import::test
