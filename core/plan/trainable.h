#pragma once
// What a plan trains (docs/plan-format.md "training"): every weight, none (frozen), or LoRA
// adapters beside frozen weights. Memory (sim/memory.cc) and the gradient collectives
// (core/schedule) read it from here, so the two agree.

#include <cstdint>

#include "core/plan/plan.h"

namespace planck::core {

// LoRA adapter parameters of one whole transformer layer (not divided by tp): rank r on every
// linear, r x (in + out) each: q, k, v, o (MLA: its down/up projections as the same four) and,
// in a dense layer, the MLP's 2 or 3 matrices. An MoE layer's routed experts get none (PEFT's
// target_modules name the shared linears); its shared experts count as a dense MLP of that width.
double lora_layer_params(const ModelSpec& m, bool moe_layer, std::int64_t rank);

// True when the model's own weights take no gradient (frozen, or LoRA adapters beside them).
inline bool base_frozen(const Training& t) { return t.frozen || t.lora_rank > 0; }

}  // namespace planck::core
