// EleutherAI/gpt-neox configs: recognised, and refused until planck reads them.
//
// A GPT-NeoX run is `deepy.py train.py a.yml b.yml ...`: YAML files (most written as JSON with #
// comments) whose top-level keys are NeoXArgs fields (megatron/neox_arguments/neox_args.py) next to
// DeepSpeed's own (deepspeed_args.py), merged into one dict; a key may be spelt with dashes, which
// NeoX turns into underscores (megatron/neox_arguments/arguments.py:242-253 @ea7aefd). Read as a
// DeepSpeed JSON it gave dozens of false unknown-key warnings and dropped pipe_parallel_size and
// model_parallel_size, so the layout was wrong; planck refuses it instead (config-unfollowed).

#include <string>
#include <string_view>

#include "import/formats/yaml_omegaconf.h"
#include "import/importer.h"
#include "import/plan_builder.h"

namespace planck::import {

namespace {

std::string neox_key(std::string key) {
  for (char& c : key) {
    if (c == '-') c = '_';
  }
  return key;
}

// The top-level key that marks a GPT-NeoX config, with its line, or "" when none does: NeoX's
// parallelism keys (neox_args.py:60, :65; DeepSpeed and planck's other formats have neither), or
// the model's three sizes with a NeoX training key beside them (a Hugging Face config.json has the
// sizes alone).
struct NeoxMark {
  std::string key;
  int line = 0;
};

NeoxMark neox_mark(std::string_view text) {
  bool candidate = false;
  for (const char* word : {"parallel_size", "parallel-size", "num_attention_heads", "num-attention-heads"}) {
    if (text.find(word) != std::string_view::npos) candidate = true;
  }
  if (!candidate) return {};
  PlanBuilder probe("neox", "");
  auto root = load_omegaconf_yaml(std::string(text), probe);
  if (!root || !root->IsMap()) return {};
  NeoxMark parallel, size;
  int sizes = 0;
  bool training = false;
  for (const auto& kv : *root) {
    if (!kv.first.IsScalar()) continue;
    const std::string key = neox_key(kv.first.Scalar());
    const int line = kv.first.Mark().line >= 0 ? kv.first.Mark().line + 1 : 0;
    if ((key == "pipe_parallel_size" || key == "model_parallel_size") && parallel.key.empty()) {
      parallel = {kv.first.Scalar(), line};
    }
    if (key == "num_layers" || key == "hidden_size" || key == "num_attention_heads") {
      if (size.key.empty()) size = {kv.first.Scalar(), line};
      ++sizes;
    }
    for (const char* k : {"train_micro_batch_size_per_gpu", "zero_optimization", "pos_emb", "attention_config",
                          "no_weight_tying", "gpt_j_residual", "train_iters", "seq_length"}) {
      if (key == k) training = true;
    }
  }
  if (!parallel.key.empty()) return parallel;
  if (sizes == 3 && training) return size;
  return {};
}

}  // namespace

bool is_neox_config(std::string_view text) { return !neox_mark(text).key.empty(); }

core::Result<ImportResult> import_neox(std::string_view text, const std::string& path, const ImportOptions&) {
  PlanBuilder b("neox", path);
  const NeoxMark mark = neox_mark(text);
  if (mark.key.empty()) {
    // Not one planck recognises: parse it for the YAML error, else say what is missing.
    if (auto root = load_omegaconf_yaml(std::string(text), b); !root) return root.status();
    return b.error(0, "not a GPT-NeoX config: no top-level pipe_parallel_size or model_parallel_size, nor "
                      "num_layers, hidden_size and num_attention_heads with NeoX's training keys");
  }
  ImportResult result = b.finish();
  result.unfollowed.push_back({path, mark.line, mark.key,
                               "a GPT-NeoX config (NeoXArgs keys, megatron/neox_arguments/neox_args.py), which "
                               "planck does not read yet; write a planck plan (docs/plan-format.md) with its "
                               "layout, model and batch",
                               "the whole config"});
  return result;
}

}  // namespace planck::import
