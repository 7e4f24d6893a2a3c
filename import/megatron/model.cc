// Megatron-LM model, batch, precision and pipeline flags -> plan "model", "training" and the
// pipeline keys of "parallelism". Defaults from megatron/training/arguments.py @d98e8a6.

#include <algorithm>
#include <stdexcept>
#include <string>

#include "import/megatron/args.h"
#include "import/plan_builder.h"
#include "core/plan/presets.h"

namespace planck::import {

namespace {

constexpr std::int64_t kGpt2Vocab = 50257;
constexpr std::int64_t kLlama2Vocab = 32000;

// Megatron's GPT2BPETokenizer: named, or implied by a --vocab-file/--merge-file pair and no other
// --tokenizer-type (the GPT-3 example scripts pass gpt2-vocab.json and gpt2-merges.txt).
bool gpt2_bpe(const MegatronFlags& f) {
  if (auto t = f.string("tokenizer-type")) return *t == "GPT2BPETokenizer";
  return f.has("vocab-file") && f.has("merge-file");
}

// arguments.py: ffn = 4h, or int(4h x 2/3 / 64) x 64 with --swiglu; kv heads = heads unless
// --group-query-attention (then --num-query-groups, default 1); embeddings tied unless
// --untie-embeddings-and-output-weights; vocab padded to a multiple of
// make_vocab_size_divisible_by (128) x tp (_vocab_size_with_padding).
core::Status read_model(const MegatronFlags& f, PlanBuilder& b, const MegatronDegrees& d,
                        std::optional<std::int64_t>* layers_out) {
  PLANCK_IMPORT_TRY(layers, f.integer("num-layers"));
  PLANCK_IMPORT_TRY(hidden, f.integer("hidden-size"));
  PLANCK_IMPORT_TRY(heads, f.integer("num-attention-heads"));
  PLANCK_IMPORT_TRY(ffn, f.integer("ffn-hidden-size"));
  PLANCK_IMPORT_TRY(groups, f.positive("num-query-groups", 1));
  PLANCK_IMPORT_TRY(kv_channels, f.integer("kv-channels"));
  PLANCK_IMPORT_TRY(vocab, f.integer("vocab-size"));
  PLANCK_IMPORT_TRY(divisible, f.positive("make-vocab-size-divisible-by", 128));
  PLANCK_IMPORT_TRY(experts, f.integer("num-experts"));
  PLANCK_IMPORT_TRY(topk, f.positive("moe-router-topk", 2));
  PLANCK_IMPORT_TRY(moe_ffn, f.integer("moe-ffn-hidden-size"));
  *layers_out = layers;
  if (auto st = say_unpriced_layers(f, b); !st) return st;
  // Megatron's hybrid models (--hybrid-layer-pattern, earlier --hybrid-override-pattern, "M-M*-"
  // with M = Mamba, * = attention, - = MLP): planck prices every layer as attention + MLP.
  for (const char* flag :
       {"hybrid-layer-pattern", "hybrid-override-pattern", "hybrid-attention-ratio", "is-hybrid-model"}) {
    if (!f.has(flag)) continue;
    b.finding("model-unmodelled-layers", f.line(flag),
              "--" + std::string(flag) + (f.string(flag) ? " " + *f.string(flag) : std::string()) +
                  (layers && hidden && heads ? ": Mamba (state-space) layers are priced as attention layers"
                                             : ": Mamba (state-space) layers are not modelled; the model is left out"));
    break;
  }
  if (!layers || !hidden || !heads) {
    b.warn("--num-layers, --hidden-size and --num-attention-heads are needed for a model; model left out");
    return core::Status::ok();
  }
  constexpr std::int64_t kMax = std::int64_t{1} << 32;
  for (auto [name, v] : {std::pair<const char*, std::optional<std::int64_t>>{"num-layers", layers},
                         {"hidden-size", hidden},
                         {"num-attention-heads", heads},
                         {"ffn-hidden-size", ffn},
                         {"kv-channels", kv_channels},
                         {"vocab-size", vocab},
                         {"num-experts", experts},
                         {"moe-ffn-hidden-size", moe_ffn}}) {
    if (v && (*v < 1 || *v > kMax)) {
      return b.error(f.line(name), "--" + std::string(name) + " " + str(*v) + " must be between 1 and 2^32");
    }
  }
  core::ModelSpec m;
  m.name = "custom";
  m.layers = *layers;
  m.hidden = *hidden;
  m.heads = *heads;
  m.ffn_hidden = ffn ? *ffn : f.has("swiglu") ? (4 * *hidden * 2 / 3) / 64 * 64 : 4 * *hidden;
  if (!ffn)
    b.note("ffn hidden size " + str(m.ffn_hidden) + " from Megatron's default" +
           (f.has("swiglu") ? " for --swiglu" : ""));
  m.kv_heads = f.has("group-query-attention") ? groups : *heads;
  if (kv_channels && *kv_channels * *heads != *hidden) m.head_dim = *kv_channels;
  m.tied_embeddings = !f.has("untie-embeddings-and-output-weights");
  // --swiglu and --quick-geglu (GPT-OSS) are both gated linear units: three matrices per MLP
  // (arguments.py sets gated_linear_unit for either); otherwise a GELU MLP with two.
  // The bigscience fork's --glu-activation geglu|liglu|reglu|swiglu is one too: dense_h_to_4h is
  // 2 x ffn wide, with its bias (bigscience-workshop/Megatron-DeepSpeed transformer.py:73-79@8387ae17).
  const auto glu = f.string("glu-activation");
  m.gated_mlp = f.has("swiglu") || f.has("quick-geglu") || glu;
  if (!m.gated_mlp) b.note("no --swiglu / --quick-geglu: a GELU MLP with 2 matrices (gated_mlp false)");
  if (f.has("quick-geglu")) b.note("--quick-geglu: a gated MLP (3 matrices), as --swiglu");
  if (glu) b.note("--glu-activation " + *glu + ": a gated MLP (3 matrices of hidden x ffn), with biases");
  if (!f.has("disable-bias-linear") && (!m.gated_mlp || glu)) m.biases = true;
  if (experts) {
    if (*experts % d.ep != 0) {
      return b.error(f.line("num-experts"), "--num-experts " + str(*experts) +
                                                " is not divisible by "
                                                "--expert-model-parallel-size " +
                                                str(d.ep) + " (Megatron asserts)");
    }
    m.experts = *experts;
    m.experts_per_token = topk;
    m.moe_ffn_hidden = moe_ffn.value_or(m.ffn_hidden);
    // --moe-shared-expert-intermediate-size is the total of all shared experts
    // (transformer_config.py); planck counts shared experts of the routed experts' size.
    PLANCK_IMPORT_TRY(shared, f.integer("moe-shared-expert-intermediate-size"));
    if (shared && *shared > 0) {
      m.shared_experts = std::max<std::int64_t>(1, *shared / m.moe_ffn_hidden);
      if (*shared % m.moe_ffn_hidden != 0) {
        b.note("--moe-shared-expert-intermediate-size " + str(*shared) + " is not a multiple of the expert size " +
               str(m.moe_ffn_hidden) + "; counted as " + str(m.shared_experts) + " shared experts");
      }
    }
    if (auto freq = f.string("moe-layer-freq"); freq && freq->find_first_not_of("0123456789") == std::string::npos) {
      try {
        const long long n = std::stoll(*freq);
        if (n >= 1) m.moe_layer_freq = n;
      } catch (const std::exception&) {  // out of range: the pattern reader says so
      }
    }
  }
  // --padded-vocab-size is the model's vocabulary as given: Megatron pads only a --vocab-size or
  // the tokenizer's size, and only when it is absent (megatron/training/argument_utils.py:474-480
  // vocab_size = padded_vocab_size with should_pad_vocab False; build_tokenizer.py:149-152).
  PLANCK_IMPORT_TRY(padded, f.integer("padded-vocab-size"));
  if (padded) {
    if (*padded < 1) return b.error(f.line("padded-vocab-size"), "--padded-vocab-size must be >= 1");
    m.vocab = *padded;
    b.locate("/model/vocab", f.line("padded-vocab-size"));
    b.note("--padded-vocab-size " + str(*padded) + ": the model's vocabulary, not padded further" +
           (vocab ? " (it wins over --vocab-size " + str(*vocab) + ")" : std::string()));
  }
  if (padded || (!vocab && gpt2_bpe(f))) {
    if (!padded) {
      // GPT2BPETokenizer's vocabulary is GPT-2's gpt2-vocab.json: 50257 tokens. Megatron pads it
      // to a multiple of make_vocab_size_divisible_by x tp (_vocab_size_with_padding); the plan
      // keeps the tokenizer's 50257 so that the shape can match a preset (gpt3-175b).
      m.vocab = kGpt2Vocab;
      const std::int64_t multiple = divisible * d.tp;
      const char* named = f.has("tokenizer-type") ? "--tokenizer-type GPT2BPETokenizer" : "--vocab-file + --merge-file";
      b.note("no --vocab-size: GPT-2 BPE tokenizer (" + std::string(named) +
             ") has 50257 tokens; Megatron pads them to " + str((kGpt2Vocab + multiple - 1) / multiple * multiple) +
             " (multiple of " + str(divisible) + " x tp " + str(d.tp) + ")");
    }
    if (auto st = read_model_details(f, b, m); !st) return st;
    b.set_model(m, "Megatron flags");
    return core::Status::ok();
  }
  if (!vocab && f.string("tokenizer-type").value_or("") == "Llama2Tokenizer") {
    // Llama2Tokenizer loads a SentencePiece model (build_tokenizer.py SP_TOKENIZERS); the one it is
    // named for is Llama 2's tokenizer.model, 32000 pieces (meta-llama/Llama-2-7b-hf config.json
    // vocab_size), which Mistral 7B and Mixtral keep. A shape-matched preset would give Llama 3's
    // 128256 to a Llama 2 70B or a Mixtral.
    vocab = kLlama2Vocab;
    b.unmodelled("--tokenizer-type Llama2Tokenizer", f.line("tokenizer-type"),
                 "no --vocab-size: vocab 32000 guessed from the tokenizer type (Llama 2's tokenizer.model; the "
                 "--tokenizer-model file itself is not read; pass --vocab-size or --model)");
  }
  if (!vocab) {
    // The tokenizer file sets the vocabulary; a preset of the same shape gives it instead.
    auto preset = vocab_preset_or_warn(b, m, "--vocab-size", "add --vocab-size");
    if (!preset) return core::Status::ok();
    vocab = preset->vocab;
    // A guess: the tokenizer may differ (Mistral-7B's 32000 would become Llama-3's 128256).
    const char* tok_flag = f.has("tokenizer-model") ? "tokenizer-model" : "tokenizer-type";
    b.unmodelled(f.has(tok_flag) ? "--" + std::string(tok_flag) + " " + f.string(tok_flag).value_or("")
                                 : std::string("the tokenizer (no --vocab-size)"),
                 f.line(tok_flag),
                 "no --vocab-size: vocab " + str(*vocab) + " guessed from preset " + preset->name +
                     ", which has the same layers, hidden size and heads (the tokenizer's own size is not read; "
                     "pass --vocab-size or --model)");
  }
  auto multiple = checked_mul(divisible, d.tp);
  if (!multiple) return b.error(f.line("make-vocab-size-divisible-by"), "vocab padding multiple overflows");
  m.vocab = (*vocab + *multiple - 1) / *multiple * *multiple;
  if (m.vocab != *vocab) {
    b.note("vocab " + str(*vocab) + " padded to " + str(m.vocab) + " (multiple of " + str(divisible) + " x tp " +
           str(d.tp) + ", arguments.py _vocab_size_with_padding)");
  }
  if (auto st = read_model_details(f, b, m); !st) return st;
  b.set_model(m, "Megatron flags");
  return core::Status::ok();
}

// Virtual pipeline: --num-layers-per-virtual-pipeline-stage L gives (layers / pp) / L chunks per
// rank; --num-virtual-stages-per-pipeline-rank gives it directly. Needs pp > 1 (RuntimeError).
core::Result<std::int64_t> virtual_stages(const MegatronFlags& f, PlanBuilder& b, const MegatronDegrees& d,
                                          std::optional<std::int64_t> layers) {
  PLANCK_IMPORT_TRY(from_layout, megatron_layout_chunks(f, b, d));
  if (from_layout) return *from_layout;
  PLANCK_IMPORT_TRY(per_stage, f.integer("num-layers-per-virtual-pipeline-stage"));
  PLANCK_IMPORT_TRY(direct, f.integer("num-virtual-stages-per-pipeline-rank"));
  if (!per_stage && !direct) return std::int64_t{1};
  const std::string flag = per_stage ? "num-layers-per-virtual-pipeline-stage" : "num-virtual-stages-per-pipeline-rank";
  const std::int64_t v = per_stage ? *per_stage : *direct;
  if (v < 1) return b.error(f.line(flag), "--" + flag + " " + str(v) + " must be >= 1");
  if (d.pp == 1) {
    return b.error(f.line(flag), "--" + flag +
                                     " needs --pipeline-model-parallel-size > 1 (Megatron raises "
                                     "RuntimeError for a virtual pipeline with pp 1)");
  }
  if (direct) return *direct;
  if (!layers) {
    b.warn("--num-layers-per-virtual-pipeline-stage without --num-layers: virtual stages unknown, 1 assumed");
    return std::int64_t{1};
  }
  // The embedding and loss count as layers under --account-for-*-in-pipeline-split
  // (megatron/training/arguments.py:962-975).
  const std::int64_t units = *layers + (f.has("account-for-embedding-in-pipeline-split") ? 1 : 0) +
                             (f.has("account-for-loss-in-pipeline-split") ? 1 : 0);
  const std::int64_t per_rank = units / d.pp;
  if (units % d.pp != 0 || per_rank % v != 0) {  // arguments.py:966-970@d98e8a6 asserts both
    return b.error(f.line(flag), "num_layers " + str(units) + " / pp " + str(d.pp) + " is not a multiple of " + str(v) +
                                     " layers per virtual stage: Megatron refuses it at start-up (arguments.py "
                                     "asserts \"number of layers per pipeline stage must be divisible number of "
                                     "layers per virtual pipeline stage\")");
  }
  const std::int64_t vpp = std::max<std::int64_t>(per_rank / v, 1);
  b.note("virtual pipeline: (" + str(units) + " layers / pp " + str(d.pp) + ") / " + str(v) + " = " + str(vpp) +
         " chunks per rank");
  return vpp;
}

// Activation recompute of every Megatron-LM generation (megatron/arguments.py history):
//   until 2021-08: --checkpoint-activations, every layer's input kept (full, uniform 1);
//   2021-08 (c1e0689) to 2022-04: --activations-checkpoint-method uniform|block with
//     --activations-checkpoint-num-layers (default 1); --checkpoint-activations = uniform;
//   since 2022-04 (cfd2e21): --recompute-granularity full|selective, --recompute-method,
//     --recompute-num-layers, --recompute-activations (= selective); --checkpoint-activations
//     makes today's Megatron exit; --recompute-modules (selective) picks what is recomputed.
// Megatron's selective granularity recomputes the attention core (QK^T, softmax, dropout, AV;
// Korthikanti et al. 2022 §4.2): planck's selective_attention.
core::Status read_recompute(const MegatronFlags& f, PlanBuilder& b, nlohmann::ordered_json& t) {
  std::optional<std::string> granularity = f.string("recompute-granularity");
  // --moe-layer-recompute (deprecated): Megatron makes the granularity selective and adds "moe" to the
  // recompute modules (default ["core_attn"]); with full granularity it raises ValueError
  // (megatron/core/transformer/transformer_config.py:1940-1941,2014-2025@d98e8a6).
  const bool moe_layer = f.has("moe-layer-recompute");
  if (moe_layer && granularity == "full") {
    return b.error(f.line("moe-layer-recompute"), "--moe-layer-recompute with --recompute-granularity full: Megatron "
                   "raises ValueError(\"Do not set --moe-layer-recompute with full recompute granularity.\")");
  }
  if (moe_layer && !granularity) granularity = "selective";
  std::optional<std::string> method = f.string("recompute-method");
  std::string num_flag = "recompute-num-layers";
  if (!granularity && f.has("activations-checkpoint-method")) {
    granularity = "full";
    method = f.string("activations-checkpoint-method");
    num_flag = "activations-checkpoint-num-layers";
    b.locate("/training/activation_checkpointing", f.line("activations-checkpoint-method"));
    b.note("--activations-checkpoint-method " + method.value_or("") +
           " (Megatron-LM 2021-08 to 2022-04): full recompute, --recompute-method " + method.value_or(""));
  } else if (!granularity && f.has("checkpoint-activations")) {
    granularity = "full";
    method = "uniform";
    num_flag = "checkpoint-num-layers";
    b.locate("/training/activation_checkpointing", f.line("checkpoint-activations"));
    // Until 2023-04-26 Megatron mapped the flag to full, uniform recompute (with a deprecation
    // message from 2022-04, cfd2e21); since 3e71ad9 (2023-04-26, megatron/arguments.py) it prints
    // "--checkpoint-activations is no longer valid" and exit()s. Read as the script's era meant it,
    // said as a warning: on a Megatron-LM of the last two years the run never starts.
    b.finding("import-warning", f.line("checkpoint-activations"),
              "--checkpoint-activations read as full recompute of every layer (Megatron-LM until 2023-04); "
              "Megatron-LM since 2023-04-26 (3e71ad9) exits on this flag: use --recompute-granularity full "
              "--recompute-method uniform");
  } else if (granularity) {
    b.locate("/training/activation_checkpointing", f.line("recompute-granularity"));
  }
  if (granularity == "full") {
    t["activation_checkpointing"] = "full";
    // block recomputes the first N layers of each pipeline chunk and keeps the rest; uniform
    // recomputes every layer, checkpointing the input of each group of N (transformer_block.py
    // _checkpointed_forward).
    std::optional<std::int64_t> n;
    if (auto v = f.string(num_flag)) {
      try {
        std::size_t used = 0;
        n = std::stoll(*v, &used);
        if (used != v->size()) n.reset();
      } catch (const std::exception&) {
        n.reset();
      }
      if (!n) b.warn("--" + num_flag + " " + *v + " is not an integer; every layer recomputed");
    }
    if (method == "block" && n && *n > 0) {
      t["recompute_num_layers"] = *n;
    } else if (method == "block") {
      t["recompute_num_layers"] = 1;  // the flag's default
      b.note("--recompute-method block without a layer count: Megatron's default 1 layer per chunk");
    } else if (n && *n > 1) {
      const std::string method_flag = num_flag == "recompute-num-layers" ? "--recompute-method" : "--activations-checkpoint-method";
      b.note(method_flag + " uniform --" + num_flag + " " + str(*n) + ": every layer recomputed; planck keeps each " +
             "layer's input, not one per group of " + str(*n));
    }
  } else if (granularity == "selective" || f.has("recompute-activations")) {
    t["activation_checkpointing"] = "selective_attention";
    if (f.has("recompute-activations")) b.locate("/training/activation_checkpointing", f.line("recompute-activations"));
    // --recompute-modules: the sub-modules recomputed (training.recompute_modules); those of
    // models planck has no part for (GatedDeltaNet's gdn_* / gdp_*, mhc) are said and dropped.
    std::vector<std::string> modules = f.strings("recompute-modules");
    if (moe_layer) {
      if (modules.empty()) modules.push_back("core_attn");
      if (std::find(modules.begin(), modules.end(), "moe") == modules.end()) modules.push_back("moe");
      b.locate("/training/activation_checkpointing", f.line("moe-layer-recompute"));
    }
    if (!modules.empty()) {
      const auto& known = core::recompute_module_names();
      nlohmann::ordered_json kept = nlohmann::ordered_json::array();
      std::string listed;
      for (const std::string& m : modules) {
        if (std::find(known.begin(), known.end(), m) != known.end()) {
          kept.push_back(m);
          listed += (listed.empty() ? "" : " ") + m;
        } else {
          b.unmodelled("--recompute-modules " + m, f.line("recompute-modules"),
                       "a sub-module planck has no part for; not recomputed in the price");
        }
      }
      // Written even when nothing was kept: Megatron recomputes only what the list names, never the
      // attention core by default once a list is given.
      t["recompute_modules"] = kept;
      b.locate("/training/recompute_modules", f.line(moe_layer ? "moe-layer-recompute" : "recompute-modules"));
      b.note(std::string(moe_layer ? "--moe-layer-recompute (selective, 'moe' added): " : "") +
             "--recompute-modules " + (listed.empty() ? std::string("(none planck prices)") : listed) +
             ": training.recompute_modules (docs/simulator.md \"Compute model\", Recompute)");
    }
  } else {
    t["activation_checkpointing"] = "none";
  }
  // Megatron reads --recompute-modules only under selective granularity (transformer_config.py).
  if (f.has("recompute-modules") && t["activation_checkpointing"] != "selective_attention") {
    b.warn("--recompute-modules has no effect without --recompute-granularity selective (Megatron reads it only "
           "there)");
  }
  // Activation memory savings planck does not price.
  for (const char* flag : {"distribute-saved-activations", "distribute-checkpointed-activations"}) {
    if (f.has(flag))
      b.unpriced_saving(std::string("--") + flag, f.line(flag),
                        "each recomputed layer's input priced whole on every tensor-parallel rank");
  }
  if (f.has("cpu-offloading"))
    b.unpriced_saving("--cpu-offloading", f.line("cpu-offloading"),
                      "activations (and weights) offloaded by Transformer Engine are priced on the GPU");
  return core::Status::ok();
}

}  // namespace

core::Status megatron_model_and_training(const MegatronFlags& f, PlanBuilder& b, const MegatronDegrees& d) {
  std::optional<std::int64_t> layers;
  if (auto st = read_model(f, b, d, &layers); !st) return st;
  if (auto st = megatron_layers_divide(f, b, d, layers); !st) return st;
  PLANCK_IMPORT_TRY(vpp, virtual_stages(f, b, d, layers));
  auto& par = b.plan()["parallelism"];
  if (d.pp > 1) par["pipeline_schedule"] = vpp > 1 ? "interleaved_1f1b" : "1f1b";
  // Capacity factor: only a padded dispatch sends a fixed volume (moe_pad_expert_input_to_capacity);
  // without padding dropped tokens only lower the routed count, which planck's dropless bytes bound.
  if (auto cf = f.string("moe-expert-capacity-factor")) {
    double v = 0;
    try {
      v = std::stod(*cf);
    } catch (const std::exception&) {
      return b.error(f.line("moe-expert-capacity-factor"), "--moe-expert-capacity-factor " + *cf + " is not a number");
    }
    if (!(v > 0)) return b.error(f.line("moe-expert-capacity-factor"), "--moe-expert-capacity-factor must be > 0");
    if (f.has("moe-pad-expert-input-to-capacity")) {
      par["expert_capacity_factor"] = v;
    } else {
      b.note("--moe-expert-capacity-factor without --moe-pad-expert-input-to-capacity: dropped tokens are not "
             "padded, so the all-to-all is at most the dropless volume planck assumes");
    }
  }
  par["virtual_stages"] = vpp;
  // Combined 1F1B: the expert all-to-all under another micro-batch's compute (docs/simulator.md
  // "Expert-parallel overlap"); Megatron's own asserts (virtual stages when pp > 1, no full
  // recompute) become simulate's note when they fail.
  if (f.has("overlap-moe-expert-parallel-comm")) par["ep_overlap"] = true;
  if (auto st = megatron_split_and_dispatch(f, b); !st) return st;

  nlohmann::ordered_json t;
  // arguments.py:693@d98e8a6 asserts args.micro_batch_size is not None (its default), as every
  // version since 9019bbf (2020-12) does; before it --batch-size was the per-model-instance batch.
  const char* micro_flag = f.has("micro-batch-size") || !f.has("batch-size") ? "micro-batch-size" : "batch-size";
  if (!f.has(micro_flag)) {
    return b.error(f.launch_line(), "no --micro-batch-size: Megatron refuses to start without it (megatron/training/"
                                    "arguments.py asserts args.micro_batch_size is not None); add --micro-batch-size "
                                    "N (a Megatron-Bridge recipe: train.micro_batch_size)");
  }
  PLANCK_IMPORT_TRY(mb, f.positive(micro_flag, 1));
  PLANCK_IMPORT_TRY(gb, f.integer("global-batch-size"));
  PLANCK_IMPORT_TRY(seq, f.integer("seq-length"));
  if (micro_flag == std::string("batch-size")) {
    b.locate("/training/micro_batch", f.line("batch-size"));
    b.note("--batch-size " + str(mb) + " (Megatron-LM before 2020-12): the per-model-instance batch, read as the "
           "micro batch");
  }
  if (gb && *gb < 1) return b.error(f.line("global-batch-size"), "--global-batch-size " + str(*gb) + " must be >= 1");
  if (seq && *seq < 1) return b.error(f.line("seq-length"), "--seq-length " + str(*seq) + " must be >= 1");
  for (const char* ramp : {"rampup-batch-size", "step-batch-size-schedule"}) {
    if (f.has(ramp))
      b.unmodelled("--" + std::string(ramp), f.line(ramp), "the batch ramps up; the final global batch is priced");
  }
  std::optional<std::int64_t> global = gb;
  if (d.dp > 0) {
    auto per_step = checked_mul(mb, d.dp);
    if (!per_step) return b.error(f.line("micro-batch-size"), "micro batch x dp overflows a 64-bit integer");
    if (!global) {
      global = *per_step;
      b.note("no --global-batch-size: micro batch " + str(mb) + " x dp " + str(d.dp) + " = " + str(*global));
    }
    if (*global % *per_step == 0) {
      t["global_batch"] = *global;
      t["micro_batch"] = mb;
      t["grad_accumulation"] = *global / *per_step;
      b.note("micro-batches per step = global " + str(*global) + " / (micro " + str(mb) + " x dp " + str(d.dp) +
             ") = " + str(*global / *per_step) + " (num_microbatches_calculator)");
    } else {
      t["global_batch"] = *global;
      t["micro_batch"] = mb;
      b.warn("global batch size (" + str(*global) + ") is not divisible by micro batch size (" + str(mb) +
             ") times data parallel size (" + str(d.dp) + "): Megatron asserts; `planck verify` reports it");
    }
  } else {
    if (global) t["global_batch"] = *global;
    t["micro_batch"] = mb;
  }
  PLANCK_IMPORT_TRY(decoder_seq, f.integer("decoder-seq-length"));
  if (decoder_seq && *decoder_seq < 1)
    return b.error(f.line("decoder-seq-length"), "--decoder-seq-length must be >= 1");
  // Multimodal models (examples/multimodal, --language-model-type / --vision-model-type):
  // --seq-length is the vision encoder's (image tokens), the language model runs
  // --decoder-seq-length tokens. T5 (encoder-decoder) has no planck model; its --seq-length stays.
  const bool multimodal = f.has("language-model-type") || f.has("vision-model-type");
  if (decoder_seq && multimodal) {
    t["seq_len"] = *decoder_seq;
    b.locate("/training/seq_len", f.line("decoder-seq-length"));
    b.note("seq_len = --decoder-seq-length " + str(*decoder_seq) + " (the language model's length; --seq-length" +
           (seq ? " " + str(*seq) : std::string()) + " is the encoder's)");
  } else if (seq) {
    t["seq_len"] = *seq;
  }
  // schedules.py wraps all but the last micro-batch in no_sync. Megatron-FSDP with sharded
  // gradients (optim_grads, optim_grads_params) keeps only each rank's gradient shard in its
  // ParamAndGradBuffer, so every micro-batch's gradients are reduce-scattered into it: no_sync
  // cannot defer that reduction (modelled as every_microbatch; the unsharded alternative would
  // need full fp32 gradients on every GPU).
  const bool fsdp = f.has("use-megatron-fsdp") || f.has("use-custom-fsdp");
  const std::string strategy = f.string("data-parallel-sharding-strategy").value_or("no_shard");
  const bool sharded_grads = fsdp && (strategy == "optim_grads" || strategy == "optim_grads_params");
  t["grad_sync"] = sharded_grads ? "every_microbatch" : "last_microbatch";
  if (sharded_grads) {
    b.note("grad_sync = every_microbatch: Megatron-FSDP " + strategy +
           " keeps gradients sharded, so each micro-batch is reduce-scattered");
  }
  PLANCK_IMPORT_TRY(param, read_precision(f, b, t));
  // --fp8-format (e4m3 | hybrid) runs every transformer layer's linears in FP8 through Transformer
  // Engine; --fp8-recipe picks the scaling (megatron/training/arguments.py: delayed by default,
  // tensorwise = current scaling, blockwise, mxfp8). Delayed and current scaling are both
  // per-tensor: training.fp8 "tensorwise". Parameters and gradients keep their dtypes.
  if (auto fp8 = f.string("fp8-format")) {
    const std::string recipe = f.string("fp8-recipe").value_or("delayed");
    std::string mapped = recipe == "delayed" || recipe == "tensorwise" ? "tensorwise" : recipe;
    if (mapped != "tensorwise" && mapped != "blockwise" && mapped != "mxfp8") {
      b.warn("--fp8-recipe " + recipe + " is not one Megatron defines; priced as tensorwise");
      mapped = "tensorwise";
    }
    t["fp8"] = mapped;
    b.note("--fp8-format " + *fp8 + " --fp8-recipe " + recipe + ": training.fp8 = " + mapped +
           " (FP8 linears; parameters stay " + param + ")");
  }
  // --fp4-format e2m1 (--fp4 in Megatron-Bridge's MixedPrecisionConfig) runs the linears in NVFP4
  // through Transformer Engine (arguments.py --fp4-format / --fp4-recipe): planck has no FP4
  // pricing, so the recipe is said, never priced silently as bf16.
  for (const char* flag : {"fp4-format", "fp4"}) {
    auto fp4 = f.string(flag);
    if (!fp4) continue;
    const std::string recipe = f.string("fp4-recipe").value_or("nvfp4");
    b.unmodelled(std::string("--") + flag + " " + *fp4 + " (" + recipe + ")", f.line(flag),
                 t.contains("fp8") ? "FP4 linears priced as the FP8 recipe (" + t["fp8"].get<std::string>() + ")"
                                   : "FP4 linears priced in " + param + ", their activations and weights too");
    break;
  }
  megatron_runtime_flags(f, b, t);
  read_optimizer(f, b, t);
  if (auto st = read_recompute(f, b, t); !st) return st;
  megatron_frozen_flags(f, b, t);
  t["stack"] = "megatron";  // Megatron's fused kernels (docs/simulator.md "Software stack")
  b.plan()["training"] = t;
  return core::Status::ok();
}

}  // namespace planck::import
