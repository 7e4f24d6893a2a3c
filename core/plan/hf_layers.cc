#include "core/plan/hf_layers.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>

#include "core/plan/json_value.h"
#include "core/plan/presets.h"

// Layer kinds as transformers builds them: Qwen3NextDecoderLayer / Qwen3_5DecoderLayer take
// `linear_attention` (Gated DeltaNet) or `full_attention` from config.layer_types, which
// Qwen3NextConfig derives as "full every full_attention_interval-th layer" when absent
// (configuration_qwen3_next.py); NemotronHBlock is one mixer per block, from
// hybrid_override_pattern (M Mamba-2, * attention, - MLP, E MoE; configuration_nemotron_h.py).

namespace planck::core {
namespace {

double num(const nlohmann::json& c, const char* key, double fallback) {
  if (!c.contains(key)) return fallback;
  const auto v = json_int64(c[key]);
  return v ? static_cast<double>(*v) : fallback;
}

std::string count(std::int64_t n) { return std::to_string(n); }

// "118M", "1.23B": parameters to three significant digits.
std::string params_text(double p) {
  const bool billions = p >= 1e9;
  const double v = billions ? p / 1e9 : p / 1e6;
  char buf[32];
  std::snprintf(buf, sizeof buf, v >= 100 ? "%.0f%s" : (v >= 10 ? "%.1f%s" : "%.2f%s"), v, billions ? "B" : "M");
  return buf;
}

// The attention planck prices for every layer: the model's GQA attention (core::param_counts).
double priced_attention(const nlohmann::json& m) {
  ModelSpec s;
  s.hidden = m.value("hidden", std::int64_t{0});
  s.heads = m.value("heads", std::int64_t{0});
  s.kv_heads = m.value("kv_heads", std::int64_t{0});
  s.head_dim = m.value("head_dim", std::int64_t{0});
  return param_counts(s).attention;
}

std::string attention_text(const nlohmann::json& m) {
  const std::int64_t heads = m.value("heads", std::int64_t{0});
  const std::int64_t hd = m.contains("head_dim") ? m["head_dim"].get<std::int64_t>()
                                                 : (heads > 0 ? m.value("hidden", std::int64_t{0}) / heads : 0);
  return count(heads) + " heads of " + count(hd) + ", " + count(m.value("kv_heads", heads)) + " KV heads";
}

// Each layer's kind: config.layer_types, else derived from full_attention_interval where the
// config has linear-attention keys (Qwen3-Next's config.json states no layer_types).
std::vector<std::string> layer_kinds(const nlohmann::json& c, std::int64_t layers, std::string* key) {
  std::vector<std::string> kinds;
  if (c.contains("layer_types") && c["layer_types"].is_array()) {
    *key = "layer_types";
    for (const nlohmann::json& k : c["layer_types"]) kinds.push_back(k.is_string() ? k.get<std::string>() : "?");
    return kinds;
  }
  const auto interval = c.contains("full_attention_interval") ? json_int64(c["full_attention_interval"]) : std::nullopt;
  if (interval && *interval > 0 && c.contains("linear_num_value_heads")) {
    *key = "full_attention_interval";
    for (std::int64_t i = 0; i < layers; ++i)
      kinds.push_back((i + 1) % *interval == 0 ? "full_attention" : "linear_attention");
  }
  return kinds;
}

void read_layer_types(const nlohmann::json& c, const std::string& type, const nlohmann::json& m,
                      std::vector<HfUnmodelled>& out) {
  const std::int64_t layers = m["layers"].get<std::int64_t>();
  std::string key;
  const std::vector<std::string> kinds = layer_kinds(c, layers, &key);
  std::map<std::string, std::int64_t> n;
  for (const std::string& k : kinds) ++n[k];
  const std::string of = " of " + count(static_cast<std::int64_t>(kinds.size())) + " layers";
  const double attention = priced_attention(m);
  for (const auto& [kind, k] : n) {
    if (kind == "full_attention" || kind == "attention") continue;
    if (kind == "linear_attention") {
      out.push_back(
          {key, key + ": " + count(k) + of + " are Gated DeltaNet linear attention (" +
                    count(static_cast<std::int64_t>(num(c, "linear_num_key_heads", 16))) + " key heads of " +
                    count(static_cast<std::int64_t>(num(c, "linear_key_head_dim", 128))) + ", " +
                    count(static_cast<std::int64_t>(num(c, "linear_num_value_heads", 32))) + " value heads of " +
                    count(static_cast<std::int64_t>(num(c, "linear_value_head_dim", 128))) +
                    "), priced as the config's full attention (" + attention_text(m) + "): " +
                    params_text(gated_deltanet_params(c)) + " parameters a layer priced as " + params_text(attention) +
                    ", their FLOPs and activations as softmax attention's (quadratic in the sequence, theirs linear)"});
    } else if (kind == "sliding_attention") {
      out.push_back({key, key + ": " + count(k) + of + " use sliding-window attention (window " +
                              (c.contains("sliding_window") ? json_excerpt(c["sliding_window"]) : std::string("?")) +
                              "), priced as full attention over the whole sequence"});
    } else {
      out.push_back({key, key + ": " + count(k) + of + " are '" + kind + "', priced as full attention (" +
                              attention_text(m) + ")"});
    }
  }
  // Qwen3-Next / Qwen3.5 gated attention: q_proj yields the queries and a gate of the same width.
  const bool gate = c.contains("attn_output_gate") ? c["attn_output_gate"] == true : type.rfind("qwen3_next", 0) == 0;
  if (gate) {
    const std::int64_t full = kinds.empty() ? layers : n["full_attention"] + n["attention"];
    const double extra = num(m, "hidden", 0) * num(m, "heads", 0) *
                         num(m, "head_dim", num(m, "heads", 0) > 0 ? num(m, "hidden", 0) / num(m, "heads", 1) : 0);
    const bool stated = c.contains("attn_output_gate");
    out.push_back({stated ? "attn_output_gate" : "model_type",
                   (stated ? std::string("attn_output_gate") : "model_type " + type) + ": the output gate of the " +
                       count(full) +
                       " attention layers (q_proj twice as wide, " + params_text(extra) +
                       " parameters a layer) is not priced"});
  }
}

// Nemotron-H: blocks of one mixer each. planck's layer is attention + MLP, so each MLP (or MoE)
// block becomes a layer and the mixers are priced as that layer's attention.
Status read_block_pattern(const nlohmann::json& c, const std::string& type, nlohmann::json& m,
                          std::vector<HfUnmodelled>& out) {
  std::string pattern, key;
  if (c.contains("hybrid_override_pattern") && c["hybrid_override_pattern"].is_string()) {
    key = "hybrid_override_pattern";
    pattern = c[key].get<std::string>();
  } else if (c.contains("layers_block_type") && c["layers_block_type"].is_array()) {
    key = "layers_block_type";
    static const std::map<std::string, char> kChar = {{"mamba", 'M'}, {"attention", '*'}, {"mlp", '-'}, {"moe", 'E'}};
    for (const nlohmann::json& b : c[key]) {
      const auto it = b.is_string() ? kChar.find(b.get<std::string>()) : kChar.end();
      pattern += it == kChar.end() ? '?' : it->second;
    }
  } else {
    return Status::ok();
  }
  std::map<char, std::int64_t> n;
  for (char ch : pattern) ++n[ch];
  const std::int64_t mlp = n['-'] + n['E'], mixers = n['M'] + n['*'];
  if (mlp == 0 || n['?'] > 0 || mlp + mixers != static_cast<std::int64_t>(pattern.size())) {
    return Status::error("Hugging Face config (model_type " + type + "): " + key + " " +
                         json_excerpt(c[key]) +
                         " has blocks planck cannot map (it knows M, *, - and E, and needs at least one MLP block)");
  }
  m["layers"] = mlp;
  m["gated_mlp"] = false;  // NemotronHMLP and its experts: down_proj(act(up_proj(x))), no gate
  if (n['E'] == 0) {
    for (const char* k : {"experts", "experts_per_token", "moe_ffn_hidden", "shared_experts", "expert_groups",
                          "expert_groups_per_token"})
      m.erase(k);
  } else if (n['-'] > 0) {
    m["dense_layers"] = n['-'];
  }
  const double attention = priced_attention(m);
  const double real = static_cast<double>(n['M']) * mamba2_params(c) + static_cast<double>(n['*']) * attention;
  out.push_back({key, key + ": " + count(static_cast<std::int64_t>(pattern.size())) + " blocks of one mixer or MLP each (" +
                          count(n['M']) + " Mamba-2, " + count(n['*']) + " attention, " + count(n['-']) + " MLP, " +
                          count(n['E']) + " MoE): planck prices " + count(mlp) +
                          " transformer layers, each an MLP block with attention (" + attention_text(m) +
                          ") standing for a mixer: the config's " + count(mixers) + " mixers hold " +
                          params_text(real) + " parameters (a Mamba-2 mixer " + params_text(mamba2_params(c)) +
                          "), priced as " + count(mlp) + " attentions of " + params_text(attention) +
                          "; Mamba-2's FLOPs and activations are priced as attention's"});
  return Status::ok();
}

}  // namespace

double gated_deltanet_params(const nlohmann::json& c) {
  const double h = num(c, "hidden_size", 0);
  const double key = num(c, "linear_num_key_heads", 16) * num(c, "linear_key_head_dim", 128);
  const double nv = num(c, "linear_num_value_heads", 32), dv = num(c, "linear_value_head_dim", 128);
  const double value = nv * dv, kernel = num(c, "linear_conv_kernel_dim", 4);
  // in_proj_qkvz h -> 2 key + 2 value, in_proj_ba h -> 2 nv, conv1d over q, k, v (no bias),
  // dt_bias and A_log per value head, the gated norm over a value head, out_proj value -> h.
  return h * (2 * key + 2 * value) + h * 2 * nv + (2 * key + value) * kernel + 2 * nv + dv + value * h;
}

double mamba2_params(const nlohmann::json& c) {
  const double h = num(c, "hidden_size", 0);
  const double heads = num(c, "mamba_num_heads", 0), inner = heads * num(c, "mamba_head_dim", 64);
  const double conv = inner + 2 * num(c, "n_groups", 1) * num(c, "ssm_state_size", 128);
  const double conv_bias = c.value("use_conv_bias", true) ? conv : 0;
  // in_proj h -> inner (gate) + conv (x, B, C) + heads (dt); conv1d; dt_bias, A_log, D; norm; out_proj.
  return h * (inner + conv + heads) + conv * num(c, "conv_kernel", 4) + conv_bias + 3 * heads + inner + inner * h;
}

Status read_hf_layers(const nlohmann::json& config, const nlohmann::json& c, const std::string& type,
                      nlohmann::json& m, std::vector<HfUnmodelled>& unmodelled) {
  if (auto st = read_block_pattern(c, type, m, unmodelled); !st) return st;
  read_layer_types(c, type, m, unmodelled);
  for (const char* key : {"mtp_num_hidden_layers", "num_nextn_predict_layers"}) {
    const double mtp = num(c, key, 0);
    if (mtp > 0) {
      unmodelled.push_back({key, std::string(key) + ": " + count(static_cast<std::int64_t>(mtp)) +
                                     " multi-token-prediction layer(s) after the model are not priced"});
    }
  }
  if (config.contains("vision_config") && config["vision_config"].is_object()) {
    const nlohmann::json& v = config["vision_config"];
    unmodelled.push_back({"vision_config", "vision_config: the vision encoder (" +
                                               count(static_cast<std::int64_t>(num(v, "depth", num(v, "num_hidden_layers", 0)))) +
                                               " blocks of hidden " +
                                               count(static_cast<std::int64_t>(num(v, "hidden_size", 0))) +
                                               ") is not in the model; only the text model is priced"});
  }
  return Status::ok();
}

}  // namespace planck::core
