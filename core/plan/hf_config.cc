#include "core/plan/hf_config.h"

#include <cstdint>
#include <optional>

#include "core/plan/hf_layers.h"
#include "core/plan/json_value.h"

// Field names from Hugging Face transformers' configuration classes (configuration_llama.py,
// configuration_mixtral.py, configuration_qwen3_moe.py, configuration_qwen3_next.py,
// configuration_deepseek_v3.py, configuration_llama4.py, configuration_gpt_oss.py,
// configuration_nemotron_h.py) and the configs in tests/data/import/hf/.

namespace planck::core {
namespace {

std::optional<std::int64_t> int_field(const nlohmann::json& c, const char* key) {
  return c.contains(key) ? json_int64(c[key]) : std::nullopt;
}

// Python's json.dumps writes float('inf') and float('nan') as bare Infinity / NaN; JSON has no
// such tokens. Outside strings they become null (the same length is not needed: nothing reads
// positions from this text).
std::string python_tokens_to_null(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (in_string) {
      out += ch;
      if (ch == '\\' && i + 1 < text.size()) out += text[++i];
      else if (ch == '"') in_string = false;
      continue;
    }
    if (ch == '"') in_string = true;
    bool replaced = false;
    for (std::string_view token : {std::string_view("-Infinity"), std::string_view("Infinity"), std::string_view("NaN")}) {
      if (text.substr(i, token.size()) == token) {
        out += "null";
        i += token.size() - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += ch;
  }
  return out;
}

// Routed and shared experts, their width and which layers have them.
Status read_experts(const nlohmann::json& c, const std::string& type, nlohmann::json& m,
                    std::vector<HfUnmodelled>& unmodelled) {
  // Routed experts: n_routed_experts (DeepSeek, Kimi, Nemotron-H), num_local_experts (Mixtral,
  // Llama 4, GPT-OSS), num_experts (Qwen3-MoE, Qwen3-Next, Qwen3.5).
  std::optional<std::int64_t> experts = int_field(c, "n_routed_experts");
  if (!experts) experts = int_field(c, "num_local_experts");
  if (!experts) experts = int_field(c, "num_experts");
  if (!experts || *experts <= 1) return Status::ok();
  m["experts"] = *experts;
  m["experts_per_token"] = int_field(c, "num_experts_per_tok").value_or(2);
  // Expert width: moe_intermediate_size where the dense MLP differs (DeepSeek, Qwen3-MoE);
  // Mixtral and GPT-OSS have only experts, of intermediate_size; Llama 4's experts are
  // intermediate_size and its dense layers intermediate_size_mlp, with one shared expert.
  const auto inter = int_field(c, "intermediate_size");
  const auto moe = int_field(c, "moe_intermediate_size");
  if (!moe && !inter) {
    return Status::error("Hugging Face config (model_type " + type +
                         ") has neither 'moe_intermediate_size' nor 'intermediate_size': the experts' size cannot be "
                         "determined");
  }
  const std::int64_t width = moe ? *moe : *inter;
  m["moe_ffn_hidden"] = width;
  if (auto mlp = int_field(c, "intermediate_size_mlp")) m["ffn_hidden"] = *mlp;
  if (auto shared = int_field(c, "n_shared_experts")) m["shared_experts"] = *shared;
  if (type.rfind("llama4", 0) == 0) m["shared_experts"] = 1;
  // One shared expert of its own width (Qwen2-MoE, Qwen3-Next, Qwen3.5:
  // shared_expert_intermediate_size; Nemotron-H: moe_shared_expert_intermediate_size, one
  // NemotronHMLP of that width whatever n_shared_experts says): priced as that many routed-width
  // experts, which have the same parameters and FLOPs when the width divides.
  for (const char* key : {"shared_expert_intermediate_size", "moe_shared_expert_intermediate_size"}) {
    const auto shared = int_field(c, key);
    if (!shared || *shared <= 0 || width <= 0) continue;
    m["shared_experts"] = (*shared + width / 2) / width;
    if (*shared % width != 0) {
      unmodelled.push_back({key, std::string(key) + " " + std::to_string(*shared) + " is not a multiple of the " +
                                     "experts' width " + std::to_string(width) + ": the shared expert is priced as " +
                                     std::to_string(m["shared_experts"].get<std::int64_t>()) + " of them"});
    }
    break;
  }
  if (auto k = int_field(c, "first_k_dense_replace")) m["dense_layers"] = *k;
  // Qwen's mlp_only_layers: layers with a dense MLP instead of experts, by index.
  if (c.contains("mlp_only_layers") && c["mlp_only_layers"].is_array() && !c["mlp_only_layers"].empty()) {
    const nlohmann::json& only = c["mlp_only_layers"];
    bool leading = true;
    for (std::size_t i = 0; i < only.size(); ++i) leading = leading && json_int64(only[i]) == std::int64_t(i);
    m["dense_layers"] = static_cast<std::int64_t>(only.size());
    if (!leading) {
      unmodelled.push_back({"mlp_only_layers", "mlp_only_layers " + json_excerpt(only) + ": " +
                                                   std::to_string(only.size()) +
                                                   " dense-MLP layers, priced as the model's first ones"});
    }
  }
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
  return Status::ok();
}

}  // namespace

bool is_hf_config(const nlohmann::json& v) {
  return v.is_object() && v.contains("model_type") && v["model_type"].is_string();
}

nlohmann::json parse_python_json(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_discarded()) return j;
  return nlohmann::json::parse(python_tokens_to_null(text), nullptr, false);
}

Result<HfModel> read_hf_config(const nlohmann::json& config) {
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
  HfModel out;
  nlohmann::json& m = out.model;
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
  else if (auto ahd = int_field(c, "attention_head_dim")) m["head_dim"] = *ahd;  // Nemotron-H
  m["tied_embeddings"] = c.value("tie_word_embeddings", config.value("tie_word_embeddings", false));
  if (auto st = read_experts(c, type, m, out.unmodelled); !st) return st;
  if (!m.contains("ffn_hidden")) {
    const auto inter = int_field(c, "intermediate_size");
    // Qwen3.5's MoE configs state no intermediate_size: every layer has experts, so no dense MLP
    // is priced and the experts' width stands in.
    const bool all_moe = m.contains("experts") && !m.contains("dense_layers") && !m.contains("moe_layer_freq");
    if (!inter && !all_moe) {
      return Status::error("Hugging Face config (model_type " + type +
                           ") has no integer 'intermediate_size': the MLP size cannot be determined");
    }
    m["ffn_hidden"] = inter ? *inter : m["moe_ffn_hidden"].get<std::int64_t>();
  }
  // Multi-head latent attention (DeepSeek-V2/V3, Kimi K2).
  if (auto kv_rank = int_field(c, "kv_lora_rank")) {
    m["kv_lora_rank"] = *kv_rank;
    if (auto q = int_field(c, "q_lora_rank")) m["q_lora_rank"] = *q;
    for (const char* k : {"qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"}) {
      if (auto v = int_field(c, k)) m[k] = *v;
    }
  }
  if (auto st = read_hf_layers(config, c, type, m, out.unmodelled); !st) return st;
  return out;
}

Result<nlohmann::json> model_from_hf_config(const nlohmann::json& config) {
  auto r = read_hf_config(config);
  if (!r) return r.status();
  return std::move(r->model);
}

}  // namespace planck::core
