// Megatron-LM model flags beyond the shape (model.cc): multi-latent attention, group-
// limited routing, the MoE layer pattern, the attention backend, the normalization, learned
// positions; and the layers planck prices as something else (MTP, sliding-window attention),
// said as model-unmodelled-layers. Defaults from megatron/core/transformer/transformer_config.py
// (MLATransformerConfig) and megatron/training/arguments.py at d98e8a6.

#include <cctype>
#include <string>
#include <vector>

#include "import/megatron/args.h"

namespace planck::import {

namespace {


// Megatron's --moe-layer-freq as a Python list expression ("[0]*3+[1]*58", "([0]+[1]*3)*12",
// "[1,1,0,1]"): the 0/1 per layer, or empty when it is another form.
struct PatternParser {
  const std::string& s;
  std::size_t i = 0;
  bool ok = true;

  void space() {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  }
  std::int64_t number() {
    space();
    std::int64_t n = 0;
    const std::size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && n < (1 << 20)) n = n * 10 + (s[i++] - '0');
    ok = ok && i > start;
    return n;
  }
  std::vector<int> term() {
    space();
    std::vector<int> out;
    if (i < s.size() && s[i] == '(') {
      ++i;
      out = sum();
      space();
      ok = ok && i < s.size() && s[i++] == ')';
    } else if (i < s.size() && s[i] == '[') {
      ++i;
      while (ok) {
        out.push_back(static_cast<int>(number()));
        space();
        if (i < s.size() && s[i] == ',') {
          ++i;
          continue;
        }
        ok = ok && i < s.size() && s[i++] == ']';
        break;
      }
    } else {
      ok = false;
    }
    space();
    if (ok && i < s.size() && s[i] == '*') {
      ++i;
      const std::int64_t times = number();
      std::vector<int> rep;
      for (std::int64_t k = 0; k < times && rep.size() < (1u << 16); ++k) rep.insert(rep.end(), out.begin(), out.end());
      out = rep;
    }
    return out;
  }
  std::vector<int> sum() {
    std::vector<int> out = term();
    space();
    while (ok && i < s.size() && s[i] == '+') {
      ++i;
      std::vector<int> more = term();
      out.insert(out.end(), more.begin(), more.end());
      space();
    }
    return out;
  }
};

// The pattern as dense_layers (leading 0s, then all 1s) or moe_layer_freq (a 1 every n-th layer).
void moe_layer_pattern(const MegatronFlags& f, const std::string& text, PlanBuilder& b, core::ModelSpec& m) {
  std::string body = text;
  if (body.size() >= 2 && (body.front() == '\'' || body.front() == '"') && body.back() == body.front())
    body = body.substr(1, body.size() - 2);
  PatternParser p{body};
  std::vector<int> layers = p.sum();
  p.space();
  const bool parsed = p.ok && p.i == body.size() && !layers.empty();
  const std::int64_t n = static_cast<std::int64_t>(layers.size());
  std::int64_t lead = 0;
  while (lead < n && layers[static_cast<std::size_t>(lead)] == 0) ++lead;
  bool tail_ones = true;
  for (std::int64_t k = lead; k < n; ++k) tail_ones = tail_ones && layers[static_cast<std::size_t>(k)] == 1;
  std::int64_t period = 0;
  for (std::int64_t q = 1; q <= n && period == 0; ++q) {
    bool every = n % q == 0;
    for (std::int64_t k = 0; k < n && every; ++k) every = layers[static_cast<std::size_t>(k)] == ((k + 1) % q == 0 ? 1 : 0);
    if (every) period = q;
  }
  if (parsed && n == m.layers && tail_ones && lead < n) {
    m.dense_layers = lead;
    b.note("--moe-layer-freq " + text + ": the first " + str(lead) + " layers dense, the other " + str(n - lead) +
           " MoE");
  } else if (parsed && n == m.layers && period > 0) {
    m.moe_layer_freq = period;
    b.note("--moe-layer-freq " + text + ": every " + str(period) + "-th layer MoE");
  } else {
    b.unmodelled("--moe-layer-freq " + text, f.line("moe-layer-freq"),
                 parsed && n != m.layers
                     ? "its " + str(n) + " entries do not match --num-layers " + str(m.layers) +
                           " (Megatron asserts); every layer counted as MoE"
                     : "a layer pattern planck cannot express (dense_layers / moe_layer_freq); every layer counted as "
                       "MoE");
  }
}

}  // namespace

core::Status read_model_details(const MegatronFlags& f, PlanBuilder& b, core::ModelSpec& m) {
  if (f.has("multi-latent-attention")) {
    // MLATransformerConfig: kv_lora_rank 512, qk_head_dim 128, qk_pos_emb_head_dim 64, v_head_dim
    // 128; --q-lora-rank's default None keeps q uncompressed.
    PLANCK_IMPORT_TRY(q, f.integer("q-lora-rank"));
    PLANCK_IMPORT_TRY(kv, f.integer("kv-lora-rank"));
    PLANCK_IMPORT_TRY(qk, f.integer("qk-head-dim"));
    PLANCK_IMPORT_TRY(rope, f.integer("qk-pos-emb-head-dim"));
    PLANCK_IMPORT_TRY(v, f.integer("v-head-dim"));
    m.q_lora_rank = q.value_or(0);
    m.kv_lora_rank = kv.value_or(512);
    m.qk_nope_head_dim = qk.value_or(128);
    m.qk_rope_head_dim = rope.value_or(64);
    m.v_head_dim = v.value_or(128);
    b.note("--multi-latent-attention: MLA with kv_lora_rank " + str(m.kv_lora_rank) + ", q_lora_rank " +
           str(m.q_lora_rank) + ", qk " + str(m.qk_nope_head_dim) + " + rope " + str(m.qk_rope_head_dim) + ", v " +
           str(m.v_head_dim));
  }
  // Group-limited routing: tokens pick experts inside --moe-router-group-topk of
  // --moe-router-num-groups groups (DeepSeek-V3's node-limited routing).
  PLANCK_IMPORT_TRY(groups, f.integer("moe-router-num-groups"));
  PLANCK_IMPORT_TRY(group_topk, f.integer("moe-router-group-topk"));
  if (m.is_moe() && groups && group_topk && *groups > 1 && *group_topk < *groups && m.experts % *groups == 0) {
    m.expert_groups = *groups;
    m.expert_groups_per_token = *group_topk;
  }
  if (m.is_moe()) {
    if (auto freq = f.string("moe-layer-freq")) {
      if (freq->find_first_not_of("0123456789") != std::string::npos) moe_layer_pattern(f, *freq, b, m);
    }
  }
  // --normalization RMSNorm | LayerNorm (Megatron's default); only an eager stack's pricing reads it.
  if (auto norm = f.string("normalization")) m.layer_norm = *norm != "RMSNorm";
  // Learned absolute positions (Megatron's default position_embedding_type) are a table of
  // --max-position-embeddings x hidden; rope and none have none.
  const std::string pos = f.string("position-embedding-type").value_or(f.has("use-rotary-position-embeddings") ? "rope"
                                                                                                               : "learned_absolute");
  if (pos == "learned_absolute" && !f.has("no-position-embedding")) {
    PLANCK_IMPORT_TRY(max_pos, f.integer("max-position-embeddings"));
    PLANCK_IMPORT_TRY(seq, f.integer("seq-length"));
    if (max_pos || seq) m.position_embeddings = max_pos ? *max_pos : *seq;
  }
  return core::Status::ok();
}

core::Status say_unpriced_layers(const MegatronFlags& f, PlanBuilder& b) {
  if (f.has("moe-shared-expert-overlap")) {
    b.unmodelled("--moe-shared-expert-overlap", f.line("moe-shared-expert-overlap"),
                 "the shared experts' compute is priced after the token dispatch, not overlapped with it");
  }
  // --spec MODULE FUNCTION: Megatron builds the layers from the spec that function returns
  // (gpt_builders.py:32-33@d98e8a6 `transformer_layer_spec = import_module(args.spec)`,
  // spec_utils.py:41-59), not from the flags. Megatron's own (megatron.*: the hybrid stack, the local
  // spec) are the layers its flags describe; a script's own (slime's `slime_plugins.models.qwen3_next
  // get_qwen3_next_spec`: gated delta-net layers) is code planck cannot read.
  if (const auto spec = f.strings("spec"); !spec.empty() && spec[0] != "local" && spec[0].rfind("megatron.", 0) != 0) {
    b.finding("model-unmodelled-layers", f.line("spec"),
              "--spec " + f.string("spec").value_or("") +
                  ": Megatron builds every layer from this module's spec, not from the flags; priced as the "
                  "standard transformer layer the flags describe");
  }
  if (auto window = f.string("window-size")) {
    b.finding("model-unmodelled-layers", f.line("window-size"),
              "--window-size " + *window +
                  (f.has("window-attn-skip-freq") ? " with --window-attn-skip-freq " +
                                                        f.string("window-attn-skip-freq").value_or("")
                                                  : std::string()) +
                  ": sliding-window attention layers priced as full attention over the whole sequence");
  }
  return core::Status::ok();
}

}  // namespace planck::import
