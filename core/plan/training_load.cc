// The plan's "training" section (docs/plan-format.md#training): batch, dtypes, optimizer,
// activation checkpointing, attention, FP8 and the MFU override.

#include "core/plan/training_load.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/plan/trainable.h"

namespace planck::core {

void load_training(SchemaReader& r_, const nlohmann::json& v, Plan& plan) {
  if (!r_.is_object(v, "/training", "'training'")) return;
  r_.check_keys(
      v, "/training",
      {"global_batch", "micro_batch", "seq_len", "grad_accumulation", "grad_sync", "param_dtype", "reduce_dtype",
       "optimizer", "activation_checkpointing", "recompute_every", "recompute_num_layers", "attention", "fp8", "stack",
       "attention_kernel", "cross_entropy", "mfu", "optimizer_state_dtype", "master_dtype", "grad_accum_dtype",
       "offload_optimizer", "offload_params", "frozen", "lora_rank", "lora_targets", "cuda_graphs", "mtp_layers",
       "recompute_modules"});
  Training t;
  if (v.contains("global_batch")) t.global_batch = r_.integer(v["global_batch"], "/training/global_batch", 1, kMaxCount);
  if (v.contains("micro_batch")) {
    if (auto n = r_.integer(v["micro_batch"], "/training/micro_batch", 1, kMaxCount)) t.micro_batch = *n;
  }
  if (v.contains("seq_len")) t.seq_len = r_.integer(v["seq_len"], "/training/seq_len", 1, kMaxCount);
  if (v.contains("grad_accumulation")) {
    t.grad_accumulation = r_.integer(v["grad_accumulation"], "/training/grad_accumulation", 1, kMaxCount);
  }
  if (v.contains("grad_sync")) {
    if (auto s = r_.choice(v["grad_sync"], "/training/grad_sync",
                           {"every_microbatch", "last_microbatch", "last_microbatch_replicate"})) {
      t.grad_sync = *parse_grad_sync(*s);
    }
  }
  for (auto [key, field] : {std::pair{"param_dtype", &t.param_dtype}, std::pair{"reduce_dtype", &t.reduce_dtype}}) {
    if (!v.contains(key)) continue;
    std::string p = std::string("/training/") + key;
    if (auto s = r_.string(v[key], p)) {
      if (auto d = parse_dtype(*s)) *field = *d;
      else r_.error(p, "unknown dtype \"" + *s + "\"", "use fp32, bf16, fp16 or fp8");
    }
  }
  if (v.contains("optimizer")) {
    if (auto s = r_.choice(v["optimizer"], "/training/optimizer", optimizer_names())) t.optimizer = *s;
  }
  // Optimizer precision: states and master weights in fp32 or bf16 (DeepSpeed bf16_optimizer_states,
  // bf16_master_weights_and_grads).
  if (v.contains("optimizer_state_dtype")) {
    if (auto s = r_.choice(v["optimizer_state_dtype"], "/training/optimizer_state_dtype", {"fp32", "bf16"})) {
      t.optimizer_state_dtype = *parse_dtype(*s);
    }
  }
  if (v.contains("grad_accum_dtype")) {
    if (auto s = r_.choice(v["grad_accum_dtype"], "/training/grad_accum_dtype", {"fp32", "bf16", "fp16"})) {
      t.grad_accum_dtype = *parse_dtype(*s);
    }
  }
  if (v.contains("master_dtype")) {
    if (auto s = r_.choice(v["master_dtype"], "/training/master_dtype", {"fp32", "bf16", "none"})) {
      if (*s == "none")
        t.no_master = true;
      else
        t.master_dtype = *parse_dtype(*s);
    }
  }
  for (auto [key, field] : {std::pair{"offload_optimizer", &t.offload_optimizer},
                            std::pair{"offload_params", &t.offload_params}}) {
    if (!v.contains(key)) continue;
    const std::string p = std::string("/training/") + key;
    if (auto s = r_.choice(v[key], p, {"none", "cpu", "nvme"})) *field = *parse_offload_device(*s);
  }
  if (v.contains("frozen")) {
    if (auto b = r_.boolean(v["frozen"], "/training/frozen")) t.frozen = *b;
  }
  if (v.contains("lora_rank")) {
    if (auto n = r_.integer(v["lora_rank"], "/training/lora_rank", 1, 1 << 20)) t.lora_rank = *n;
  }
  if (v.contains("lora_targets")) {
    if (r_.string_list(v["lora_targets"], "/training/lora_targets")) {
      for (std::size_t i = 0; i < v["lora_targets"].size(); ++i) {
        const std::string p = "/training/lora_targets/" + std::to_string(i);
        if (auto n = r_.choice(v["lora_targets"][i], p, lora_target_names())) t.lora_targets.push_back(*n);
      }
      if (!v.contains("lora_rank")) {
        r_.error("/training/lora_targets", "lora_targets without lora_rank", "give the adapters' rank in lora_rank");
      }
    }
  }
  if (v.contains("activation_checkpointing")) {
    if (auto s = r_.choice(v["activation_checkpointing"], "/training/activation_checkpointing",
                           {"none", "selective", "selective_attention", "full"})) {
      t.activation_checkpointing = *parse_checkpointing(*s);
    }
  }
  // Partial recompute narrows full checkpointing; one way at a time.
  for (auto [key, field] :
       {std::pair{"recompute_every", &t.recompute_every}, std::pair{"recompute_num_layers", &t.recompute_num_layers}}) {
    if (!v.contains(key)) continue;
    const std::string p = std::string("/training/") + key;
    *field = r_.integer(v[key], p, 1, kMaxCount);
    if (*field && t.activation_checkpointing != Checkpointing::kFull) {
      r_.error(p,
               std::string(key) + " narrows full activation checkpointing, but activation_checkpointing is \"" +
                   to_string(t.activation_checkpointing) + "\"",
               std::string("set \"activation_checkpointing\": \"full\" or drop ") + key);
    }
  }
  if (t.recompute_every && t.recompute_num_layers) {
    r_.error("/training/recompute_num_layers", "recompute_every and recompute_num_layers both set",
             "keep one: recompute_every (torchtitan layer SAC) or recompute_num_layers (Megatron block)");
  }
  if (v.contains("attention")) {
    if (auto s = r_.choice(v["attention"], "/training/attention", {"flash", "standard"})) {
      t.attention = *parse_attention(*s);
    }
  }
  if (v.contains("fp8")) {
    if (auto s = r_.choice(v["fp8"], "/training/fp8", fp8_recipe_names())) {
      t.fp8 = *parse_fp8_recipe(*s);
    }
  }
  if (v.contains("stack")) {
    if (auto s = r_.choice(v["stack"], "/training/stack", stack_names())) {
      t.stack = *parse_stack(*s);
      t.stack_given = true;
    }
  }
  if (v.contains("attention_kernel")) {
    if (auto s = r_.choice(v["attention_kernel"], "/training/attention_kernel", attention_kernel_names())) {
      t.attention_kernel = parse_attention_kernel(*s);
    }
  }
  if (v.contains("cross_entropy")) {
    if (auto s = r_.choice(v["cross_entropy"], "/training/cross_entropy", cross_entropy_names())) {
      t.cross_entropy = *parse_cross_entropy(*s);
    }
  }
  if (v.contains("mtp_layers")) {
    if (auto n = r_.integer(v["mtp_layers"], "/training/mtp_layers", 0, 64)) t.mtp_layers = *n;
  }
  // A list of names from `known`, each once; another name is an error at its index.
  auto names = [&](const char* key, const std::vector<std::string>& known, const std::string& what,
                   const std::string& fix) -> std::optional<std::vector<std::string>> {
    const std::string at = std::string("/training/") + key;
    auto list = r_.string_list(v[key], at);
    if (!list) return std::nullopt;
    std::vector<std::string> out;
    for (std::size_t i = 0; i < list->size(); ++i) {
      const std::string& n = (*list)[i];
      if (std::find(known.begin(), known.end(), n) == known.end()) {
        r_.error(at + "/" + std::to_string(i), "unknown " + what + " \"" + n + "\"", fix);
      } else if (std::find(out.begin(), out.end(), n) == out.end()) {
        out.push_back(n);
      }
    }
    return out;
  };
  if (v.contains("cuda_graphs")) {
    if (auto list = names("cuda_graphs", cuda_graph_scope_names(), "CUDA graph scope",
                          "use layer, full_iteration, attn, mlp, moe, moe_router or moe_preprocess (Megatron's "
                          "--cuda-graph-modules)")) {
      t.cuda_graphs = std::move(*list);
    }
  }
  if (v.contains("recompute_modules")) {
    if (auto list = names("recompute_modules", recompute_module_names(), "recompute module",
                          "use core_attn, moe_act, layernorm, mla_up_proj, mlp, moe or shared_experts (Megatron's "
                          "--recompute-modules)")) {
      t.recompute_modules = std::move(*list);
      if (t.activation_checkpointing != Checkpointing::kSelectiveAttention) {
        r_.error("/training/recompute_modules",
                 "recompute_modules needs activation_checkpointing \"selective_attention\"",
                 "set activation_checkpointing to selective_attention (Megatron's --recompute-granularity selective) "
                 "or drop recompute_modules");
      }
    }
  }
  if (v.contains("mfu")) {
    if (auto x = r_.number(v["mfu"], "/training/mfu", 1e-4, 1.0)) t.mfu = *x;
  }
  plan.training = t;
}

}  // namespace planck::core
