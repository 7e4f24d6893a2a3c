// NeMo 1.x model keys -> Megatron-LM flags, with NeMo's own defaults and start-up checks.
// NVIDIA/NeMo@8cfedd7, nemo/collections/nlp/models/language_modeling/:
//   megatron_base_model.py:122-123  precision = model.precision, else trainer.precision;
//   megatron_base_model.py:128-135  parameters in the half dtype only with megatron_amp_O2 (else fp32);
//   megatron_base_model.py:151-153  optim.name distributed_fused_adam / mcore_distributed_optim: the
//                                   distributed optimizer;
//   megatron_base_model.py:181-191  virtual_pipeline_model_parallel_size 1 is None; else
//                                   (num_layers // pp) % vp == 0 is asserted;
//   megatron_base_model.py:195-215  the parallel sizes (tp, ep, pp, vp, cp; defaults 1);
//   megatron_base_model.py:510-560  bias (True), qkv_bias (False), activation ('gelu'; *glu gated),
//                                   normalization ('LayerNorm'), activations_checkpoint_granularity /
//                                   _method / _num_layers -> recompute_*;
//   megatron_base_model.py:589      TransformerConfig.fp8 = None;
//   megatron_base_model.py:1019-1025 sequence_parallel off when tp is 1;
//   megatron_gpt_model.py:344       mcore_gpt defaults to False (the legacy GPTModel);
//   megatron_gpt_model.py:145-169   transformer_engine picks the TE layer spec, else the local one;
//   megatron_gpt_model.py:361-372   vp and ep need megatron_amp_O2; ep refuses Apex's distributed adam;
//   megatron_gpt_model.py:490-503   max_sequence_length = encoder_seq_length (512),
//                                   share_embeddings_and_output_weights (True), position_embedding_type
//                                   ('learned_absolute'), vocab = override_vocab_size or the padded one;
//   megatron_gpt_model.py:515-518   GQA only with mcore_gpt;
//   nemo/collections/nlp/parts/utils_funcs.py:43-57 (precision strings), :182-195 (activations).

#include <string>
#include <vector>

#include "import/megatron/flags.h"
#include "import/nemo1/reader.h"

namespace planck::import {

namespace {

struct Nemo1Flag {
  const char* key;   // under model.
  const char* flag;  // the Megatron-LM flag setting the same TransformerConfig field
};

// Positive integers copied as the flag of the same TransformerConfig / ModelParallelConfig field.
constexpr Nemo1Flag kNemo1Sizes[] = {
    {"tensor_model_parallel_size", "tensor-model-parallel-size"},
    {"pipeline_model_parallel_size", "pipeline-model-parallel-size"},
    {"context_parallel_size", "context-parallel-size"},
    {"expert_model_parallel_size", "expert-model-parallel-size"},
    {"micro_batch_size", "micro-batch-size"},
    {"global_batch_size", "global-batch-size"},
    {"num_layers", "num-layers"},
    {"hidden_size", "hidden-size"},
    {"ffn_hidden_size", "ffn-hidden-size"},
    {"num_attention_heads", "num-attention-heads"},
    {"kv_channels", "kv-channels"},
    {"make_vocab_size_divisible_by", "make-vocab-size-divisible-by"},
    {"override_vocab_size", "padded-vocab-size"},
    {"num_moe_experts", "num-experts"},
    {"moe_router_topk", "moe-router-topk"},
};

bool nemo1_megatron_flag(const std::string& flag) {
  for (const char* f : kMegatronFlags) {
    if (flag == f) return true;
  }
  return false;
}

core::Status nemo1_positive(Nemo1Reader& r, Nemo1Args& args, const char* key, const char* flag) {
  const std::string k = std::string("model.") + key;
  PLANCK_IMPORT_TRY(v, r.integer(k));
  if (!v) return core::Status::ok();
  if (*v < 1) return r.builder().error(r.line(k), k + " = " + str(*v) + " must be >= 1");
  args.add(flag, str(*v), r.line(k));
  return core::Status::ok();
}

}  // namespace

core::Status nemo1_layout(Nemo1Reader& r, Nemo1Args& args) {
  PlanBuilder& b = r.builder();
  for (const Nemo1Flag& s : kNemo1Sizes) {
    if (auto st = nemo1_positive(r, args, s.key, s.flag); !st) return st;
  }
  for (const char* key : {"micro_batch_size", "global_batch_size"}) {
    if (!r.set(std::string("model.") + key) && r.unfollowed().empty()) {
      return b.error(r.line("model"), std::string("model.") + key + " is not set: NeMo has no default for it "
                                      "(megatron_base_model.py:208-209 hands cfg.get('" + key + "') to Megatron's "
                                      "micro-batch calculator)");
    }
  }
  PLANCK_IMPORT_TRY(o2, r.boolean("model.megatron_amp_O2"));
  PLANCK_IMPORT_TRY(optim, r.text("model.optim.name"));
  PLANCK_IMPORT_TRY(vp, r.integer("model.virtual_pipeline_model_parallel_size"));
  PLANCK_IMPORT_TRY(ep, r.integer("model.expert_model_parallel_size"));
  if (vp && *vp < 1) return b.error(r.line("model.virtual_pipeline_model_parallel_size"), "vp must be >= 1");
  // megatron_gpt_model.py:361-365: interleaving and expert parallelism need O2.
  const bool vp_on = vp && *vp > 1, ep_on = ep && *ep > 1;
  if ((vp_on || ep_on) && !o2.value_or(false)) {
    const std::string key = vp_on ? "virtual_pipeline_model_parallel_size" : "expert_model_parallel_size";
    return b.error(r.line("model." + key), key + " " + str(vp_on ? *vp : *ep) + " without megatron_amp_O2: NeMo "
                   "raises ValueError('" + (vp_on ? "Virtual pipeline model" : "Expert") + " parallel" +
                   (vp_on ? " is" : "ism is") + " only supported when using megatron_amp_O2') "
                   "(megatron_gpt_model.py:361-365)");
  }
  if (vp_on) {
    const int line = r.line("model.virtual_pipeline_model_parallel_size");
    PLANCK_IMPORT_TRY(layers, r.integer("model.num_layers"));
    PLANCK_IMPORT_TRY(pp, r.integer("model.pipeline_model_parallel_size"));
    PLANCK_IMPORT_TRY(emb, r.boolean("model.account_for_embedding_in_pipeline_split"));
    PLANCK_IMPORT_TRY(loss, r.boolean("model.account_for_loss_in_pipeline_split"));
    if (layers && !(emb.value_or(false) && loss.value_or(false)) && (*layers / pp.value_or(1)) % *vp != 0) {
      return b.error(line, "num_layers " + str(*layers) + " // pipeline_model_parallel_size " + str(pp.value_or(1)) +
                           " is not a multiple of virtual_pipeline_model_parallel_size " + str(*vp) +
                           ": NeMo asserts 'Make sure the number of model chunks is the same across all pipeline "
                           "stages.' (megatron_base_model.py:184-191)");
    }
    args.add("num-virtual-stages-per-pipeline-rank", str(*vp), line);
  } else if (vp) {
    b.note("virtual_pipeline_model_parallel_size 1: no interleaving (NeMo sets it to None)");
  }
  if (ep_on && optim.value_or("") == "distributed_fused_adam") {
    return b.error(r.line("model.expert_model_parallel_size"),
                   "expert_model_parallel_size " + str(*ep) + " with optim.name distributed_fused_adam: NeMo raises "
                   "ValueError('Expert parallelism is currently not supporting Apex distributed optimizer, use Mcore "
                   "distributed optimizer instead') (megatron_gpt_model.py:367-372)");
  }
  PLANCK_IMPORT_TRY(sp, r.boolean("model.sequence_parallel"));
  if (sp.value_or(false)) args.add("sequence-parallel", "", r.line("model.sequence_parallel"));
  PLANCK_IMPORT_TRY(ub, r.boolean("model.ub_tp_comm_overlap"));
  if (ub.value_or(false) && sp.value_or(false)) args.add("tp-comm-overlap", "", r.line("model.ub_tp_comm_overlap"));
  if (ub.value_or(false) && !sp.value_or(false)) {
    b.note("ub_tp_comm_overlap without sequence_parallel: NeMo turns it off (megatron_base_model.py:1071-1078)");
  }
  // encoder_seq_length: the training sequence and the learned position table (GPTModel's
  // max_sequence_length); NeMo's default 512.
  PLANCK_IMPORT_TRY(seq, r.integer("model.encoder_seq_length"));
  const int seq_line = r.line("model.encoder_seq_length");
  if (seq && *seq < 1) return b.error(seq_line, "model.encoder_seq_length must be >= 1");
  if (!seq && r.unfollowed().empty()) b.note("model.encoder_seq_length unset: 512, NeMo's default");
  args.add("seq-length", str(seq.value_or(512)), seq_line);
  // The legacy GPTModel's table is max_position_embeddings (megatron_gpt_model.py:524).
  PLANCK_IMPORT_TRY(mcore, r.boolean("model.mcore_gpt"));
  std::optional<std::int64_t> table;
  if (!mcore.value_or(false)) {
    PLANCK_IMPORT_TRY(legacy_table, r.integer("model.max_position_embeddings"));
    table = legacy_table;
  }
  if (table) {
    args.add("max-position-embeddings", str(*table), r.line("model.max_position_embeddings"));
  } else {
    args.add("max-position-embeddings", str(seq.value_or(512)), seq_line);
  }
  PLANCK_IMPORT_TRY(data_seq, r.integer("model.data.seq_length"));
  if (data_seq && *data_seq != seq.value_or(512)) {
    b.unmodelled("model.data.seq_length " + str(*data_seq), r.line("model.data.seq_length"),
                 "the samples' length differs from model.encoder_seq_length; priced at encoder_seq_length " +
                     str(seq.value_or(512)));
  }
  PLANCK_IMPORT_TRY(ramp, r.text("model.rampup_batch_size"));
  if (r.set("model.rampup_batch_size")) {
    b.unmodelled("model.rampup_batch_size", r.line("model.rampup_batch_size"),
                 "the batch ramp-up is not priced: the step is priced at global_batch_size");
  }
  (void)ramp;
  return core::Status::ok();
}

core::Status nemo1_model(Nemo1Reader& r, Nemo1Args& args) {
  PlanBuilder& b = r.builder();
  PLANCK_IMPORT_TRY(mcore, r.boolean("model.mcore_gpt"));
  PLANCK_IMPORT_TRY(te, r.boolean("model.transformer_engine"));
  PLANCK_IMPORT_TRY(groups, r.integer("model.num_query_groups"));
  PLANCK_IMPORT_TRY(heads, r.integer("model.num_attention_heads"));
  if (!mcore.value_or(false)) {
    args.add("use-legacy-models", "", r.line("model.mcore_gpt"));
    args.add("transformer-impl", "local", r.line("model.mcore_gpt"));
    b.note(std::string(r.set("model.mcore_gpt") ? "mcore_gpt false" : "mcore_gpt unset (NeMo's default False)") +
           ": NeMo's legacy GPTModel, priced as Megatron's legacy model");
    PLANCK_IMPORT_TRY(flash, r.boolean("model.use_flash_attention"));
    if (flash.value_or(false)) args.add("use-flash-attn", "", r.line("model.use_flash_attention"));
    if (groups && heads && *groups != *heads) {
      return b.error(r.line("model.num_query_groups"), "num_query_groups " + str(*groups) + " with mcore_gpt off: "
                     "NeMo asserts 'Group Query Attention is only supported in Megatron Core' "
                     "(megatron_gpt_model.py:515-518)");
    }
  } else if (!te.value_or(false)) {
    args.add("transformer-impl", "local", r.line("model.transformer_engine"));
    b.note("transformer_engine off: Megatron-Core's local layer spec (megatron_gpt_model.py:155-158), whose "
           "attention materialises the scores");
  }
  if (groups) {
    if (*groups < 1) return b.error(r.line("model.num_query_groups"), "model.num_query_groups must be >= 1");
    args.add("group-query-attention", "", r.line("model.num_query_groups"));
    args.add("num-query-groups", str(*groups), r.line("model.num_query_groups"));
  }
  PLANCK_IMPORT_TRY(act, r.text("model.activation"));
  const std::string a = act.value_or("gelu");
  const int act_line = r.line("model.activation");
  if (a == "swiglu" || a == "fast-swiglu") {
    args.add("swiglu", "", act_line);
  } else if (a == "geglu" || a == "fast-geglu" || a == "reglu" || a == "fast-reglu") {
    args.add("swiglu", "", act_line);
    b.note("activation " + a + ": a gated MLP (three matrices), priced as SwiGLU");
  } else if (a == "squared-relu") {
    args.add("squared-relu", "", act_line);
  } else if (a != "gelu" && a != "approx-gelu") {
    return b.error(act_line, "activation '" + a + "': NeMo raises ValueError('Unsupported activation') "
                             "(utils_funcs.py:182-195: gelu, geglu, reglu, swiglu, squared-relu, fast-geglu, "
                             "fast-swiglu, fast-reglu, approx-gelu)");
  }
  PLANCK_IMPORT_TRY(norm, r.text("model.normalization"));
  const std::string n = norm.value_or("LayerNorm");
  if (n == "rmsnorm" || n == "RMSNorm") {
    args.add("normalization", "RMSNorm", r.line("model.normalization"));
  } else if (n == "layernorm1p") {
    b.note("normalization layernorm1p priced as LayerNorm (the same weights)");
  } else if (n != "layernorm" && n != "LayerNorm") {
    b.unmodelled("model.normalization " + n, r.line("model.normalization"), "priced as LayerNorm");
  }
  PLANCK_IMPORT_TRY(bias, r.boolean("model.bias"));
  if (!bias.value_or(true)) args.add("disable-bias-linear", "", r.line("model.bias"));
  PLANCK_IMPORT_TRY(qkv_bias, r.boolean("model.qkv_bias"));
  if (qkv_bias.value_or(false)) args.add("add-qkv-bias", "", r.line("model.qkv_bias"));
  PLANCK_IMPORT_TRY(tied, r.boolean("model.share_embeddings_and_output_weights"));
  if (!tied.value_or(true)) {
    args.add("untie-embeddings-and-output-weights", "", r.line("model.share_embeddings_and_output_weights"));
  }
  PLANCK_IMPORT_TRY(pos, r.text("model.position_embedding_type"));
  const std::string p = pos.value_or("learned_absolute");
  if (p == "rope" || p == "none") {
    args.add("position-embedding-type", p, r.line("model.position_embedding_type"));
  } else if (p != "learned_absolute") {
    b.unmodelled("model.position_embedding_type " + p, r.line("model.position_embedding_type"),
                 "priced as learned absolute positions");
  }
  PLANCK_IMPORT_TRY(library, r.text("model.tokenizer.library"));
  PLANCK_IMPORT_TRY(type, r.text("model.tokenizer.type"));
  const int tok_line = r.line("model.tokenizer.library");
  if (library == std::optional<std::string>("megatron") && type) {
    args.add("tokenizer-type", *type, r.line("model.tokenizer.type"));
  } else if (library == std::optional<std::string>("sentencepiece")) {
    args.add("tokenizer-type", "SentencePieceTokenizer", tok_line);
  } else if (library == std::optional<std::string>("huggingface") && type) {
    args.add("tokenizer-type", "HuggingFaceTokenizer", tok_line);
    args.add("tokenizer-model", *type, r.line("model.tokenizer.type"));
  }
  // Megatron-Core's MoE and MLA fields by their own names (build_transformer_config copies them,
  // megatron_base_model.py:600-613): the Megatron-LM flag of that name, read as a script's would be.
  for (const std::string& k : r.keys("model")) {
    const bool mla = k == "multi_latent_attention" || k == "q_lora_rank" || k == "kv_lora_rank" ||
                     k == "qk_head_dim" || k == "qk_pos_emb_head_dim" || k == "v_head_dim";
    if (k.rfind("moe_", 0) != 0 && !mla) continue;
    std::string flag = k;
    for (char& c : flag) c = c == '_' ? '-' : c;
    if (!nemo1_megatron_flag(flag) || args.flags.count(flag)) continue;
    auto v = r.value("model." + k);
    if (!v || v->null || !v->scalar || v->text == "false" || v->text == "False") continue;
    args.add(flag, v->text == "true" || v->text == "True" ? "" : v->text, r.line("model." + k));
  }
  return core::Status::ok();
}

}  // namespace planck::import
