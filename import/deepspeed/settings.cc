// DeepSpeed settings beyond the layout and the batch: precision, optimizer, offload, and the
// features planck does not price, each read or warned (docs/import.md "DeepSpeed").
// deepspeedai/DeepSpeed @edaa722.

#include <algorithm>
#include <cctype>
#include <string>

#include "core/plan/plan.h"
#include "import/deepspeed/reader.h"

namespace planck::import::ds {

core::Result<std::string> enabled_dtype(DsReader& r, PlanBuilder& b) {
  // runtime/config.py:825-828 @edaa722: fp16 and bf16 (or its older name bfloat16) both enabled is
  // asserted against at start-up. The section is looked up by its "enabled" key, so that a --set
  // bf16.enabled=true on a file without a bf16 section is seen.
  const std::string bf16 = r.at("/bf16/enabled") ? "/bf16" : "/bfloat16";
  if (r.flag("/fp16/enabled") && r.flag(bf16 + "/enabled")) {
    const int fp16_line = r.line("/fp16/enabled"), bf16_line = r.line(bf16 + "/enabled");
    return b.error(std::max(fp16_line, bf16_line),
                   "fp16.enabled and " + bf16.substr(1) + ".enabled are both true: DeepSpeed asserts \"bfloat16 "
                   "and fp16 modes cannot be simultaneously enabled\" at start-up (runtime/config.py "
                   "DeepSpeedConfig._initialize_params); enable one of them");
  }
  for (const char* key : {"bf16", "bfloat16", "fp16"}) {
    const nlohmann::json* e = r.at(std::string("/") + key + "/enabled");
    if (!e) continue;
    const std::string name = std::string(key) == "fp16" ? "fp16" : "bf16";
    if (e->is_boolean() && e->get<bool>()) return name;
    if (e->is_string() && e->get<std::string>() == "auto") {
      b.unmodelled(std::string(key) + ".enabled \"auto\"", r.line(std::string("/") + key + "/enabled"),
                   "the trainer sets it from --" + name + "; " + name + " assumed");
      return name;
    }
  }
  return std::string("fp32");
}

// torch_autocast {enabled (default false), dtype, lower_precision_safe_modules} (runtime/config.py
// get_torch_autocast_*, constants.py:244-249; engine.py:399-405 init_autocast_params @edaa722): the
// weights stay in the engine's dtype while the safe modules' matmuls run, save their activations
// and communicate their gradients in the autocast dtype, which no plan field states.
void read_torch_autocast(DsReader& r, PlanBuilder& b, const std::string& dtype) {
  if (!r.flag("/torch_autocast/enabled")) return;
  std::string cast = "the default autocast dtype";
  if (const nlohmann::json* d = r.at("/torch_autocast/dtype"); d && d->is_string()) {
    // DtypeEnum's spellings (runtime/config.py:101-106): torch.bfloat16, bf16, bfloat16, half, ...
    std::string name = d->get<std::string>();
    if (name.rfind("torch.", 0) == 0) name = name.substr(6);
    if (name == "half") name = "fp16";
    auto dt = core::parse_dtype(name);
    cast = dt ? core::to_string(*dt) : d->get<std::string>();
  }
  if (cast == dtype) {
    b.note("torch_autocast " + cast + ": the training dtype already, priced as " + dtype);
    return;
  }
  b.unmodelled("torch_autocast (" + cast + ")", r.line("/torch_autocast"),
               "priced in " + dtype + " throughout: autocast's " + cast + " matmuls, activations and gradient "
               "communication of the lower-precision-safe modules are not (compute and activation memory "
               "overstated)");
}

// elasticity {enabled, max_train_batch_size, micro_batch_sizes, ...} (runtime/config.py:729-780,
// elasticity/elasticity.py compute_elastic_config @edaa722): the batch is computed from the
// elastic settings and written over train_batch_size / micro / accumulation. With any of those
// keys in the file and ignore_non_elastic_batch_info false (the default) DeepSpeed raises.
core::Status check_elasticity(DsReader& r, PlanBuilder& b, bool command_line_batch) {
  const nlohmann::json* e = r.at("/elasticity/enabled");
  if (!e || !e->is_boolean() || !e->get<bool>()) return core::Status::ok();
  const int line = r.line("/elasticity");
  std::string given;
  for (const char* k : {"train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps"}) {
    if (r.at(std::string("/") + k)) given += (given.empty() ? "" : ", ") + std::string(k);
  }
  if (!given.empty() && !r.flag("/elasticity/ignore_non_elastic_batch_info")) {
    return b.error(line, "elasticity is enabled and the config also sets " + given + ": DeepSpeed raises "
                         "ElasticityConfigError \"One or more batch related parameters were found in your "
                         "ds_config ...\" at start-up (runtime/config.py DeepSpeedConfig.__init__); drop them or "
                         "set elasticity.ignore_non_elastic_batch_info true");
  }
  if (given.empty() && !command_line_batch) {
    return b.error(line, "elasticity computes the batch from max_train_batch_size and micro_batch_sizes "
                         "(elasticity.py compute_elastic_config), which planck does not follow: give the batch "
                         "DeepSpeed reports at start-up with --micro-batch N --global-batch N");
  }
  b.unmodelled("elasticity", line,
               "DeepSpeed's elastic batch (elasticity.py compute_elastic_config) is not computed: priced with " +
                   std::string(given.empty() ? "the command line's batch" : "the batch the file states (" + given +
                   "), which DeepSpeed replaces"));
  return core::Status::ok();
}

// optimizer.type (runtime/config.py: adam, adamw, lamb, onebitadam, zerooneadam, onebitlamb,
// lion, muon, adagrad, muadam, muadamw, musgd; matched without case) -> training.optimizer, and
// the bf16 section's optimizer precision (precision_config.py DeepSpeedBF16Config).
void read_optimizer(DsReader& r, PlanBuilder& b, nlohmann::ordered_json& t) {
  if (const nlohmann::json* o = r.at("/optimizer/type"); o && o->is_string()) {
    std::string name = o->get<std::string>();
    for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    // DeepSpeed's Adam defaults to adam_w_mode (decoupled weight decay).
    static const std::pair<const char*, const char*> kMap[] = {
        {"adam", "adamw"},        {"adamw", "adamw"},      {"fusedadam", "adamw"}, {"cpuadam", "adamw"},
        {"muadam", "adamw"},      {"muadamw", "adamw"},    {"lamb", "lamb"},       {"onebitadam", "onebit_adam"},
        {"zerooneadam", "onebit_adam"}, {"onebitlamb", "onebit_adam"}, {"lion", "lion"}, {"muon", "muon"},
        {"musgd", "sgd"},         {"sgd", "sgd"},          {"adagrad", "sgd"}};
    std::string mapped;
    for (const auto& [from, to] : kMap) {
      if (name == from) mapped = to;
    }
    if (mapped.empty()) {
      b.unmodelled("optimizer.type " + o->get<std::string>(), r.line("/optimizer/type"),
                   "not an optimizer planck prices; AdamW's states assumed (12 bytes a parameter)");
    } else {
      t["optimizer"] = mapped;
      if (name == "adagrad") b.note("optimizer Adagrad keeps one state a parameter: priced as sgd (momentum)");
      if (name == "onebitlamb") b.note("optimizer OneBitLamb: priced as 1-bit Adam (m, v and the error feedback)");
      if (mapped == "onebit_adam")
        b.note("optimizer " + o->get<std::string>() + ": the compressed all-reduce after freeze_step is priced as an "
               "uncompressed one (conservative)");
    }
  }
  const std::string bf16 = r.at("/bf16") ? "/bf16" : "/bfloat16";
  if (r.flag(bf16 + "/bf16_master_weights_and_grads")) {
    t["master_dtype"] = "bf16";
    b.note("bf16_master_weights_and_grads: the optimizer's master weights are bf16 (2 bytes a parameter)");
  }
  if (r.flag(bf16 + "/bf16_optimizer_states")) {
    t["optimizer_state_dtype"] = "bf16";
    b.note("bf16_optimizer_states: optimizer states in bf16");
  }
}

// zero_optimization.offload_optimizer / offload_param {"device": "cpu" | "nvme" | "none"}
// (offload_config.py); the older cpu_offload / cpu_offload_param booleans mean device cpu.
core::Status read_offload(DsReader& r, PlanBuilder& b, std::int64_t stage, nlohmann::ordered_json& t) {
  auto device = [&](const std::string& section, const char* legacy) -> core::Result<std::string> {
    if (const nlohmann::json* d = r.at("/zero_optimization/" + section + "/device")) {
      if (!d->is_string()) return b.error(r.line("/zero_optimization/" + section + "/device"),
                                          section + ".device must be \"cpu\", \"nvme\" or \"none\"");
      const std::string v = d->get<std::string>();
      if (v != "cpu" && v != "nvme" && v != "none") {
        return b.error(r.line("/zero_optimization/" + section + "/device"),
                       section + ".device \"" + v +
                           "\" is not cpu, nvme or none (offload_config.py OffloadDeviceEnum)");
      }
      return v;
    }
    return std::string(r.flag(std::string("/zero_optimization/") + legacy) ? "cpu" : "none");
  };
  PLANCK_IMPORT_TRY(opt, device("offload_optimizer", "cpu_offload"));
  PLANCK_IMPORT_TRY(par, device("offload_param", "cpu_offload_param"));
  const int opt_line = r.line("/zero_optimization/offload_optimizer");
  if (opt != "none") {
    if (stage == 0) {
      b.warn("offload_optimizer needs ZeRO stage 1, 2 or 3 (DeepSpeed refuses it at stage 0); not applied");
    } else {
      t["offload_optimizer"] = opt;
      b.locate("/training/offload_optimizer", opt_line);
      b.note("offload_optimizer " + opt + ": master weights, optimizer states and the gradient partition live in " +
             "host memory; the step runs on the host (ZeRO-Offload)");
      if (opt == "nvme")
        b.unmodelled("offload_optimizer.device nvme", r.line("/zero_optimization/offload_optimizer/device"),
                     "priced as cpu offload: the host link is priced, the NVMe reads and writes are not");
      if (const nlohmann::json* ratio = r.at("/zero_optimization/offload_optimizer/ratio");
          ratio && ratio->is_number() && ratio->get<double>() < 1.0) {
        b.unmodelled("offload_optimizer.ratio " + ratio->dump(), r.line("/zero_optimization/offload_optimizer/ratio"),
                     "the whole optimizer assumed offloaded (a partial Twin-Flow split is not modelled)");
      }
      if (r.flag("/zero_optimization/offload_optimizer/super_offload")) {
        b.unmodelled("offload_optimizer.super_offload", r.line("/zero_optimization/offload_optimizer/super_offload"),
                     "priced as plain ZeRO-Offload (SuperOffload's GH200 speculation is not modelled)");
      }
    }
  }
  if (par != "none") {
    const int line = r.line("/zero_optimization/offload_param");
    if (stage != 3) {
      b.warn("offload_param only applies to ZeRO stage 3 (stage is " + str(stage) + "); not applied");
    } else {
      t["offload_params"] = par;
      b.locate("/training/offload_params", line);
      b.note("offload_param " + par + ": parameter partitions live in host memory and are copied in for every "
             "forward and backward (ZeRO-Infinity)");
      if (par == "nvme")
        b.unmodelled("offload_param.device nvme", r.line("/zero_optimization/offload_param/device"),
                     "priced as cpu offload: the host link is priced, the NVMe reads are not");
    }
  }
  if (r.at("/zero_optimization/zenflow")) {
    b.unmodelled("zero_optimization.zenflow", r.line("/zero_optimization/zenflow"),
                 "ZenFlow's split of important gradients between GPU and host is not modelled; priced as the "
                 "offload settings alone say");
  }
  // DeepSpeed's own activation checkpointing (runtime/activation_checkpointing/config.py) acts only
  // where the model calls deepspeed.checkpointing; its memory options are not priced.
  for (const char* a : {"partition_activations", "cpu_checkpointing", "contiguous_memory_optimization"}) {
    if (!r.flag(std::string("/activation_checkpointing/") + a)) continue;
    const std::string setting = std::string("activation_checkpointing.") + a;
    const int line = r.line(std::string("/activation_checkpointing/") + a);
    const std::string assumed = "checkpointed activations priced whole on the GPU (set "
                                "training.activation_checkpointing in the plan for the model's own checkpointing)";
    // The contiguous buffer moves the checkpoints, it does not shrink them.
    if (std::string(a) == "contiguous_memory_optimization")
      b.unmodelled(setting, line, assumed);
    else
      b.unpriced_saving(setting, line, assumed);
  }
  for (const char* q : {"zero_quantized_weights", "zero_quantized_gradients", "zero_quantized_nontrainable_weights"}) {
    if (r.flag(std::string("/zero_optimization/") + q)) {
      b.unmodelled(std::string("zero_optimization.") + q, r.line(std::string("/zero_optimization/") + q),
                   "ZeRO++ quantized communication priced at the unquantized volume");
    }
  }
  return core::Status::ok();
}

namespace {

// A section that is on: an object whose "enabled" is true, or given with no "enabled" at all.
bool section_on(DsReader& r, const std::string& ptr) {
  const nlohmann::json* v = r.at(ptr);
  if (!v || !v->is_object()) return false;
  const nlohmann::json* e = r.at(ptr + "/enabled");
  return !e || (e->is_boolean() && e->get<bool>());
}

}  // namespace

void read_unpriced(DsReader& r, PlanBuilder& b, const std::string& dtype) {
  // DeepCompile (compile/config.py CompileConfig.deepcompile) rewrites ZeRO-3's gather / release
  // schedule and may free or offload activations; the other compile keys take effect when the
  // script calls engine.compile(), which the config cannot say.
  if (r.flag("/compile/deepcompile")) {
    b.unmodelled("compile.deepcompile", r.line("/compile/deepcompile"),
                 "priced as the eager ZeRO schedule (DeepCompile's reordered gathers, passes and activation "
                 "freeing or offloading are not)");
  } else if (r.at("/compile")) {
    b.unmodelled("compile", r.line("/compile"), "torch.compile (engine.compile()) not priced: eager kernels assumed");
  }
  // Sections whose training effect planck does not price (runtime/config.py @edaa722 reads each).
  static const std::pair<const char*, const char*> kSections[] = {
      {"/compression_training", "quantization-aware training / pruning / layer reduction not priced: the model "
                                "priced as configured"},
      {"/quantize_training", "MoQ quantization-aware training not priced: weights priced in the training dtype"},
      {"/weight_quantization", "weight quantization not priced: weights priced in the training dtype"},
      {"/sparse_attention", "sparse attention not priced: dense attention assumed"},
      {"/progressive_layer_drop", "skipped layers not priced: every layer runs every step"},
      {"/data_efficiency", "random-LTD token dropping and data sampling not priced: every token through every layer"},
      {"/curriculum_learning", "the curriculum's shorter sequences not priced: seq_len throughout"},
      {"/eigenvalue", "the eigenvalue computation's extra backward passes are not priced"},
      {"/hybrid_engine", "the RLHF hybrid engine's generation phase is not priced: training only"},
  };
  for (const auto& [ptr, assumed] : kSections) {
    if (section_on(r, ptr)) b.unmodelled(std::string(ptr + 1), r.line(ptr), assumed);
  }
  // Apex AMP (amp.enabled, false by default; engine.py amp_enabled()): O1 / O2 run the linears in
  // fp16 around the weights' dtype, which no plan field states.
  if (r.flag("/amp/enabled")) {
    b.unmodelled("amp", r.line("/amp"), "Apex AMP's fp16 compute not priced: compute and activations priced in " +
                                            dtype);
  }
}

// data_types.grad_accum_dtype (runtime/config.py; engine.py get_data_types @edaa722: absent, the
// model's dtype; DtypeEnum's spellings, config.py:101-106). Only _do_optimizer_sanity_check reads
// it (engine.py:1978-2021): bf16 with fp32 accumulation at ZeRO stage 1 without CPU offload picks
// BF16_Optimizer, whose gradient buffer is a full fp32 copy of the parameters
// (bf16_optimizer.py:176, zeros_like(..., dtype=grad_acc_dtype)); any other ZeRO stage ignores it;
// without ZeRO a dtype other than the model's raises (since v0.7.6).
core::Status read_grad_accum(DsReader& r, PlanBuilder& b, std::int64_t stage, const std::string& dtype,
                             nlohmann::ordered_json& t) {
  const nlohmann::json* g = r.at("/data_types/grad_accum_dtype");
  if (!g || g->is_null()) return core::Status::ok();
  const int line = r.line("/data_types/grad_accum_dtype");
  static const std::pair<const char*, const char*> kSpellings[] = {
      {"fp16", "fp16"}, {"torch.float16", "fp16"}, {"float16", "fp16"},   {"half", "fp16"},
      {"fp32", "fp32"}, {"torch.float32", "fp32"}, {"float32", "fp32"},   {"float", "fp32"},
      {"bf16", "bf16"}, {"torch.bfloat16", "bf16"}, {"bfloat16", "bf16"}, {"int8", "int8"}};
  std::string acc;
  for (const auto& [spelling, name] : kSpellings) {
    if (g->is_string() && g->get<std::string>() == spelling) acc = name;
  }
  if (acc.empty() || acc == "int8") {
    return b.error(line, "data_types.grad_accum_dtype " + g->dump() +
                             ": DeepSpeed accepts fp32, fp16 or bf16 (runtime/config.py DtypeEnum; int8 is no "
                             "gradient dtype) and raises at start-up otherwise");
  }
  if (acc == dtype) return core::Status::ok();
  if (stage == 0) {
    return b.error(line, "data_types.grad_accum_dtype " + acc + " with " + dtype +
                             " training and ZeRO off: DeepSpeed raises NotImplementedError \"unsupported mix of "
                             "model_dtype and grad_accum_dtype\" at start-up (engine.py _do_optimizer_sanity_check); "
                             "use ZeRO stage 1 for bf16 with fp32 accumulation, or drop grad_accum_dtype");
  }
  const bool cpu_offload = t.value("offload_optimizer", std::string("none")) == "cpu";
  if (stage == 1 && dtype == "bf16" && acc == "fp32" && !cpu_offload) {
    t["grad_accum_dtype"] = "fp32";
    b.locate("/training/grad_accum_dtype", line);
    b.note("grad_accum_dtype = fp32: bf16 with fp32 accumulation at ZeRO stage 1 runs BF16_Optimizer, a full fp32 "
           "gradient buffer (4 bytes a parameter, not sharded), reduced in reduce_dtype");
    return core::Status::ok();
  }
  b.warn(std::string("data_types.grad_accum_dtype ") + acc + " is ignored by DeepSpeed at ZeRO stage " + str(stage) +
         (cpu_offload ? " with CPU offload" : "") +
         " (engine.py reads it only to pick BF16_Optimizer: bf16, fp32, stage 1, no CPU offload): gradients in " +
         dtype);
  return core::Status::ok();
}

// runtime/engine.py @edaa722: _configure_basic_optimizer asserts 1-bit Adam, 0/1 Adam and 1-bit
// LAMB off ZeRO (:2152, :2159, :2166); _do_optimizer_sanity_check (:1986-1990) asserts that any
// other optimizer outside ZERO_SUPPORTED_OPTIMIZERS (runtime/zero/utils.py:45-48: Adam, AdamW,
// FusedAdam, the CPU Adam / Adagrad / Lion, Adagrad, FusedLion, Muon) runs under ZeRO only with
// zero_allow_untested_optimizer.
core::Status check_zero_optimizer(DsReader& r, PlanBuilder& b, std::int64_t stage) {
  // _do_optimizer_sanity_check (:1983-1985) asserts "Amp and ZeRO are not currently compatible".
  if (stage > 0 && r.flag("/amp/enabled")) {
    return b.error(r.line("/amp/enabled"), "amp (Apex AMP) with ZeRO stage " + str(stage) +
                                              ": DeepSpeed asserts \"Amp and ZeRO are not currently compatible\" "
                                              "(runtime/engine.py _do_optimizer_sanity_check); use fp16 or bf16");
  }
  // Without ZeRO, amp with a 16-bit mode raises NotImplementedError (engine.py:2006-2007 @edaa722).
  const bool bf16 = r.flag("/bf16/enabled") || r.flag("/bfloat16/enabled");
  if (stage == 0 && r.flag("/amp/enabled") && (r.flag("/fp16/enabled") || bf16)) {
    const std::string mode = r.flag("/fp16/enabled") ? "fp16" : r.flag("/bf16/enabled") ? "bf16" : "bfloat16";
    return b.error(r.line("/amp/enabled"), "amp (Apex AMP) with " + mode + ".enabled: DeepSpeed raises "
                                              "NotImplementedError \"Cannot enable both amp with (legacy) fp16 or "
                                              "bfloat16 mode\" at start-up (runtime/engine.py "
                                              "_do_optimizer_sanity_check); enable one of them");
  }
  const nlohmann::json* o = r.at("/optimizer/type");
  if (stage == 0 || !o || !o->is_string()) return core::Status::ok();
  const std::string given = o->get<std::string>();
  std::string name = given;
  for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const int line = r.line("/optimizer/type");
  static const std::pair<const char*, const char*> kNoZero[] = {
      {"onebitadam", "1bit-Adam"}, {"zerooneadam", "0/1 Adam"}, {"onebitlamb", "1bit-Lamb"}};
  for (const auto& [key, said] : kNoZero) {
    if (name != key) continue;
    return b.error(line, "optimizer " + given + " with ZeRO stage " + str(stage) + ": DeepSpeed asserts \"" + said +
                             " is not compatible with ZeRO\" (runtime/engine.py _configure_basic_optimizer); set "
                             "zero_optimization.stage 0 or use Adam / AdamW");
  }
  for (const char* ok : {"adam", "adamw", "adagrad", "lion", "muon"}) {
    if (name == ok) return core::Status::ok();
  }
  if (r.flag("/zero_allow_untested_optimizer")) {
    b.note("optimizer " + given + " under ZeRO: allowed by zero_allow_untested_optimizer (DeepSpeed warns)");
    return core::Status::ok();
  }
  return b.error(line, "optimizer " + given + " is not one ZeRO supports (runtime/zero/utils.py "
                           "ZERO_SUPPORTED_OPTIMIZERS) and DeepSpeed asserts at start-up (engine.py "
                           "_do_optimizer_sanity_check); add \"zero_allow_untested_optimizer\": true or use Adam / "
                           "AdamW");
}

}  // namespace planck::import::ds
