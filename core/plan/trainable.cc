#include "core/plan/trainable.h"

#include <algorithm>

namespace planck::core {

const std::vector<std::string>& lora_target_names() {
  static const std::vector<std::string> names = {"q", "k", "v", "o", "qkv", "kv", "gate", "up", "gate_up", "down"};
  return names;
}

double lora_layer_params(const ModelSpec& m, bool moe_layer, const Training& t) {
  const double r = static_cast<double>(t.lora_rank), h = static_cast<double>(m.hidden);
  const double d = static_cast<double>(m.effective_head_dim());
  const double q = static_cast<double>(m.heads) * d;
  const double kv = static_cast<double>(m.kv_heads > 0 ? m.kv_heads : m.heads) * d;
  double ffn = static_cast<double>(m.ffn_hidden);
  if (moe_layer) {
    const double moe_ffn = static_cast<double>(m.moe_ffn_hidden > 0 ? m.moe_ffn_hidden : m.ffn_hidden);
    ffn = moe_ffn * static_cast<double>(m.shared_experts);
  }
  // (in, out) of each target; a fused matrix has one adapter over its concatenated outputs. A
  // GELU MLP has no gate: its fc1 (Megatron's linear_fc1) is the up projection alone.
  auto size = [&](const std::string& target) -> std::pair<double, double> {
    if (target == "q") return {h, q};
    if (target == "k" || target == "v") return {h, kv};
    if (target == "kv") return {h, 2 * kv};
    if (target == "qkv") return {h, q + 2 * kv};
    if (target == "o") return {q, h};
    if (ffn <= 0) return {0, 0};
    if (target == "gate") return m.gated_mlp ? std::pair{h, ffn} : std::pair{0.0, 0.0};
    if (target == "up") return {h, ffn};
    if (target == "gate_up") return {h, (m.gated_mlp ? 2 : 1) * ffn};
    if (target == "down") return {ffn, h};
    return {0, 0};
  };
  static const std::vector<std::string> every = {"q", "k", "v", "o", "gate", "up", "down"};
  double p = 0;
  for (const std::string& target : t.lora_targets.empty() ? every : t.lora_targets) {
    const auto [in, out] = size(target);
    if (in > 0 && out > 0) p += r * (in + out);
  }
  return p;
}

double lora_params(const ModelSpec& m, const Training& t, std::int64_t dense_layers, std::int64_t moe_layers,
                   std::int64_t tp) {
  if (t.lora_rank <= 0) return 0;
  return (static_cast<double>(dense_layers) * lora_layer_params(m, false, t) +
          static_cast<double>(moe_layers) * lora_layer_params(m, true, t)) /
         static_cast<double>(std::max<std::int64_t>(1, tp));
}

}  // namespace planck::core
