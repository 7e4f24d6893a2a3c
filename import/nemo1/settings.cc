// NeMo 1.x precision, optimizer, recompute and FP8 keys -> Megatron-LM flags, and the settings NeMo
// reads that planck does not price (setting-unmodelled). NVIDIA/NeMo@8cfedd7 (model.cc lists the
// lines of megatron_base_model.py and megatron_gpt_model.py cited here).

#include <string>

#include "import/nemo1/reader.h"

namespace planck::import {

namespace {

// trainer.precision strings (utils_funcs.py:43-57 torch_dtype_from_precision): the dtype, or "".
std::string nemo1_dtype(const std::string& precision) {
  if (precision == "bf16" || precision == "bf16-mixed") return "bf16";
  if (precision == "16" || precision == "16-mixed") return "fp16";
  if (precision == "32" || precision == "32-true") return "fp32";
  return "";
}

core::Status nemo1_recompute(Nemo1Reader& r, Nemo1Args& args) {
  PlanBuilder& b = r.builder();
  PLANCK_IMPORT_TRY(granularity, r.text("model.activations_checkpoint_granularity"));
  PLANCK_IMPORT_TRY(method, r.text("model.activations_checkpoint_method"));
  PLANCK_IMPORT_TRY(layers, r.integer("model.activations_checkpoint_num_layers"));
  if (!granularity) {
    if (method || layers) {
      b.note("activations_checkpoint_method / _num_layers without activations_checkpoint_granularity: no "
             "recompute (Megatron-Core reads them only with recompute_granularity full)");
    }
    return core::Status::ok();
  }
  const int line = r.line("model.activations_checkpoint_granularity");
  if (*granularity != "selective" && *granularity != "full") {
    return b.error(line, "activations_checkpoint_granularity '" + *granularity +
                             "': Megatron-Core's TransformerConfig accepts only full or selective");
  }
  args.add("recompute-granularity", *granularity, line);
  if (*granularity == "full") {
    if (method) args.add("recompute-method", *method, r.line("model.activations_checkpoint_method"));
    if (layers) args.add("recompute-num-layers", str(*layers), r.line("model.activations_checkpoint_num_layers"));
  }
  for (const char* key : {"num_micro_batches_with_partial_activation_checkpoints",
                          "activations_checkpoint_layers_per_pipeline"}) {
    const std::string k = std::string("model.") + key;
    PLANCK_IMPORT_TRY(n, r.integer(k));
    if (n && *n > 0) {
      b.unpriced_saving(k, r.line(k), "recompute priced on every micro-batch and pipeline stage alike");
    }
  }
  return core::Status::ok();
}

// model.fp8: the legacy model (mcore_gpt false) with Transformer Engine puts its layers under
// fp8_autocast with DelayedScaling in fp8_e4m3 or fp8_hybrid format (nemo/collections/nlp/modules/
// common/megatron/transformer.py:1065-1080); the Megatron-Core path's TransformerConfig.fp8 is None
// (megatron_base_model.py:589), which planck does not follow further.
core::Status nemo1_fp8(Nemo1Reader& r, Nemo1Args& args) {
  PLANCK_IMPORT_TRY(fp8, r.boolean("model.fp8"));
  if (!fp8.value_or(false)) return core::Status::ok();
  PLANCK_IMPORT_TRY(mcore, r.boolean("model.mcore_gpt"));
  PLANCK_IMPORT_TRY(te, r.boolean("model.transformer_engine"));
  PLANCK_IMPORT_TRY(e4m3, r.boolean("model.fp8_e4m3"));
  PLANCK_IMPORT_TRY(hybrid, r.boolean("model.fp8_hybrid"));
  const int line = r.line("model.fp8");
  if (!mcore.value_or(false) && te.value_or(false) && (e4m3.value_or(false) || hybrid.value_or(false))) {
    args.add("fp8-format", e4m3.value_or(false) ? "e4m3" : "hybrid", line);
    PLANCK_IMPORT_TRY(params, r.boolean("model.fp8_params"));
    if (params.value_or(false)) args.add("fp8-param-gather", "", r.line("model.fp8_params"));
    return core::Status::ok();
  }
  r.builder().unmodelled("model.fp8", line,
                         "priced without FP8: NeMo's Megatron-Core path sets TransformerConfig.fp8 to None "
                         "(megatron_base_model.py:589) and the legacy one needs transformer_engine and fp8_e4m3 or "
                         "fp8_hybrid; where this NeMo turns FP8 on is not followed");
  return core::Status::ok();
}

}  // namespace

core::Status nemo1_precision(Nemo1Reader& r, Nemo1Args& args) {
  PlanBuilder& b = r.builder();
  const bool own = r.set("model.precision");
  const std::string key = own ? "model.precision" : "trainer.precision";
  PLANCK_IMPORT_TRY(precision, r.text(key));
  // PyTorch Lightning's Trainer defaults to "32-true".
  const std::string dtype = nemo1_dtype(precision.value_or("32-true"));
  if (dtype.empty()) {
    return b.error(r.line(key), key + " '" + precision.value_or("") + "': NeMo raises ValueError('Could not parse "
                                "the precision') (utils_funcs.py:43-57: bf16, bf16-mixed, 16, 16-mixed, 32, 32-true)");
  }
  if (!precision) b.note("trainer.precision unset: PyTorch Lightning's 32-true");
  PLANCK_IMPORT_TRY(o2, r.boolean("model.megatron_amp_O2"));
  if (dtype != "fp32") {
    args.add(dtype, "", r.line(key));
    if (!o2.value_or(false)) {
      b.unmodelled("model.megatron_amp_O2 false", r.line("model.megatron_amp_O2"),
                   "fp32 parameters under " + dtype + " autocast (megatron_base_model.py:128-135, 1228) priced as " +
                       dtype + " parameters with fp32 master weights and gradients, as O2 keeps them");
    }
  }
  PLANCK_IMPORT_TRY(name, r.text("model.optim.name"));
  const std::string opt = name.value_or("fused_adam");
  const int opt_line = r.line("model.optim.name");
  if (opt == "distributed_fused_adam" || opt == "mcore_distributed_optim") {
    args.add("use-distributed-optimizer", "", opt_line);
    b.note("optim.name " + opt + ": optimizer states and master weights sharded over the data-parallel ranks, "
           "gradients reduce-scattered (the distributed optimizer)");
    PLANCK_IMPORT_TRY(grad, r.boolean("model.optim.overlap_grad_sync"));
    PLANCK_IMPORT_TRY(param, r.boolean("model.optim.overlap_param_sync"));
    if (grad.value_or(false)) args.add("overlap-grad-reduce", "", r.line("model.optim.overlap_grad_sync"));
    if (param.value_or(false)) args.add("overlap-param-gather", "", r.line("model.optim.overlap_param_sync"));
    PLANCK_IMPORT_TRY(inst, r.integer("model.optim.num_distributed_optimizer_instances"));
    if (inst) args.add("num-distributed-optimizer-instances", str(*inst),
                       r.line("model.optim.num_distributed_optimizer_instances"));
  } else if (opt == "sgd") {
    args.add("optimizer", "sgd", opt_line);
  } else if (opt != "fused_adam" && opt != "adam" && opt != "adamw" && opt != "megatron_fused_adam") {
    b.unmodelled("model.optim.name " + opt, opt_line, "AdamW's states assumed (12 bytes a parameter)");
  }
  if (auto st = nemo1_recompute(r, args); !st) return st;
  return nemo1_fp8(r, args);
}

core::Status nemo1_unmodelled(Nemo1Reader& r) {
  PlanBuilder& b = r.builder();
  PLANCK_IMPORT_TRY(fsdp, r.boolean("model.fsdp"));
  if (fsdp.value_or(false)) {
    PLANCK_IMPORT_TRY(strategy, r.text("model.fsdp_sharding_strategy"));
    b.unpriced_saving("model.fsdp", r.line("model.fsdp"),
                      "PyTorch FSDP (sharding strategy " + strategy.value_or("full") +
                          ") priced as Megatron's data parallelism, its weights and gradients replicated");
  }
  PLANCK_IMPORT_TRY(offload, r.boolean("model.cpu_offloading"));
  if (offload.value_or(false)) {
    b.unpriced_saving("model.cpu_offloading", r.line("model.cpu_offloading"),
                      "activations and weights kept on the GPU");
  }
  PLANCK_IMPORT_TRY(mapping, r.boolean("model.use_tp_pp_dp_mapping"));
  if (mapping.value_or(false)) {
    b.unmodelled("model.use_tp_pp_dp_mapping", r.line("model.use_tp_pp_dp_mapping"),
                 "ranks ordered as Megatron-Core's default tp-cp-ep-dp-pp, not tp-pp-dp");
  }
  auto drop = r.value("model.drop_layers");
  if (drop && drop->node.IsSequence() && drop->node.size() > 0) {
    b.unmodelled("model.drop_layers", r.line("model.drop_layers"), "every one of num_layers priced");
  }
  PLANCK_IMPORT_TRY(peft, r.text("model.peft.peft_scheme"));
  if (peft && *peft != "none") {
    b.unmodelled("model.peft.peft_scheme " + *peft, r.line("model.peft.peft_scheme"), "every weight priced as trained");
  }
  if (r.set("model.expert_tensor_parallel_size")) {
    b.unmodelled("model.expert_tensor_parallel_size", r.line("model.expert_tensor_parallel_size"),
                 "experts priced split as the tensor-parallel size (NeMo's initialize_model_parallel_for_nemo takes "
                 "no expert tensor size, megatron_base_model.py:195-215)");
  }
  PLANCK_IMPORT_TRY(spec, r.text("model.name"));
  if (spec && !spec->empty() && *spec != "te_gpt") {
    b.unmodelled("model.name " + *spec, r.line("model.name"),
                 "NeMo's layer spec '" + *spec + "' (megatron_gpt_model.py:145-169) priced as the GPT layer");
  }
  PLANCK_IMPORT_TRY(mcore, r.boolean("model.mcore_gpt"));
  if (!mcore.value_or(false)) {
    PLANCK_IMPORT_TRY(block, r.text("model.transformer_block_type"));
    PLANCK_IMPORT_TRY(headscale, r.boolean("model.headscale"));
    if (block && *block != "pre_ln") {
      b.unmodelled("model.transformer_block_type " + *block, r.line("model.transformer_block_type"),
                   "priced as pre_ln");
    }
    if (headscale.value_or(false)) b.unmodelled("model.headscale", r.line("model.headscale"), "not priced");
  }
  return core::Status::ok();
}

}  // namespace planck::import
