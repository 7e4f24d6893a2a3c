// GPT-NeoX model sizes, recompute, optimizer and the settings planck does not price
// (import/neox/reader.h). EleutherAI/gpt-neox @ea7aefd: megatron/model/transformer.py:97-143
// (ParallelMLP's width), megatron/model/activations.py:26-45 (gated activations),
// megatron/neox_arguments/neox_args.py (defaults, cited at each use), megatron/training.py:998-1030
// (optimizers).

#include <string>
#include <vector>

#include "core/plan/plan.h"
#include "core/plan/presets.h"
#include "import/neox/reader.h"

namespace planck::import::neox {

namespace {

// ParallelMLP (transformer.py:117-143): intermediate_size, else expansion_factor x h, else 4h;
// a gated activation takes 2/3 of it for the two halves of linear1; linear1's width is rounded
// up to 2 x mlp_multiple_of, each half to mlp_multiple_of. Returns the width of one matrix.
std::int64_t neox_ffn(std::int64_t hidden, std::optional<std::int64_t> inter, std::optional<double> factor,
                      bool gated, std::int64_t multiple) {
  std::int64_t ffn = inter ? *inter : factor ? static_cast<std::int64_t>(*factor * static_cast<double>(hidden))
                                             : 4 * hidden;
  std::int64_t in = ffn;
  if (gated) {
    ffn = static_cast<std::int64_t>(static_cast<double>(ffn) * 2 / 3);
    in = ffn / 2;
  }
  ffn = 2 * multiple * ((ffn + 2 * multiple - 1) / (2 * multiple));
  in = multiple * ((in + multiple - 1) / multiple);
  return gated ? in : ffn;
}

core::Status neox_recompute(NeoxKeys& k, PlanBuilder& b, std::int64_t mp, nlohmann::ordered_json& t) {
  PLANCK_IMPORT_TRY(ckpt, k.boolean("checkpoint_activations", false));  // neox_args.py:1399
  PLANCK_IMPORT_TRY(every, k.integer("checkpoint_num_layers"));        // :1404, 1
  PLANCK_IMPORT_TRY(partition, k.boolean("partition_activations", false));  // :1435
  PLANCK_IMPORT_TRY(in_cpu, k.boolean("checkpoint_in_cpu", false));         // :1420
  t["activation_checkpointing"] = ckpt ? "full" : "none";
  b.locate("/training/activation_checkpointing", k.line("checkpoint_activations"));
  if (!ckpt) return core::Status::ok();
  b.note("checkpoint_activations: every transformer layer recomputed in the backward (full)");
  if (every.value_or(1) > 1) {
    b.unpriced_saving("checkpoint_num_layers " + str(*every), k.line("checkpoint_num_layers"),
                      "priced as one checkpoint per layer; NeoX keeps one input per " + str(*every) +
                          " layers and recomputes them together");
  }
  if (partition && mp > 1) {
    b.unpriced_saving("partition_activations", k.line("partition_activations"),
                      "the checkpointed layer inputs are priced whole on every model-parallel rank; DeepSpeed "
                      "splits them over the " + str(mp) + " ranks");
  } else if (partition) {
    b.note("partition_activations: no effect with model_parallel_size 1");
  }
  if (in_cpu) {
    b.unpriced_saving("checkpoint_in_cpu", k.line("checkpoint_in_cpu"),
                      "the checkpointed layer inputs are priced in GPU memory; DeepSpeed moves them to the host");
  }
  return core::Status::ok();
}

core::Status neox_optimizer(NeoxKeys& k, PlanBuilder& b, nlohmann::ordered_json& t) {
  const YAML::Node opt = k.get("optimizer");
  std::string type = "adam";  // OPT_DEFAULT (arguments.py:1054-1058)
  if (opt.IsMap() && opt["type"].IsDefined() && opt["type"].IsScalar()) type = neox_lower(opt["type"].Scalar());
  if (type == "adam" || type == "cpu_adam" || type == "cpu_torch_adam") {
    t["optimizer"] = "adam";
  } else if (type == "sgd" || type == "lion") {
    t["optimizer"] = type;
  } else if (type == "onebitadam") {
    t["optimizer"] = "onebit_adam";
  } else {
    t["optimizer"] = "adam";
    b.unmodelled("optimizer.type " + type, k.line("optimizer"), "priced as Adam's two fp32 states a parameter");
  }
  if (type == "cpu_adam" || type == "cpu_torch_adam") {
    b.unmodelled("optimizer.type " + type, k.line("optimizer"),
                 "the optimizer step runs on the host (training.py:1002-1013); priced on the GPU");
  }
  return core::Status::ok();
}

}  // namespace

core::Status read_neox_model(NeoxKeys& k, PlanBuilder& b, std::int64_t mp, nlohmann::ordered_json& t) {
  // attention_config: [[["flash"], N], ...] (arguments.py:1090-1101); absent: "global" on every layer.
  const YAML::Node attn = k.get("attention_config");
  std::vector<std::string> kinds;
  if (attn.IsSequence()) {
    for (const auto& item : attn) {
      if (!item.IsSequence() || item.size() < 1 || !item[0].IsSequence()) continue;
      for (const auto& kind : item[0]) {
        if (kind.IsScalar()) kinds.push_back(kind.Scalar());
      }
    }
  }
  if (kinds.empty()) kinds.push_back("global");
  bool all_flash = true;
  for (const std::string& kind : kinds) {
    if (kind != "flash") all_flash = false;
    if (kind != "flash" && kind != "global") {
      b.finding("model-unmodelled-layers", k.line("attention_config"),
                "attention_config layer type '" + kind + "' is priced as dense global attention");
    }
  }
  // "global" is NeoX's own attention (scores materialised, softmax fused); "flash" flash-attn.
  t["attention"] = all_flash ? "flash" : "standard";
  b.locate("/training/attention", k.line("attention_config"));
  if (auto st = neox_recompute(k, b, mp, t); !st) return st;
  if (auto st = neox_optimizer(k, b, t); !st) return st;
  PLANCK_IMPORT_TRY(layers, k.integer("num_layers"));
  PLANCK_IMPORT_TRY(hidden, k.integer("hidden_size"));
  PLANCK_IMPORT_TRY(heads, k.integer("num_attention_heads"));
  PLANCK_IMPORT_TRY(kv, k.integer("num_kv_heads"));  // neox_args.py:139: None = heads
  PLANCK_IMPORT_TRY(inter, k.integer("intermediate_size"));
  PLANCK_IMPORT_TRY(factor, k.real("expansion_factor"));
  PLANCK_IMPORT_TRY(multiple, k.integer("mlp_multiple_of"));  // neox_args.py:122: 1
  PLANCK_IMPORT_TRY(act, k.string("activation"));             // :295: gelu
  PLANCK_IMPORT_TRY(untied, k.boolean("no_weight_tying", false));  // :229
  PLANCK_IMPORT_TRY(pos, k.string("pos_emb"));                     // :207: learned
  PLANCK_IMPORT_TRY(max_pos, k.integer("max_position_embeddings"));
  PLANCK_IMPORT_TRY(norm, k.string("norm"));  // :165: layernorm
  PLANCK_IMPORT_TRY(attn_bias, k.boolean("use_bias_in_attn_linear", true));  // :452
  PLANCK_IMPORT_TRY(mlp_bias, k.boolean("use_bias_in_mlp", true));           // :456
  PLANCK_IMPORT_TRY(padded, k.integer("padded_vocab_size"));
  PLANCK_IMPORT_TRY(divisible, k.integer("make_vocab_size_divisible_by"));  // :290: 128
  k.mark("tokenizer_type");
  if (!layers || !hidden || !heads || *layers < 1 || *hidden < 1 || *heads < 1) {
    b.warn("num_layers, hidden_size and num_attention_heads are not all given: model left out (add --model)");
    return core::Status::ok();
  }
  const std::string a = act.value_or("gelu");
  const bool gated = a == "geglu" || a == "reglu" || a == "bilinear" || a == "swiglu" || a == "glu";
  const std::int64_t m = multiple.value_or(1) >= 1 ? multiple.value_or(1) : 1;
  core::ModelSpec spec;
  spec.name = "custom";
  spec.layers = *layers, spec.hidden = *hidden, spec.heads = *heads, spec.kv_heads = kv.value_or(*heads);
  spec.ffn_hidden = neox_ffn(*hidden, inter, factor, gated, m);
  spec.gated_mlp = gated;
  spec.tied_embeddings = !untied;
  spec.biases = attn_bias || mlp_bias;
  const std::string n = norm.value_or("layernorm");
  spec.layer_norm = n == "layernorm" || n == "te_layernorm" || n == "non_parametric_layernorm";
  const std::string p = pos.value_or("learned");
  if (p == "learned") spec.position_embeddings = max_pos.value_or(0);
  b.note("MLP width " + str(spec.ffn_hidden) + (gated ? " a half of linear1 (gated " + a + ")" : std::string()) +
         " (transformer.py:117-143, mlp_multiple_of " + str(m) + ")");
  std::optional<std::int64_t> vocab = padded;
  const std::int64_t multiple_v = checked_mul(divisible.value_or(128), mp).value_or(0);
  PLANCK_IMPORT_TRY(tok, neox_tokenizer_vocab(k, b.path()));
  if (!vocab && tok) {
    vocab = neox_padded_vocab(tok->size, multiple_v);
    if (vocab) {
      b.note("vocab " + str(*vocab) + ": " + tok->how + ", padded to a multiple of make_vocab_size_divisible_by x "
             "model_parallel_size = " + str(multiple_v) + " (tokenizer.py:72-86)");
      b.locate("/model/vocab", k.line(k.has("vocab_file") ? "vocab_file" : "tokenizer_type"));
    }
  }
  if (!vocab) {
    // The vocabulary is the tokenizer's (vocab_file), padded to make_vocab_size_divisible_by x mp.
    auto preset = vocab_preset_or_warn(b, spec, "padded_vocab_size", "add --model");
    if (!preset) return core::Status::ok();
    vocab = neox_padded_vocab(preset->vocab, multiple_v);
    if (!vocab) {
      return b.error(k.line("make_vocab_size_divisible_by"), "make_vocab_size_divisible_by must be at least 1");
    }
    b.unmodelled(k.has("tokenizer_type") ? "tokenizer_type" : "the tokenizer (no padded_vocab_size)",
                 k.line("tokenizer_type"),
                 "vocab " + str(*vocab) + " guessed from preset " + preset->name +
                     ", which has the same layers, hidden size and heads (pass --model)");
  }
  spec.vocab = *vocab;
  b.set_model(spec, "GPT-NeoX keys");
  b.locate("/model", k.line("num_layers"));
  return core::Status::ok();
}

core::Status read_neox_unpriced(NeoxKeys& k, PlanBuilder& b, std::int64_t mp) {
  (void)mp;
  PLANCK_IMPORT_TRY(experts, k.integer("moe_num_experts"));  // neox_args.py:1615: 1
  if (experts.value_or(1) > 1) {
    b.unmodelled("moe_num_experts " + str(*experts), k.line("moe_num_experts"),
                 "priced as a dense model: the experts' weights, routing and all-to-alls are left out");
  }
  PLANCK_IMPORT_TRY(unique, k.integer("num_unique_layers"));
  if (unique) {
    b.unmodelled("num_unique_layers " + str(*unique), k.line("num_unique_layers"),
                 "priced with a weight per layer; NeoX shares " + str(*unique) + " layers' weights");
  }
  PLANCK_IMPORT_TRY(curriculum_seq, k.integer("curriculum_seqlen"));
  const YAML::Node curriculum = k.get("curriculum_learning");
  const bool curriculum_on = curriculum.IsMap() && curriculum["enabled"].IsDefined() &&
                             curriculum["enabled"].IsScalar() && curriculum["enabled"].Scalar() == "true";
  if (curriculum_seq.value_or(0) > 0 || curriculum_on) {
    b.unmodelled("curriculum_learning", k.line("curriculum_learning"),
                 "priced at seq_length throughout; the curriculum shortens the early steps");
  }
  for (const char* key : {"zero_optimization", "fp16", "bf16", "data_types"}) k.mark(key);
  return core::Status::ok();
}

}  // namespace planck::import::neox
