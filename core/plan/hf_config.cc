#include "core/plan/hf_config.h"

#include <cstdint>
#include <optional>

#include "core/plan/json_value.h"

// Field names from Hugging Face transformers' configuration classes (configuration_llama.py,
// configuration_mixtral.py, configuration_qwen3_moe.py, configuration_deepseek_v3.py,
// configuration_llama4.py, configuration_gpt_oss.py) and the configs in tests/data/hf/.

namespace planck::core {
namespace {

std::optional<std::int64_t> int_field(const nlohmann::json& c, const char* key) {
  return c.contains(key) ? json_int64(c[key]) : std::nullopt;
}

}  // namespace

bool is_hf_config(const nlohmann::json& v) {
  return v.is_object() && v.contains("model_type") && v["model_type"].is_string();
}

Result<nlohmann::json> model_from_hf_config(const nlohmann::json& config) {
  const nlohmann::json& c = config.contains("text_config") && config["text_config"].is_object() ? config["text_config"] : config;
  const std::string type = c.contains("model_type") && c["model_type"].is_string()
                               ? c["model_type"].get<std::string>()
                               : config["model_type"].get<std::string>();
  // A size past 64 bits is an error, not a field read as absent (and defaulted) or wrapped.
  for (const auto& [key, v] : c.items()) {
    if (json_int_out_of_range(v)) {
      return Status::error("Hugging Face config (model_type " + type + "): '" + key + "' = " + json_excerpt(v) +
                           " does not fit in a signed 64-bit integer (at most 9223372036854775807)");
    }
  }
  nlohmann::json m;
  m["name"] = config.contains("_name_or_path") && config["_name_or_path"].is_string()
                  ? config["_name_or_path"].get<std::string>()
                  : type;
  for (auto [hf, ours] : {std::pair{"num_hidden_layers", "layers"}, std::pair{"hidden_size", "hidden"},
                          std::pair{"num_attention_heads", "heads"}, std::pair{"vocab_size", "vocab"}}) {
    auto v = int_field(c, hf);
    if (!v) {
      return Status::error("Hugging Face config (model_type " + type + ") has no integer '" + hf +
                           "': the model's shape cannot be determined");
    }
    m[ours] = *v;
  }
  m["kv_heads"] = int_field(c, "num_key_value_heads").value_or(m["heads"].get<std::int64_t>());
  if (auto hd = int_field(c, "head_dim")) m["head_dim"] = *hd;
  const auto inter = int_field(c, "intermediate_size");
  if (!inter) {
    return Status::error("Hugging Face config (model_type " + type +
                         ") has no integer 'intermediate_size': the MLP size cannot be determined");
  }
  m["ffn_hidden"] = *inter;
  m["tied_embeddings"] = c.value("tie_word_embeddings", false);
  // Routed experts: n_routed_experts (DeepSeek, Kimi), num_local_experts (Mixtral, Llama 4,
  // GPT-OSS), num_experts (Qwen3-MoE).
  std::optional<std::int64_t> experts = int_field(c, "n_routed_experts");
  if (!experts) experts = int_field(c, "num_local_experts");
  if (!experts) experts = int_field(c, "num_experts");
  if (experts && *experts > 1) {
    m["experts"] = *experts;
    m["experts_per_token"] = int_field(c, "num_experts_per_tok").value_or(2);
    // Expert width: moe_intermediate_size where the dense MLP differs (DeepSeek, Qwen3-MoE);
    // Mixtral and GPT-OSS have only experts, of intermediate_size; Llama 4's experts are
    // intermediate_size and its dense layers intermediate_size_mlp, with one shared expert.
    if (auto moe = int_field(c, "moe_intermediate_size")) m["moe_ffn_hidden"] = *moe;
    else m["moe_ffn_hidden"] = *inter;
    if (auto mlp = int_field(c, "intermediate_size_mlp")) m["ffn_hidden"] = *mlp;
    if (auto shared = int_field(c, "n_shared_experts")) m["shared_experts"] = *shared;
    if (type.rfind("llama4", 0) == 0) m["shared_experts"] = 1;
    if (auto k = int_field(c, "first_k_dense_replace")) m["dense_layers"] = *k;
    std::optional<std::int64_t> freq = int_field(c, "interleave_moe_layer_step");
    if (!freq) freq = int_field(c, "decoder_sparse_step");
    if (!freq) freq = int_field(c, "moe_layer_freq");
    if (freq && *freq > 1) m["moe_layer_freq"] = *freq;
    // DeepSeek-V3 group-limited routing (modeling_deepseek.py MoEGate: top topk_group of n_group).
    const auto groups = int_field(c, "n_group"), per_token = int_field(c, "topk_group");
    if (groups && per_token && *groups > 1 && *per_token < *groups) {
      m["expert_groups"] = *groups;
      m["expert_groups_per_token"] = *per_token;
    }
  }
  // Multi-head latent attention (DeepSeek-V2/V3, Kimi K2).
  if (auto kv_rank = int_field(c, "kv_lora_rank")) {
    m["kv_lora_rank"] = *kv_rank;
    if (auto q = int_field(c, "q_lora_rank")) m["q_lora_rank"] = *q;
    for (const char* k : {"qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"}) {
      if (auto v = int_field(c, k)) m[k] = *v;
    }
  }
  return m;
}

}  // namespace planck::core
