// epfLLM/Megatron-LLM launches (the EPFL fork of Megatron-LM behind Meditron: finetune.py, underscore
// flags, Llama / Falcon / Mistral shapes). Its argparse (megatron/arguments.py @806a833) spells every
// flag with underscores and its model flags differ from Megatron-LM's, so its launches are checked
// against its own flag list (epfllm_flags.h) and its model flags read as the upstream flags that mean
// the same (docs/import.md "epfLLM/Megatron-LLM").

#include <algorithm>
#include <iterator>
#include <string>

#include "import/megatron/deepspeed_fork.h"
#include "import/megatron/epfllm_flags.h"

namespace planck::import {
namespace {

// Flags only epfLLM's arguments.py defines (none of Megatron-LM's, microsoft's or BLOOM's forks):
// :425 num_attention_heads_kv, :447 use_rms_norm, :450 use_post_ln, :467 rope_theta, :469-479
// parallel_attn, parallel_layernorm, no_tie_embed_logits, sliding_window_size, and its data and
// logging flags.
const char* const kEpflOnly[] = {"use-rms-norm",     "no-tie-embed-logits", "num-attention-heads-kv",
                                 "parallel-attn",    "rope-theta",          "scalar-loss-mask",
                                 "use-post-ln",      "parallel-layernorm",  "vocab-extra-ids-list",
                                 "lima-dropout",     "wandb-logger",        "sliding-window-size"};

std::string epfllm_sign(const MegatronLaunch& launch) {
  for (const auto& entry : launch.flags) {  // not a structured binding: clang 14 cannot capture one
    const std::string& name = entry.first;
    if (std::any_of(std::begin(kEpflOnly), std::end(kEpflOnly), [&](const char* n) { return name == n; })) {
      return "--" + entry.second.written;
    }
  }
  return "";
}

}  // namespace

// Adds `to` (with `value`, or bare) to the launch as a flag the upstream readers take, at `from`'s line
// (the launch's when `from` is a default the launch does not write).
void add_renamed_flag(DeepSpeedFork& fork, MegatronLaunch& launch, const std::string& from, const std::string& to,
                      const std::string& value) {
  MegatronFlag flag;
  flag.line = launch.flags.count(from) ? launch.flags.at(from).line : launch.line;
  flag.value = value;
  flag.has_value = !value.empty();
  flag.written = to;
  launch.flags[to] = flag;
  fork.renamed.emplace_back(from, to);
}

bool runs_epfllm_fork(const MegatronLaunch& launch) { return !epfllm_sign(launch).empty(); }

std::string epfllm_spelling(const std::string& name) {
  for (std::string n : kEpflLlmFlags) {
    std::string d = n;
    std::replace(d.begin(), d.end(), '_', '-');
    if (d == name) return n;
  }
  return "";
}

const std::vector<std::string>& epfllm_flags() {
  static const std::vector<std::string> v = [] {
    std::vector<std::string> out;
    for (std::string n : kEpflLlmFlags) {
      std::replace(n.begin(), n.end(), '_', '-');
      out.push_back(n);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }();
  return v;
}

void rename_epfllm_flags(DeepSpeedFork& fork, MegatronLaunch& launch, PlanBuilder& b) {
  b.note("an epfLLM/Megatron-LLM launch (" + epfllm_sign(launch) +
         "): flags checked against its megatron/arguments.py @806a833, its model flags read as Megatron-LM's");
  auto has = [&](const char* name) { return launch.flags.count(name) > 0; };
  // :425, :240-241: kv heads, the heads when absent; upstream's --group-query-attention --num-query-groups.
  if (has("num-attention-heads-kv")) {
    const std::string kv = launch.flags.at("num-attention-heads-kv").value;
    add_renamed_flag(fork, launch, "num-attention-heads-kv", "num-query-groups", kv);
    add_renamed_flag(fork, launch, "num-attention-heads-kv", "group-query-attention", "");
  }
  if (has("use-rms-norm")) add_renamed_flag(fork, launch, "use-rms-norm", "normalization", "RMSNorm");  // :447
  // :475 tie_embed_logits defaults to true; --no_tie_embed_logits unties them.
  if (has("no-tie-embed-logits")) {
    add_renamed_flag(fork, launch, "no-tie-embed-logits", "untie-embeddings-and-output-weights", "");
  }
  // :444 --use_bias is store_true: without it the linears have no biases (upstream's default is the reverse).
  if (!has("use-bias") && !has("disable-bias-linear")) {
    add_renamed_flag(fork, launch, "use-bias", "disable-bias-linear", "");
    b.note("no --use_bias: epfLLM's linears have no biases (arguments.py:444, store_true)");
  }
  // :384 --transformer_impl defaults to local: the fork's own ParallelAttention, whose
  // --use_flash_attn runs flash-attn's kernel and otherwise materialises the scores.
  if (!has("transformer-impl")) add_renamed_flag(fork, launch, "transformer-impl", "transformer-impl", "local");
  // :457 geglu | liglu | reglu | swiglu (model/glu_activations.py:44-49): a gated MLP, three matrices
  // of hidden x ffn whatever the gate's function; the ffn defaults to 4 x hidden (:233-234), not
  // upstream's 2/3 of it for --swiglu.
  if (has("glu-activation")) {
    const MegatronFlag glu = launch.flags.at("glu-activation");
    add_renamed_flag(fork, launch, "glu-activation", "swiglu", "");
    launch.flags.erase("glu-activation");  // model.cc reads it as BLOOM's fork's, with biases
    if (glu.value != "swiglu") b.note("--glu_activation " + glu.value + ": a gated MLP priced as swiglu's shapes");
    if (!has("ffn-hidden-size") && has("hidden-size")) {
      const std::string h = launch.flags.at("hidden-size").value;
      const long long hidden = std::strtoll(h.c_str(), nullptr, 10);
      if (hidden > 0) add_renamed_flag(fork, launch, "hidden-size", "ffn-hidden-size", std::to_string(4 * hidden));
    }
  }
  // :461 PositionEmbeddingType absolute (the default, a learned table) | rotary.
  if (auto it = launch.flags.find("position-embedding-type"); it != launch.flags.end()) {
    if (it->second.value == "absolute") it->second.value = "learned_absolute";
    if (it->second.value == "rotary") it->second.value = "rope";
  }
  // Shapes planck does not build: said, priced as the standard pre-LN layer.
  if (has("parallel-attn")) {
    b.unmodelled("--parallel_attn", launch.flags.at("parallel-attn").line,
                 "Falcon's attention and MLP side by side from one layer norm; priced as the sequential layer, "
                 "whose GEMMs are the same");
  }
  if (has("use-post-ln")) {
    b.unmodelled("--use_post_ln", launch.flags.at("use-post-ln").line, "priced as the pre-LN layer (same GEMMs)");
  }
  if (has("sliding-window-size")) {
    b.unmodelled("--sliding_window_size " + launch.flags.at("sliding-window-size").value,
                 launch.flags.at("sliding-window-size").line,
                 "Mistral's sliding-window attention; attention priced over the whole sequence");
  }
}

}  // namespace planck::import
