#pragma once
// What a plan trains (docs/plan-format.md "training"): every weight, none (frozen), or LoRA
// adapters beside frozen weights. Memory (sim/memory.cc) and the gradient collectives
// (core/schedule) read it from here, so the two agree.

#include <cstdint>
#include <string>
#include <vector>

#include "core/plan/plan.h"

namespace planck::core {

// The linears a LoRA adapter may sit on (training.lora_targets): q, k, v, o, the MLP's gate, up
// and down, each alone (PEFT's q_proj ... down_proj, torchtitan's wq ... w3), or fused as one
// matrix with one adapter (Megatron's linear_qkv and linear_fc1, torchtitan's wkv).
const std::vector<std::string>& lora_target_names();

// LoRA adapter parameters of one whole transformer layer (not divided by tp): rank r on each
// targeted linear, r x (in + out) each (absent targets: every linear, each alone): q, k, v, o (MLA:
// its down/up projections as the same four) and, in a dense layer, the MLP's 2 or 3 matrices. An
// MoE layer's routed experts get none (PEFT's target_modules name the shared linears); its shared
// experts count as a dense MLP of that width.
double lora_layer_params(const ModelSpec& m, bool moe_layer, const Training& t);

// The adapters of `dense_layers` dense and `moe_layers` MoE layers on one tensor-parallel rank.
double lora_params(const ModelSpec& m, const Training& t, std::int64_t dense_layers, std::int64_t moe_layers,
                   std::int64_t tp);

// True when the model's own weights take no gradient (frozen, or LoRA adapters beside them).
inline bool base_frozen(const Training& t) { return t.frozen || t.lora_rank > 0; }

}  // namespace planck::core
