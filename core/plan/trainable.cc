#include "core/plan/trainable.h"

namespace planck::core {

double lora_layer_params(const ModelSpec& m, bool moe_layer, std::int64_t rank) {
  const double r = static_cast<double>(rank), h = static_cast<double>(m.hidden);
  const double d = static_cast<double>(m.effective_head_dim());
  const double heads = static_cast<double>(m.heads);
  const double kv = static_cast<double>(m.kv_heads > 0 ? m.kv_heads : m.heads);
  // q: h -> heads x d, k and v: h -> kv x d, o: heads x d -> h.
  double p = r * (h + heads * d) + 2 * r * (h + kv * d) + r * (heads * d + h);
  double ffn = static_cast<double>(m.ffn_hidden);
  if (moe_layer) {
    const double moe_ffn = static_cast<double>(m.moe_ffn_hidden > 0 ? m.moe_ffn_hidden : m.ffn_hidden);
    ffn = moe_ffn * static_cast<double>(m.shared_experts);
  }
  if (ffn > 0) p += (m.gated_mlp ? 3 : 2) * r * (h + ffn);
  return p;
}

}  // namespace planck::core
