// Meta Lingua YAML -> plan.
//
// Semantics (docs/sources/mesh.md §4), facebookresearch/lingua @437d680:
// apps/main/train.py (validate_train_args: the dp_replicate inference; the data-rank lines; the
// gradient-accumulation loop), lingua/distributed.py (DistributedArgs defaults, get_device_mesh,
// parallelize_model: the mesh handed to fully_shard), lingua/transformer.py (LMTransformerArgs
// defaults, FeedForward hidden size), lingua/tokenizer.py (ByteTokenizer n_words = 258).

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "import/importer.h"
#include "import/lingua/blt_keys.h"
#include "import/lingua/keys.h"
#include "import/plan_builder.h"
#include "import/formats/yaml_reader.h"
#include "core/plan/presets.h"

namespace planck::import {

namespace {

// The model keys its class (apps/main's LMTransformerArgs; BLT's for an entropy model) does not
// define, besides sliding_window: another app's or a fork's model (memory layers, byte-latent
// patching, jgcb00/lingua's model.attention / model.mlp, ...). TrainArgs types `model` per app, so
// unknown-key, which follows the classes, cannot judge them; the caller names them.
std::vector<std::string> other_model_keys(const YAML::Node& m, const std::map<std::string, std::string>& known) {
  std::vector<std::string> other;
  if (!m.IsMap()) return other;
  for (const auto& kv : m) {
    const std::string key = kv.first.Scalar();
    if (key != "sliding_window" && !known.count(key)) other.push_back(key);
  }
  return other;
}

// "model.a" or "model.{a, b}".
std::string key_names(const std::string& section, const std::vector<std::string>& keys) {
  std::string names;
  for (const std::string& k : keys) names += (names.empty() ? "" : ", ") + k;
  return section + "." + (keys.size() > 1 ? "{" + names + "}" : names);
}

// A priced model's keys that are not in the price: setting-unmodelled at the first one's line.
void warn_unpriced_model_keys(YamlReader& y, const YAML::Node& m, const std::string& section,
                              const std::vector<std::string>& other, PlanBuilder& b) {
  if (m.IsMap() && m["sliding_window"].IsDefined() && !m["sliding_window"].IsNull()) {
    b.unmodelled(section + ".sliding_window", y.line_of(m, "sliding_window"),
                 "attention priced over the whole sequence");
  }
  if (other.empty()) return;
  b.unmodelled(key_names(section, other), y.line_of(m, other.front()),
               "priced as apps/main's LMTransformer, which has no such setting" +
                   std::string(other.size() > 1 ? "s" : "") + " (another app's model: its layers are not priced)");
}

// Keys of Lingua's non-attention token mixers (facebookresearch/lingua@437d680
// apps/mamba/core_mamba.py:36-60 BaseMambaArgs: state_dim, n_groups, conv_size, dt_bias, ...;
// apps/fastRNN/hawk/core_hawk.py:18-30 BaseHawkArgs: lru_dim_multiplier, conv_size;
// apps/fastRNN/minGRU/core_gru.py:18, minLSTM/core_lstm.py:18: conv_size). apps/main's
// LMTransformerArgs has none of them.
bool mixer_key(const std::string& key) {
  for (const char* k : {"state_dim", "n_groups", "conv_size", "dt_bias", "D_has_head_dim", "ssm_chunk_size",
                        "learnable_init_states", "lru_dim_multiplier"}) {
    if (key == k) return true;
  }
  return false;
}

// LMTransformerArgs -> ModelSpec. FeedForward: hidden = 4 dim -> int(2 hidden / 3) -> x
// ffn_dim_multiplier -> rounded up to multiple_of (Llama's recipe, lingua/transformer.py).
// `section`: "model", or BLT's "entropy_model" (bytelatent/train.py:261-264 builds it when
// train_entropy_model), whose class `known` gives the keys.
core::Status read_model(YamlReader& y, PlanBuilder& b, const std::string& section,
                        const std::map<std::string, std::string>& known) {
  YAML::Node m = y.section(section);
  const std::string w = section + ".";
  const std::vector<std::string> other = other_model_keys(m, known);
  std::vector<std::string> mixer;
  for (const std::string& k : other) {
    if (mixer_key(k)) mixer.push_back(k);
  }
  if (!mixer.empty()) {
    b.finding("model-unmodelled-layers", y.line_of(m, mixer.front()),
              key_names(section, mixer) + " make a state-space / recurrent token mixer (Lingua's apps/mamba or "
              "apps/fastRNN model), not attention: planck prices attention transformers only, so the model is left "
              "out rather than priced as apps/main's LMTransformer (model left out)");
    return core::Status::ok();
  }
  PLANCK_IMPORT_TRY(dim, y.integer(m, "dim", w));
  PLANCK_IMPORT_TRY(layers, y.integer(m, "n_layers", w));
  PLANCK_IMPORT_TRY(head_dim, y.integer(m, "head_dim", w));
  PLANCK_IMPORT_TRY(heads, y.integer(m, "n_heads", w));
  PLANCK_IMPORT_TRY(kv_heads, y.integer(m, "n_kv_heads", w));
  PLANCK_IMPORT_TRY(mult, y.real(m, "ffn_dim_multiplier", w));
  PLANCK_IMPORT_TRY(multiple_of, y.integer(m, "multiple_of", w));
  PLANCK_IMPORT_TRY(vocab, y.integer(m, "vocab_size", w));
  PLANCK_IMPORT_TRY(tied, y.boolean(m, "weight_tying", w, false));
  core::ModelSpec spec;
  spec.name = "custom";
  spec.hidden = dim.value_or(512);
  spec.layers = layers.value_or(8);
  const std::int64_t mo = multiple_of.value_or(256);
  constexpr std::int64_t kMaxDim = std::int64_t{1} << 32;  // keeps 4 x dim x multiplier far from overflow
  for (auto [name, v] : {std::pair<const char*, std::int64_t>{"dim", spec.hidden},
                         {"n_layers", spec.layers},
                         {"multiple_of", mo},
                         {"head_dim", head_dim.value_or(1)},
                         {"n_heads", heads.value_or(1)},
                         {"n_kv_heads", kv_heads.value_or(1)}}) {
    if (v < 1 || v > kMaxDim) {
      return b.error(y.line_of(m, name),
                     "model." + std::string(name) + " = " + std::to_string(v) + " must be between 1 and 2^32");
    }
  }
  if (mult && !(*mult > 0 && *mult < 1e6)) {
    return b.error(y.line_of(m, "ffn_dim_multiplier"), "model.ffn_dim_multiplier must be a positive number");
  }
  if (!heads && !head_dim) {
    b.warn(section + ": neither n_heads nor head_dim is set (Lingua needs one)" +
           (other.empty() ? std::string()
                          : "; " + key_names(section, other) + (other.size() > 1 ? " are" : " is") +
                                " not apps/main's LMTransformerArgs (another app's or a fork's model, not read)") +
           "; model left out");
    return core::Status::ok();
  }
  // Attention: head_dim = head_dim or dim // n_heads; n_heads = n_heads or dim // head_dim.
  const std::int64_t hd = head_dim ? *head_dim : spec.hidden / *heads;
  spec.heads = heads ? *heads : spec.hidden / hd;
  spec.kv_heads = kv_heads.value_or(spec.heads);
  if (spec.heads < 1) return b.error(y.line_of(m, "head_dim"), "model.head_dim exceeds model.dim: no heads");
  if (hd * spec.heads != spec.hidden) spec.head_dim = hd;
  std::int64_t hidden = (2 * (4 * spec.hidden)) / 3;
  if (mult) hidden = static_cast<std::int64_t>(*mult * static_cast<double>(hidden));
  spec.ffn_hidden = mo * ((hidden + mo - 1) / mo);
  spec.tied_embeddings = tied;
  if (vocab && *vocab > 0) {
    spec.vocab = *vocab;
  } else {
    // train.py: vocab_size -1 becomes tokenizer.n_words.
    const YAML::Node data = y.section("data");
    std::string name = "bytes";  // TokenizerArgs default
    if (data.IsMap()) {
      const YAML::Node tok = data["tokenizer"];
      if (tok.IsDefined() && tok.IsMap() && tok["name"].IsDefined() && tok["name"].IsScalar())
        name = tok["name"].Scalar();
    }
    if (name != "bytes" && name != "mock") {
      // The tokenizer file sets the vocabulary; a preset of the same shape gives it instead.
      auto preset = core::model_preset_by_shape(spec.layers, spec.hidden, spec.heads, spec.kv_heads);
      if (!preset) {
        b.warn("vocab_size comes from the '" + name + "' tokenizer file, which planck does not read, and no model "
               "preset has " + std::to_string(spec.layers) + " layers, dim " + std::to_string(spec.hidden) + ", " +
               std::to_string(spec.heads) + " heads, " + std::to_string(spec.kv_heads) +
               " KV heads; model left out (set model.vocab_size)");
        return core::Status::ok();
      }
      spec.vocab = preset->vocab;
      // A guess is said in every output (issue 30), not only --explain.
      const YAML::Node tok = data.IsMap() ? data["tokenizer"] : YAML::Node();
      b.unmodelled("data.tokenizer.name " + name, tok.IsDefined() && tok.IsMap() ? y.line_of(tok, "name") : 0,
                   "no model.vocab_size: vocab " + std::to_string(spec.vocab) + " guessed from preset " +
                       preset->name + ", which has the same layers, dim and heads (the tokenizer file, which sets "
                       "it, is not read; set model.vocab_size)");
    } else {
      spec.vocab = name == "bytes" ? 258 : 256;
      b.note("vocab " + std::to_string(spec.vocab) + " from the '" + name + "' tokenizer (lingua/tokenizer.py n_words)");
    }
  }
  b.set_model(spec, section == "model" ? "Lingua LMTransformer" : "BLT's entropy model (LMTransformer)");
  warn_unpriced_model_keys(y, m, section, other, b);
  return core::Status::ok();
}

struct Dist {
  std::int64_t dpr = 1, dps = 1, tp = 1;
  std::string fsdp_type = "no_shard";
};

// validate_train_args + get_device_mesh + parallelize_model.
core::Result<Dist> read_distributed(YamlReader& y, PlanBuilder& b, const World& world) {
  YAML::Node d = y.section("distributed");
  const std::string w = "distributed.";
  PLANCK_IMPORT_TRY(dpr, y.integer(d, "dp_replicate", w));
  PLANCK_IMPORT_TRY(dps, y.integer(d, "dp_shard", w));
  PLANCK_IMPORT_TRY(tp, y.integer(d, "tp_size", w));
  PLANCK_IMPORT_TRY(fsdp_type, y.string(d, "fsdp_type", w));
  PLANCK_IMPORT_TRY(compile, y.boolean(d, "compile", w, false));
  Dist out;
  out.dpr = dpr.value_or(1);
  out.dps = dps.value_or(1);
  out.tp = tp.value_or(1);
  out.fsdp_type = fsdp_type.value_or("no_shard");
  for (auto [key, v] :
       {std::pair<const char*, std::int64_t>{"dp_replicate", out.dpr}, {"dp_shard", out.dps}, {"tp_size", out.tp}}) {
    if (v < 1) return b.error(y.line_of(d, key), w + key + " = " + std::to_string(v) + " must be >= 1");
  }
  if (out.fsdp_type != "full_shard" && out.fsdp_type != "no_shard") {
    return b.error(y.line_of(d, "fsdp_type"),
                   "distributed.fsdp_type '" + out.fsdp_type + "' is not one of Lingua's: full_shard, no_shard");
  }
  auto prod = checked_product({out.dpr, out.dps, out.tp});
  if (!prod) return b.error(y.line_of(d, "dp_shard"), "dp_replicate x dp_shard x tp_size overflows a 64-bit integer");
  const std::string nums = "world " + std::to_string(world.size) + ", dp_shard " + std::to_string(out.dps) +
                           ", tp_size " + std::to_string(out.tp);
  if (*prod != world.size) {
    // validate_train_args: dp_replicate = world // dp_shard // tp_size, after asserting both divide.
    if (world.size % out.dps != 0) {
      return b.error(y.line_of(d, "dp_shard"), "Lingua's train.py asserts world % dp_shard == 0: " + nums);
    }
    if ((world.size / out.dps) % out.tp != 0) {
      return b.error(y.line_of(d, "tp_size"), "Lingua's train.py asserts (world // dp_shard) % tp_size == 0: " + nums);
    }
    const std::int64_t was = out.dpr;
    out.dpr = world.size / out.dps / out.tp;
    b.note("dp_replicate = world " + std::to_string(world.size) + " // dp_shard " + std::to_string(out.dps) +
           " // tp_size " + std::to_string(out.tp) + " = " + std::to_string(out.dpr) +
           " (train.py validate_train_args; the config's product " + std::to_string(*prod) + " with dp_replicate " +
           std::to_string(was) + " != world)");
    if (out.fsdp_type == "no_shard" && !(out.dps == 1 && out.dpr == world.size)) {
      return b.error(y.line_of(d, "fsdp_type"),
                     "Lingua's train.py asserts dp_shard == 1 and dp_replicate == world "
                     "for fsdp_type no_shard: " +
                         nums);
    }
  }
  if (out.tp > 1 && (out.fsdp_type != "full_shard" || compile)) {
    return b.error(y.line_of(d, "tp_size"),
                   "Lingua's parallelize_model requires fsdp_type full_shard and compile "
                   "off for tp_size " +
                       std::to_string(out.tp) + " (got " + out.fsdp_type + (compile ? ", compile true)" : ")"));
  }
  return out;
}

// train.py's data-rank lines; the `if dp_shard > 1` branch holds the formula. After the fix the
// branch is written even when dp_shard is 1 (it changes nothing at this size and is what the
// script does at every other size, which verify's rank-latent check asks about). Before the fix
// it is written only when taken: with dp_shard 1 the script skips it and is right, though only
// by coincidence (verify reports rank-latent).
std::vector<std::string> rank_program(LinguaFormula formula, std::int64_t dp_shard) {
  std::vector<std::string> steps = {"dp_rank = dp_replicate.rank", "dp_degree = dp_replicate.size"};
  if (formula == LinguaFormula::kAfterFix) {
    steps.push_back("dp_rank = dp_rank * dp_shard.size + dp_shard.rank");
  } else if (dp_shard > 1) {
    steps.push_back("dp_rank = dp_rank * dp_degree + dp_shard.rank");
  } else {
    return steps;
  }
  steps.push_back("dp_degree = dp_degree * dp_shard.size");
  return steps;
}

}  // namespace

core::Result<ImportResult> import_lingua(std::string_view text, const std::string& path, const ImportOptions& options) {
  PlanBuilder b("lingua", path);
  PLANCK_IMPORT_TRY(root, parse_yaml(std::string(text), b));
  if (!root.IsMap()) return b.error(0, "a Lingua config is a YAML mapping (name, data, model, distributed, ...)");
  YamlReader y(root, b);
  // Keys of Lingua's own TrainArgs (every app's, import/lingua/keys.h): another is unknown-key. A BLT
  // config is judged by BLT's TrainArgs (import/lingua/blt_keys.h).
  const bool blt = is_blt_config(root);
  if (blt) {
    y.check_keys(root, blt_classes(), "TrainArgs", "");
    b.note("a BLT config (facebookresearch/blt bytelatent/args.py TrainArgs): its keys are judged by BLT's classes; "
           "a BLT key planck does not read (max_steps, eval_on_gpus, data.patcher_args, data.tokenizer_args, ...) "
           "is BLT's own, not unknown");
  } else {
    y.check_keys(root, lingua_classes(), "TrainArgs", "");
  }
  if (!y.section("distributed").IsMap())
    b.note("no distributed section: Lingua's defaults (dp_shard 1, tp_size 1, no_shard)");

  PLANCK_IMPORT_TRY(world, b.resolve_world(options, {}));
  b.set_cluster(world);
  PLANCK_IMPORT_TRY(d, read_distributed(y, b, world));
  b.set_mesh({"dp_replicate", "dp_shard", "tp"}, {d.dpr, d.dps, d.tp});

  // parallelize_model: fully_shard gets mesh["dp_replicate","dp_shard"] when dp_shard > 1 or
  // no_shard, else the 1-D mesh["dp_replicate"]. Classified by that mesh, not by dim names.
  nlohmann::ordered_json par;
  if (d.fsdp_type == "no_shard") {
    par["data_parallel"] = "ddp";
    b.note("fsdp_type no_shard: fully_shard over (dp_replicate, dp_shard=1) shards nothing: DDP over dp_replicate");
  } else if (d.dps > 1 && d.dpr > 1) {
    par["data_parallel"] = "hsdp";
    par["fsdp_dims"] = {"dp_shard"};
    par["replicate_dims"] = {"dp_replicate"};
    b.note("full_shard with dp_shard > 1: fully_shard receives the 2-D mesh (dp_replicate, dp_shard): HSDP");
  } else if (d.dps > 1) {
    par["data_parallel"] = "fsdp";
    par["fsdp_dims"] = {"dp_shard"};
    b.note("full_shard with dp_replicate 1: the 2-D mesh (1, dp_shard) shards over dp_shard: FSDP");
  } else {
    par["data_parallel"] = "fsdp";
    par["fsdp_dims"] = {"dp_replicate"};
    b.note(
        "full_shard with dp_shard 1: fully_shard receives the 1-D dp_replicate mesh, so parameters are sharded "
        "over all " +
        std::to_string(d.dpr) + " data ranks (FSDP despite the dim's name)");
  }
  par["sequence_parallel"] = d.tp > 1;
  if (d.tp > 1) b.note("sequence_parallel = true: Lingua's tp_parallelize applies SequenceParallel to the norms");
  b.plan()["parallelism"] = par;

  PLANCK_IMPORT_TRY(entropy, y.boolean(root, "train_entropy_model", "", false));
  if (blt && entropy) {
    b.locate("/model", y.line_of(root, "entropy_model"));
    b.note("train_entropy_model: BLT trains entropy_model, an LMTransformer (bytelatent/train.py:261-264)");
    if (auto st = read_model(y, b, "entropy_model", config_fields(blt_classes(), "LMTransformerArgs")); !st) return st;
  } else if (auto st = read_model(y, b, "model", config_fields(lingua_classes(), "LMTransformerArgs")); !st) {
    return st;
  }

  // Batch: data.batch_size per GPU per micro-step, grad_acc_steps micro-steps per optimizer step.
  YAML::Node data = y.section("data");
  YAML::Node dist = y.section("distributed");
  PLANCK_IMPORT_TRY(batch, y.integer(data, "batch_size", "data."));
  PLANCK_IMPORT_TRY(seq, y.integer(data, "seq_len", "data."));
  PLANCK_IMPORT_TRY(acc, y.integer(root, "grad_acc_steps", ""));
  PLANCK_IMPORT_TRY(dtype, y.string(dist, "model_dtype", "distributed."));
  PLANCK_IMPORT_TRY(sac, y.boolean(dist, "selective_activation_checkpointing", "distributed.", false));
  const std::int64_t mb = batch.value_or(2), s = seq.value_or(2048), ga = acc.value_or(1);
  if (mb < 1 || s < 1 || ga < 1) {
    return b.error(0, "data.batch_size " + std::to_string(mb) + ", data.seq_len " + std::to_string(s) +
                          " and grad_acc_steps " + std::to_string(ga) + " must be >= 1");
  }
  auto global = checked_product({mb, ga, d.dpr, d.dps});
  if (!global) return b.error(0, "batch_size x grad_acc_steps x data-parallel degree overflows a 64-bit integer");
  nlohmann::ordered_json t;
  t["global_batch"] = *global;
  t["micro_batch"] = mb;
  t["seq_len"] = s;
  t["grad_accumulation"] = ga;
  b.note("global batch = batch_size " + std::to_string(mb) + " x grad_acc_steps " + std::to_string(ga) +
         " x dp degree " + std::to_string(d.dpr * d.dps) + " = " + std::to_string(*global));
  // After d1fd421: set_requires_gradient_sync(acc_step == 0) syncs on the last micro-step only;
  // before it, FSDP reduced on every backward.
  const bool before = options.lingua_formula == LinguaFormula::kBeforeFix;
  t["grad_sync"] = before ? "every_microbatch" : "last_microbatch";
  if (ga > 1) {
    b.note(before ? "grad_sync = every_microbatch: train.py before d1fd421 never disabled gradient sync"
                  : "grad_sync = last_microbatch: train.py calls set_requires_gradient_sync(acc_step == 0)");
  }
  if (dtype) {
    auto dt = core::parse_dtype(*dtype);
    if (!dt) return b.error(y.line_of(dist, "model_dtype"), "distributed.model_dtype '" + *dtype + "' is not a dtype");
    t["param_dtype"] = core::to_string(*dt);
  }
  t["reduce_dtype"] = "fp32";  // MixedPrecisionPolicy(reduce_dtype=torch.float32) in parallelize_model
  t["optimizer"] = "adamw";    // lingua/optim.py builds AdamW
  t["activation_checkpointing"] = sac ? "selective" : "none";
  // Lingua's attention is PyTorch's (attn_impl sdpa, its default; xformers' fmha and
  // flex_attention priced alike), not Transformer Engine's cuDNN kernel that a plan without a
  // stack would be priced with.
  t["attention_kernel"] = "sdpa";
  b.plan()["training"] = t;

  b.plan()["rank_program"] = {{"steps", rank_program(options.lingua_formula, d.dps)}};
  b.note(std::string("rank_program: train.py's data rank ") +
         (before ? "before the fix (dp_rank * |dp_replicate| + dp_shard rank, issues #58/#66)"
                 : "after the fix d1fd421 (dp_rank * |dp_shard| + dp_shard rank)") +
         "; choose with --lingua-dp-rank-formula");
  return b.finish();
}

}  // namespace planck::import
