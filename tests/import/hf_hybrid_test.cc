// Hugging Face configs of hybrid models (tests/data/import/hf/README.md): Gated DeltaNet linear
// attention (Qwen3-Next, Qwen3.5) and Mamba-2 (Nemotron-H) layers are priced as attention and
// said as model-unmodelled-layers, shared experts are counted. The mixers' own parameter counts
// (core/plan/hf_layers.h, from transformers' module definitions) are checked against the totals
// the model cards publish: the planck model's parameters plus, for each unmodelled layer, what its
// real mixer holds over the attention planck prices, land on the published total.

#include <doctest/doctest.h>

#include <string>

#include "core/plan/hf_config.h"
#include "core/plan/hf_layers.h"
#include "core/plan/plan_load.h"
#include "core/plan/presets.h"
#include "tests/import/import_test_util.h"

namespace planck::import::test {
namespace {

struct Read {
  core::HfModel hf;
  core::ModelSpec model;
  nlohmann::json text_config;
};

Read read(const std::string& file) {
  const nlohmann::json config = core::parse_python_json(read_data("hf/" + file));
  REQUIRE_FALSE(config.is_discarded());
  auto hf = core::read_hf_config(config);
  REQUIRE_MESSAGE(hf.is_ok(), (hf.is_ok() ? std::string() : hf.message()));
  nlohmann::json m = hf->model;
  m.erase("name");
  core::LoadedPlan lp = core::load_plan_text(
      R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 1}, "mesh": {"dims": ["tp"], "shape": [1]},
          "model": )" + m.dump() + "}",
      file);
  REQUIRE(lp.plan.has_value());
  return {*hf, *lp.plan->model, config.contains("text_config") ? config["text_config"] : config};
}

const core::HfUnmodelled* finding(const core::HfModel& hf, const std::string& key) {
  for (const core::HfUnmodelled& u : hf.unmodelled) {
    if (u.key == key) return &u;
  }
  return nullptr;
}

bool says(const core::HfUnmodelled* u, const std::string& text) {
  return u != nullptr && u->message.find(text) != std::string::npos;
}

TEST_CASE("hf_qwen3_next_gated_deltanet_layers_are_said_and_the_total_is_the_published_80b") {
  // alibaba/InferSim@f2293dab:hf_configs/qwen3-next-80B-A3B_config.json (Qwen/Qwen3-Next-80B-A3B-Instruct):
  // no layer_types; full_attention_interval 4 makes layers 4, 8, ... full attention
  // (configuration_qwen3_next.py), the other 36 Gated DeltaNet. Model card: "80B in total".
  Read r = read("Qwen--Qwen3-Next-80B-A3B-Instruct_config.json");
  CHECK(r.model.layers == 48);
  CHECK(r.model.experts == 512);
  CHECK(r.model.experts_per_token == 10);
  CHECK(r.model.moe_ffn_hidden == 512);
  CHECK(r.model.shared_experts == 1);  // shared_expert_intermediate_size 512 = one expert's width
  CHECK(r.model.moe_layer_count() == 48);
  const core::HfUnmodelled* gdn = finding(r.hf, "full_attention_interval");
  REQUIRE(gdn != nullptr);
  CHECK(says(gdn, "36 of 48 layers are Gated DeltaNet linear attention"));
  CHECK(says(gdn, "priced as the config's full attention (16 heads of 256, 2 KV heads)"));
  CHECK(says(finding(r.hf, "model_type"), "output gate of the 12 attention layers"));
  // Qwen3NextGatedDeltaNet at hidden 2048, 16 key heads of 128, 32 value heads of 128, conv 4:
  // in_proj_qkvz 2048 x 12288, in_proj_ba 2048 x 64, conv1d 8192 x 4, out_proj 4096 x 2048 (the
  // module shapes transformers prints for this config), dt_bias and A_log 32 each, norm 128.
  const double gdn_params = 2048.0 * 12288 + 2048.0 * 64 + 8192.0 * 4 + 4096.0 * 2048 + 64 + 128;
  CHECK(core::gated_deltanet_params(r.text_config) == gdn_params);
  const double attention = core::param_counts(r.model).attention;
  const double gate = 2048.0 * 16 * 256;  // q_proj's second half
  const double total = core::param_counts(r.model).total + 36 * (gdn_params - attention) + 12 * gate;
  CHECK(total == doctest::Approx(80e9).epsilon(0.01));
}

TEST_CASE("hf_qwen3_5_hybrid_moe_without_intermediate_size_reads_and_matches_the_published_397b") {
  // ai-dynamo/aiconfigurator@095f58a5:.../Qwen--Qwen3.5-397B-A17B_config.json: layer_types 45
  // linear_attention + 15 full_attention, 512 experts of 1024 plus a shared expert of 1024, no
  // intermediate_size (every layer has experts), attn_output_gate, one MTP layer, a vision tower.
  // Model card (Qwen/Qwen3.5-397B-A17B): 397B parameters, 60 layers of 15 x (3 Gated DeltaNet + 1
  // gated attention), 512 experts, 10 routed + 1 shared.
  Read r = read("Qwen--Qwen3.5-397B-A17B_config.json");
  CHECK(r.model.layers == 60);
  CHECK(r.model.experts == 512);
  CHECK(r.model.shared_experts == 1);
  CHECK(r.model.moe_layer_count() == 60);
  CHECK(r.model.vocab == 248320);
  CHECK_FALSE(r.model.tied_embeddings);
  CHECK(says(finding(r.hf, "layer_types"), "45 of 60 layers are Gated DeltaNet linear attention"));
  CHECK(says(finding(r.hf, "attn_output_gate"), "output gate of the 15 attention layers"));
  CHECK(says(finding(r.hf, "mtp_num_hidden_layers"), "1 multi-token-prediction layer"));
  CHECK(says(finding(r.hf, "vision_config"), "vision encoder (27 blocks of hidden 1152)"));
  const double attention = core::param_counts(r.model).attention;
  const double total = core::param_counts(r.model).total +
                       45 * (core::gated_deltanet_params(r.text_config) - attention) + 15 * (4096.0 * 32 * 256);
  CHECK(total == doctest::Approx(397e9).epsilon(0.01));
  // The dense 27B: 48 of 64 Gated DeltaNet layers, 27B on its model card.
  Read d = read("Qwen--Qwen3.5-27B_config.json");
  CHECK(d.model.ffn_hidden == 17408);
  CHECK_FALSE(d.model.is_moe());
  CHECK(says(finding(d.hf, "layer_types"), "48 of 64 layers"));
  const double dense = core::param_counts(d.model).total +
                       48 * (core::gated_deltanet_params(d.text_config) - core::param_counts(d.model).attention) +
                       16 * (5120.0 * 24 * 256);
  CHECK(dense == doctest::Approx(27e9).epsilon(0.01));
}

TEST_CASE("hf_nemotron_h_mamba_blocks_are_priced_as_attention_and_said") {
  // ai-dynamo/aiconfigurator@095f58a5:.../nvidia--Nemotron-H-56B-Base-8K_config.json:
  // hybrid_override_pattern of 118 blocks (54 M, 10 *, 54 -), relu2 MLPs without a gate,
  // "time_step_limit": [0.0, Infinity] (Python's json, not JSON). The name says 56B.
  Read r = read("nvidia--Nemotron-H-56B-Base-8K_config.json");
  CHECK(r.model.layers == 54);  // one planck layer per MLP block
  CHECK_FALSE(r.model.gated_mlp);
  CHECK(r.model.effective_head_dim() == 128);  // attention_head_dim
  const core::HfUnmodelled* p = finding(r.hf, "hybrid_override_pattern");
  REQUIRE(p != nullptr);
  CHECK(says(p, "118 blocks of one mixer or MLP each (54 Mamba-2, 10 attention, 54 MLP, 0 MoE)"));
  CHECK(says(p, "planck prices 54 transformer layers"));
  // NemotronHMamba2Mixer at hidden 8192, 256 heads of 64, 8 groups, state 256, conv 4 with bias:
  // in_proj 8192 x (16384 + 20480 + 256), conv1d 20480 x 4 + 20480, dt_bias/A_log/D 256 each,
  // norm 16384, out_proj 16384 x 8192.
  const double mamba = 8192.0 * 37120 + 20480.0 * 4 + 20480 + 3 * 256 + 16384 + 16384.0 * 8192;
  CHECK(core::mamba2_params(r.text_config) == mamba);
  // Real blocks: 54 Mamba + 10 attention mixers, 54 MLPs, one norm each (118), embedding, head.
  const double attention = core::param_counts(r.model).attention;
  const double total = core::param_counts(r.model).total + 54 * (mamba - attention) + 10 * attention +
                       8192.0 * (118 - 2 * 54);
  CHECK(total == doctest::Approx(56e9).epsilon(0.01));
  // Nemotron-3 Nano 30B-A3B: every MLP block is MoE (128 experts of 1856, top 6), one shared
  // expert of 3712 = two experts' width; NVIDIA's card: 31.6B total parameters.
  Read nano = read("nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16_config.json");
  CHECK(nano.model.layers == 23);
  CHECK(nano.model.experts == 128);
  CHECK(nano.model.experts_per_token == 6);
  CHECK(nano.model.shared_experts == 2);
  CHECK(nano.model.moe_layer_count() == 23);
  CHECK(says(finding(nano.hf, "hybrid_override_pattern"), "(23 Mamba-2, 6 attention, 0 MLP, 23 MoE)"));
  const double na = core::param_counts(nano.model).attention;
  const double nano_total = core::param_counts(nano.model).total +
                            23 * (core::mamba2_params(nano.text_config) - na) + 6 * na + 2688.0 * (52 - 2 * 23);
  CHECK(nano_total == doctest::Approx(31.6e9).epsilon(0.01));
}

TEST_CASE("hf_plain_configs_say_nothing_and_bad_patterns_are_refused") {
  // Mixtral's config has no hybrid, gate, MTP or vision keys: nothing to say.
  Read mixtral = read("mistralai--Mixtral-8x7B-v0.1_config.json");
  CHECK(mixtral.hf.unmodelled.empty());
  // gpt-oss alternates sliding-window and full attention (layer_types): said, priced as full.
  Read oss = read("openai--gpt-oss-20b_config.json");
  CHECK(says(finding(oss.hf, "layer_types"), "12 of 24 layers use sliding-window attention (window 128)"));
  // A block character Nemotron-H does not define, and a pattern with no MLP block.
  for (const char* pattern : {"M-X-", "M*M*"}) {
    CAPTURE(pattern);
    nlohmann::json c = {{"model_type", "nemotron_h"}, {"num_hidden_layers", 4}, {"hidden_size", 64},
                        {"num_attention_heads", 4}, {"vocab_size", 128}, {"intermediate_size", 256},
                        {"hybrid_override_pattern", pattern}};
    auto r = core::read_hf_config(c);
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.message().find("hybrid_override_pattern") != std::string::npos);
  }
  // NaN / Infinity inside strings stay text; outside they are null.
  const nlohmann::json j = core::parse_python_json(R"({"a": "NaN Infinity", "b": [-Infinity, NaN]})");
  REQUIRE_FALSE(j.is_discarded());
  CHECK(j["a"] == "NaN Infinity");
  CHECK(j["b"][0].is_null());
  CHECK(core::parse_python_json("{\"a\": Inf}").is_discarded());
}

}  // namespace
}  // namespace planck::import::test
