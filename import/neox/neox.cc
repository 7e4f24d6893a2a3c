// EleutherAI/gpt-neox YAML -> plan.
//
// A GPT-NeoX run is `deepy.py train.py a.yml b.yml ...`: YAML files (most written as JSON with #
// comments) whose top-level keys are NeoXArgs fields (megatron/neox_arguments/neox_args.py) beside
// DeepSpeed's own (deepspeed_args.py), merged into one dict; a key may be spelt with dashes
// (arguments.py:242-253 @ea7aefd). planck reads the config and the files --with names, merged as
// from_ymls does (import/neox/reader.h). Semantics, EleutherAI/gpt-neox @ea7aefd:
// arguments.py:917-934 (dp = world / (pp x mp), pp and mp below 1 taken as 1, a remainder raises),
// :826-883 (calculate_batch_parameters / check_batch_parameters), :966-990 (precision),
// megatron/initialize.py:160-170 (PipeModelDataParallelTopology: pipe outermost, then data, then
// model), deepspeed_args.py:49 (gradient_accumulation_steps defaults to 1).

#include <string>
#include <tuple>
#include <string_view>
#include <vector>

#include "core/base/input_file.h"
#include "import/formats/yaml_omegaconf.h"
#include "import/importer.h"
#include "import/neox/reader.h"
#include "import/plan_builder.h"

namespace planck::import {

namespace {

// The top-level key that marks a GPT-NeoX config, with its line, or "" when none does: NeoX's
// parallelism keys (neox_args.py:60, :65; DeepSpeed and planck's other formats have neither), or
// the model's three sizes with a NeoX training key beside them (a Hugging Face config.json has the
// sizes alone).
struct NeoxMark {
  std::string key;
  int line = 0;
};

NeoxMark neox_mark_of(const YAML::Node& root) {
  if (!root.IsMap()) return {};
  NeoxMark parallel, size;
  int sizes = 0;
  bool training = false;
  for (const auto& kv : root) {
    if (!kv.first.IsScalar()) continue;
    const std::string key = neox::neox_key(kv.first.Scalar());
    const int line = neox::neox_line_of(kv.first);
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

NeoxMark neox_mark(std::string_view text) {
  bool candidate = false;
  for (const char* word : {"parallel_size", "parallel-size", "num_attention_heads", "num-attention-heads"}) {
    if (text.find(word) != std::string_view::npos) candidate = true;
  }
  if (!candidate) return {};
  PlanBuilder probe("neox", "");
  auto root = load_omegaconf_yaml(std::string(text), probe);
  return root ? neox_mark_of(*root) : NeoxMark{};
}

// `key` of the mapping `m`, or an undefined node (yaml-cpp throws on a missing key's node).
YAML::Node neox_child(const YAML::Node& m, const char* key) {
  if (!m.IsDefined() || !m.IsMap() || !m[key].IsDefined()) return YAML::Node(YAML::NodeType::Undefined);
  return m[key];
}

// The scalar `key` of the mapping `m` as written, "" when absent or not a scalar.
std::string neox_scalar(const YAML::Node& m, const char* key) {
  const YAML::Node v = neox_child(m, key);
  return v.IsDefined() && v.IsScalar() ? v.Scalar() : std::string();
}

// calculate_batch_parameters (arguments.py:826-863), then check_batch_parameters (:866-883).
core::Status neox_batch(neox::NeoxKeys& k, PlanBuilder& b, std::int64_t dp, nlohmann::ordered_json& t) {
  PLANCK_IMPORT_TRY(tb, k.integer("train_batch_size"));
  PLANCK_IMPORT_TRY(mb, k.integer("train_micro_batch_size_per_gpu"));
  PLANCK_IMPORT_TRY(gas_v, k.integer("gradient_accumulation_steps"));
  const std::int64_t gas_given = gas_v.value_or(1);  // deepspeed_args.py:49: never None unless written null
  std::int64_t train = 0, micro = 0, acc = 0;
  if (tb && mb) {
    train = *tb, micro = *mb, acc = gas_given;  // all three set: taken as they are
  } else if (tb) {
    train = *tb, acc = gas_given;
    micro = dp > 0 && acc > 0 ? train / dp / acc : 0;
    b.note("train_micro_batch_size_per_gpu = train_batch_size " + str(train) + " // dp " + str(dp) + " // " +
           "gradient_accumulation_steps " + str(acc) + " = " + str(micro) + " (arguments.py:838-841)");
  } else if (mb) {
    micro = *mb, acc = gas_given;
    auto g = checked_product({micro, acc, dp});
    if (!g) return b.error(k.line("train_micro_batch_size_per_gpu"), "micro x accumulation x dp overflows");
    train = *g;
    b.note("train_batch_size = micro " + str(micro) + " x gradient_accumulation_steps " + str(acc) + " x dp " +
           str(dp) + " = " + str(train) + " (arguments.py:844-846)");
  } else {
    return b.error(0, "neither train_batch_size nor train_micro_batch_size_per_gpu: NeoX asserts \"Either "
                      "train_batch_size or train_micro_batch_size_per_gpu needs to be provided\" "
                      "(arguments.py:858-862)");
  }
  if (micro < 1 || acc < 1 || train < 1) {
    return b.error(k.line(mb ? "train_micro_batch_size_per_gpu" : "train_batch_size"),
                   "batch " + str(train) + " = micro " + str(micro) + " x accumulation " + str(acc) + " x dp " +
                       str(dp) + ": NeoX asserts each is > 0 (arguments.py:866-878)");
  }
  auto product = checked_product({micro, acc, dp});
  if (!product || *product != train) {
    return b.error(k.line("train_batch_size"),
                   "train_batch_size " + str(train) + " != micro " + str(micro) + " x gradient_accumulation_steps " +
                       str(acc) + " x dp " + str(dp) + ": NeoX asserts it (arguments.py:879-883)");
  }
  t["global_batch"] = train;
  t["micro_batch"] = micro;
  t["grad_accumulation"] = acc;
  b.locate("/training/micro_batch", k.line("train_micro_batch_size_per_gpu"));
  b.locate("/training/global_batch", k.line("train_batch_size"));
  b.locate("/training/grad_accumulation", k.line("gradient_accumulation_steps"));
  return core::Status::ok();
}

// arguments.py:966-990: fp16.enabled sets precision "fp16", bf16.enabled "bfloat16", a precision
// key that disagrees is an assertion; none of them: fp32. params_dtype (:731-741) follows it.
core::Result<std::string> neox_precision(neox::NeoxKeys& k, PlanBuilder& b) {
  PLANCK_IMPORT_TRY(precision, k.string("precision"));
  PLANCK_IMPORT_TRY(fp16, k.sub_boolean("fp16", "enabled"));
  PLANCK_IMPORT_TRY(bf16, k.sub_boolean("bf16", "enabled"));
  std::string p = precision.value_or("");
  for (const auto& [on, name, key] : {std::tuple{fp16.value_or(false), "fp16", "fp16"},
                                      std::tuple{bf16.value_or(false), "bfloat16", "bf16"}}) {
    if (!on) continue;
    if (p.empty()) {
      p = name;
      b.note(std::string(key) + ".enabled: precision " + name + " (arguments.py:967-979)");
    } else if (p != name) {
      return b.error(k.line(key), std::string(key) + ".enabled with precision " + p + ": NeoX asserts \"DeepSpeed " +
                                      key + " field was set but precision conflicts\" (arguments.py:971-979)");
    }
  }
  if (fp16.value_or(false) && !neox_scalar(k.get("fp16"), "type").empty()) {
    b.note("fp16.type is not read by NeoX (arguments.py:967 reads fp16.enabled): precision fp16");
  }
  if (p.empty() || p == "fp32") return std::string("fp32");
  if (p == "fp16") return std::string("fp16");
  if (p == "bfloat16") return std::string("bf16");
  return b.error(k.line("precision"), "precision '" + p + "' is not fp16, fp32 or bfloat16 (neox_args.py:102)");
}

// zero_optimization.cpu_offload (DeepSpeed's older spelling) or offload_optimizer.device; the
// gradient buffer's dtype (data_types.grad_accum_dtype): DeepSpeed's BF16_Optimizer keeps a full
// fp32 buffer for bf16 at ZeRO stage 1 without offload (the DeepSpeed importer's rule).
void neox_offload_and_accum(neox::NeoxKeys& k, PlanBuilder& b, std::int64_t stage, const std::string& dtype,
                            nlohmann::ordered_json& t) {
  const YAML::Node zero = k.get("zero_optimization");
  const bool offload = (neox_scalar(zero, "cpu_offload") == "true" || neox_scalar(zero, "cpu_offload") == "True") ||
                       (neox_scalar(neox_child(zero, "offload_optimizer"), "device") != "" &&
                        neox_scalar(neox_child(zero, "offload_optimizer"), "device") != "none");
  if (offload && stage >= 1) {
    t["offload_optimizer"] = "cpu";
    b.note("zero_optimization offload: optimizer states and step on the host");
  }
  std::string acc = neox_scalar(k.get("data_types"), "grad_accum_dtype");
  if (acc.empty()) return;
  if (acc == "float32") acc = "fp32";
  if (acc == "bfloat16") acc = "bf16";
  if (acc == dtype) return;
  if (acc == "fp32" && dtype == "bf16" && stage == 1 && !offload) {
    t["grad_accum_dtype"] = "fp32";
    b.locate("/training/grad_accum_dtype", k.line("data_types"));
    b.note("data_types.grad_accum_dtype fp32 with bf16 at ZeRO stage 1: DeepSpeed's BF16_Optimizer, a full fp32 "
           "gradient buffer");
    return;
  }
  b.unmodelled("data_types.grad_accum_dtype " + acc, k.line("data_types"),
               "gradients priced in " + dtype + " (planck models the fp32 buffer only for bf16 at ZeRO stage 1)");
}

}  // namespace

bool is_neox_config(std::string_view text) { return !neox_mark(text).key.empty(); }

core::Result<ImportResult> import_neox(std::string_view text, const std::string& path, const ImportOptions& options) {
  PlanBuilder b("neox", path);
  if (!options.sets.empty()) {
    return core::Status::error("--set: planck does not apply it to a GPT-NeoX YAML yet; edit " + path + " instead");
  }
  PLANCK_IMPORT_TRY(root, load_omegaconf_yaml(std::string(text), b));
  if (neox_mark_of(root).key.empty()) {
    return b.error(0, "not a GPT-NeoX config: no top-level pipe_parallel_size or model_parallel_size, nor "
                      "num_layers, hidden_size and num_attention_heads with NeoX's training keys");
  }
  neox::NeoxKeys k(b);
  if (auto st = k.add(root, ""); !st) return st;
  for (const std::string& file : options.merge_files) {
    auto other = core::read_input(file, core::kMaxConfigBytes, core::kConfigLimitName);
    if (!other) return core::Status::error("--with " + file + ": " + other.message());
    if (other->find('\0') != std::string::npos) {
      return core::Status::error(file + ": contains a NUL byte; not a text config");
    }
    PlanBuilder fb("neox", file);
    PLANCK_IMPORT_TRY(more, load_omegaconf_yaml(*other, fb));
    if (!more.IsMap() && !more.IsNull()) return fb.error(0, "not a YAML mapping of NeoX keys");
    if (auto st = k.add(more, file); !st) return st;
  }
  k.warn_unknown();
  if (options.merge_files.empty()) {
    b.note("one GPT-NeoX file: the other YAML files a `deepy.py train.py a.yml b.yml` run merges are not read "
           "(name them with --with FILE)");
  } else {
    std::string files;
    for (const std::string& f : options.merge_files) files += ", " + f;
    b.note("GPT-NeoX files merged as deepy.py merges them, in order: " + path + files);
  }
  // The DeepSpeed runner's num_nodes / num_gpus (deepspeed_args.py:311, :316), when the config gives them.
  PLANCK_IMPORT_TRY(nodes, k.integer("num_nodes"));
  PLANCK_IMPORT_TRY(gpus, k.integer("num_gpus"));
  ConfigWorld cw;
  if (nodes && *nodes > 0) cw.nodes = nodes;
  if (gpus && *gpus > 0) cw.gpus_per_node = gpus;
  if (cw.nodes || cw.gpus_per_node) cw.source = "num_nodes / num_gpus in the config";
  PLANCK_IMPORT_TRY(world, b.resolve_world(options, cw));
  b.set_cluster(world);

  PLANCK_IMPORT_TRY(pp_v, k.integer("pipe_parallel_size"));
  PLANCK_IMPORT_TRY(mp_v, k.integer("model_parallel_size"));
  const std::int64_t pp_raw = pp_v.value_or(0);  // neox_args.py:60
  const std::int64_t pp = pp_raw >= 1 ? pp_raw : 1, mp = mp_v.value_or(1) >= 1 ? mp_v.value_or(1) : 1;
  auto pm = checked_mul(pp, mp);
  if (!pm || world.size % *pm != 0) {
    return b.error(k.line("model_parallel_size"),
                   "world " + str(world.size) + " is not a multiple of pipe_parallel_size " + str(pp) +
                       " x model_parallel_size " + str(mp) + ": NeoX raises (arguments.py:926-934)");
  }
  const std::int64_t dp = world.size / *pm;
  b.set_mesh({"pp", "dp", "tp"}, {pp, dp, mp});
  b.locate("/mesh/shape/0", k.line("pipe_parallel_size"));
  b.locate("/mesh/shape/2", k.line("model_parallel_size"));
  b.note("mesh pp x dp x tp = " + str(pp) + " x " + str(dp) + " x " + str(mp) +
         ": DeepSpeed's PipeModelDataParallelTopology, pipe outermost, model innermost (initialize.py:166-170)");
  b.note(pp_raw >= 1 ? "pipe_parallel_size " + str(pp_raw) + ": a DeepSpeed PipelineModule of " + str(pp) + " stages"
                     : std::string("pipe_parallel_size 0: the model runs as a plain sequential module, no pipeline "
                                   "engine (arguments.py:1083-1085)"));

  PLANCK_IMPORT_TRY(stage_v, k.sub_integer("zero_optimization", "stage"));
  const std::int64_t stage = stage_v.value_or(0);  // ZERO_DEFAULTS (arguments.py:71-80)
  if (stage < 0 || stage > 3) return b.error(k.line("zero_optimization"), "zero_optimization.stage must be 0-3");
  if (pp_raw >= 1 && stage >= 2) {
    return b.error(k.line("zero_optimization"),
                   "zero_optimization.stage " + str(stage) + " with pipe_parallel_size " + str(pp_raw) +
                       ": DeepSpeed's "
                   "PipelineEngine asserts \"ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism\" "
                   "(deepspeed/runtime/pipe/engine.py); set pipe_parallel_size 0 or ZeRO stage 0-1");
  }
  static const char* kStages[] = {"ddp", "zero1", "zero2", "zero3"};
  nlohmann::ordered_json par;
  par["data_parallel"] = kStages[stage];
  PLANCK_IMPORT_TRY(sp, k.boolean("sequence_parallel", false));  // neox_args.py:88
  par["sequence_parallel"] = sp && mp > 1;
  b.plan()["parallelism"] = par;
  b.locate("/parallelism/data_parallel", k.line("zero_optimization"));
  b.set_data_rank_program({"dp"}, "DeepSpeed's data-parallel group rank (PipeModelDataParallelTopology)");

  nlohmann::ordered_json t;
  if (auto st = neox_batch(k, b, dp, t); !st) return st;
  PLANCK_IMPORT_TRY(seq, k.integer("seq_length"));
  if (seq) {
    t["seq_len"] = *seq;
    b.locate("/training/seq_len", k.line("seq_length"));
  }
  t["grad_sync"] = stage >= 2 ? "every_microbatch" : "last_microbatch";
  t["stack"] = "deepspeed";
  PLANCK_IMPORT_TRY(dtype, neox_precision(k, b));
  t["param_dtype"] = dtype;
  // DeepSpeed's fp32_allreduce (deepspeed_args.py:72): gradients all-reduced in fp32.
  PLANCK_IMPORT_TRY(fp32_allreduce, k.boolean("fp32_allreduce", false));
  t["reduce_dtype"] = fp32_allreduce ? std::string("fp32") : dtype;
  neox_offload_and_accum(k, b, stage, dtype, t);
  if (auto st = neox::read_neox_model(k, b, mp, t); !st) return st;
  if (auto st = neox::read_neox_unpriced(k, b, mp); !st) return st;
  b.plan()["training"] = t;
  std::string rest;
  for (const std::string& key : k.unread()) rest += (rest.empty() ? "" : ", ") + key;
  if (!rest.empty()) {
    b.note("keys planck does not read, taken as not changing the layout, memory or time it prices (logging, "
           "data, checkpointing, learning-rate schedule, initialisation, dropout, fusions): " + rest);
  }
  return b.finish();
}

}  // namespace planck::import
