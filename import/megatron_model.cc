// Megatron-LM model, batch, precision and pipeline flags -> plan "model", "training" and the
// pipeline keys of "parallelism". Defaults from megatron/training/arguments.py @d98e8a6.

#include <algorithm>
#include <stdexcept>
#include <string>

#include "import/megatron_args.h"
#include "import/plan_builder.h"
#include "core/plan/presets.h"

namespace planck::import {

namespace {

std::string str(std::int64_t v) { return std::to_string(v); }

constexpr std::int64_t kGpt2Vocab = 50257;

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
  m.gated_mlp = f.has("swiglu") || f.has("quick-geglu");
  if (!m.gated_mlp) b.note("no --swiglu / --quick-geglu: a GELU MLP with 2 matrices (gated_mlp false)");
  if (f.has("quick-geglu")) b.note("--quick-geglu: a gated MLP (3 matrices), as --swiglu");
  if (!f.has("disable-bias-linear") && !m.gated_mlp) m.biases = true;
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
    if (auto freq = f.string("moe-layer-freq")) {
      try {
        std::size_t used = 0;
        const long long n = std::stoll(*freq, &used);
        if (used != freq->size() || n < 1) throw std::invalid_argument(*freq);
        m.moe_layer_freq = n;
      } catch (const std::exception&) {
        b.warn("--moe-layer-freq " + *freq +
               " is a layer pattern planck does not evaluate; every layer counted as MoE (set the model's "
               "dense_layers / moe_layer_freq by hand)");
      }
    }
  }
  if (!vocab && gpt2_bpe(f)) {
    // GPT2BPETokenizer's vocabulary is GPT-2's gpt2-vocab.json: 50257 tokens. Megatron pads it
    // to a multiple of make_vocab_size_divisible_by x tp (_vocab_size_with_padding); the plan
    // keeps the tokenizer's 50257 so that the shape can match a preset (gpt3-175b).
    m.vocab = kGpt2Vocab;
    const std::int64_t multiple = divisible * d.tp;
    b.note("no --vocab-size: GPT-2 BPE tokenizer (" +
           std::string(f.has("tokenizer-type") ? "--tokenizer-type GPT2BPETokenizer" : "--vocab-file + --merge-file") +
           ") has 50257 tokens; Megatron pads them to " + str((kGpt2Vocab + multiple - 1) / multiple * multiple) +
           " (multiple of " + str(divisible) + " x tp " + str(d.tp) + ")");
    b.set_model(m, "Megatron flags");
    return core::Status::ok();
  }
  if (!vocab) {
    // The tokenizer file sets the vocabulary; a preset of the same shape gives it instead.
    auto preset = core::model_preset_by_shape(m.layers, m.hidden, m.heads, m.kv_heads);
    if (!preset) {
      b.warn("no --vocab-size: the vocabulary comes from the tokenizer, which planck does not read, and no model "
             "preset has " + str(m.layers) + " layers, hidden " + str(m.hidden) + ", " + str(m.heads) +
             " heads; model left out (add --vocab-size)");
      return core::Status::ok();
    }
    vocab = preset->vocab;
    b.note("no --vocab-size: vocab " + str(*vocab) + " of preset " + preset->name +
           ", which has the same layers, hidden size and heads");
  }
  auto multiple = checked_mul(divisible, d.tp);
  if (!multiple) return b.error(f.line("make-vocab-size-divisible-by"), "vocab padding multiple overflows");
  m.vocab = (*vocab + *multiple - 1) / *multiple * *multiple;
  if (m.vocab != *vocab) {
    b.note("vocab " + str(*vocab) + " padded to " + str(m.vocab) + " (multiple of " + str(divisible) + " x tp " +
           str(d.tp) + ", arguments.py _vocab_size_with_padding)");
  }
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
  if (units % d.pp != 0 || per_rank % v != 0) {
    b.warn("num_layers " + str(units) + " / pp " + str(d.pp) + " is not a multiple of " + str(v) +
           " layers per virtual stage; Megatron's assertion fails");
  }
  const std::int64_t vpp = std::max<std::int64_t>(per_rank / v, 1);
  b.note("virtual pipeline: (" + str(units) + " layers / pp " + str(d.pp) + ") / " + str(v) + " = " + str(vpp) +
         " chunks per rank");
  return vpp;
}

}  // namespace

core::Status megatron_model_and_training(const MegatronFlags& f, PlanBuilder& b, const MegatronDegrees& d) {
  std::optional<std::int64_t> layers;
  if (auto st = read_model(f, b, d, &layers); !st) return st;
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
  PLANCK_IMPORT_TRY(mb, f.positive("micro-batch-size", 1));
  PLANCK_IMPORT_TRY(gb, f.integer("global-batch-size"));
  PLANCK_IMPORT_TRY(seq, f.integer("seq-length"));
  if (!f.has("micro-batch-size")) b.note("no --micro-batch-size: 1 assumed");
  if (gb && *gb < 1) return b.error(f.line("global-batch-size"), "--global-batch-size " + str(*gb) + " must be >= 1");
  if (seq && *seq < 1) return b.error(f.line("seq-length"), "--seq-length " + str(*seq) + " must be >= 1");
  if (f.has("rampup-batch-size"))
    b.note("--rampup-batch-size: the batch ramps up; the plan uses the final global batch");
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
  if (seq) t["seq_len"] = *seq;
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
  std::string param = f.has("bf16") ? "bf16" : f.has("fp16") ? "fp16" : "fp32";
  std::string reduce = param == "bf16" ? (f.has("grad-reduce-in-bf16") ? "bf16" : "fp32")
                                       : (f.has("accumulate-allreduce-grads-in-fp32") ? "fp32" : param);
  t["param_dtype"] = param;
  t["reduce_dtype"] = reduce;
  if (param == "bf16" && reduce == "fp32")
    b.note("bf16 gradients accumulated and reduced in fp32 (arguments.py forces it for --bf16)");
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
    if (f.has("fp8-param-gather"))
      b.note("--fp8-param-gather: the distributed optimizer all-gathers FP8 weights; planck prices them in " + param +
             " (twice the bytes)");
  }
  auto opt = f.string("optimizer").value_or("adam");
  if (opt == "adam")
    t["optimizer"] = "adamw";  // Megatron's adam applies decoupled weight decay (AdamW)
  else
    b.note("--optimizer " + opt + " is not one planck models; left at its default");
  // Megatron's selective granularity recomputes the attention core (QK^T, softmax, dropout,
  // AV; Korthikanti et al. 2022 §4.2), which planck calls selective_attention; its "selective"
  // is torchtitan's op-level policy. --recompute-activations is the older spelling of selective.
  auto recompute = f.string("recompute-granularity");
  if (recompute == "full") {
    t["activation_checkpointing"] = "full";
    // --recompute-method block recomputes the first --recompute-num-layers layers of each
    // pipeline chunk and keeps the rest; uniform recomputes every layer, checkpointing the input
    // of each group of that many (transformer_block.py _checkpointed_forward).
    PLANCK_IMPORT_TRY(n, f.integer("recompute-num-layers"));
    const auto method = f.string("recompute-method");
    if (method == "block" && n && *n > 0) {
      t["recompute_num_layers"] = *n;
    } else if (method == "uniform" && n && *n > 1) {
      b.note("--recompute-method uniform --recompute-num-layers " + std::to_string(*n) +
             ": every layer recomputed; planck keeps each layer's input, not one per group of " + std::to_string(*n));
    }
  } else if (recompute == "selective" || f.has("recompute-activations"))
    t["activation_checkpointing"] = "selective_attention";
  else
    t["activation_checkpointing"] = "none";
  b.plan()["training"] = t;
  return core::Status::ok();
}

}  // namespace planck::import
