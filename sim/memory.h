#pragma once
// Memory per GPU: model states (ZeRO §3.1 mixed-precision accounting with fp32 master weights),
// the FSDP working set, unsharded accumulated gradients, and activations (Korthikanti et al.
// 2022; FlashAttention or standard attention; torchtitan and Megatron checkpointing), on the most-loaded GPU.

#include <cstdint>
#include <string>

#include "core/mesh/mesh.h"
#include "core/plan/plan.h"
#include "core/schedule/schedule.h"
#include "sim/compute.h"

namespace planck::sim {

// Bytes per parameter of one replica's states, given how they are sharded over `shard` ranks.
struct ModelStates {
  double params = 0, grads = 0, optimizer = 0;
  double total() const { return params + grads + optimizer; }
};

// Optimizer state bytes per parameter: adam/adamw 8 (m, v in fp32), sgd 4 (momentum), lion 4,
// adafactor 0 (factored second moment, negligible); plus a 4-byte fp32 master copy when the
// parameters are kept in 16 bits (ZeRO §3.1: K = 12 for mixed-precision Adam).
double optimizer_bytes_per_param(const std::string& optimizer, int param_bytes);

// ZeRO §3.1 / Fig. 1 and Megatron's theoretical_memory_usage.py, per GPU for `params` parameters:
//   none/ddp:        b_p + b_g + K                 (16 with fp16 grads, Megatron's 18 with fp32)
//   zero1:           b_p + b_g + K/d               (Megatron distributed optimizer: 6 + 12/d)
//   zero2:           b_p + (b_g + K)/d
//   zero3/fsdp/hsdp: (b_p + b_g + K)/d             (hsdp: d = the shard group, not r x s)
ModelStates model_states(double params, core::DataParallel dp, std::int64_t shard, int param_bytes,
                         int grad_bytes, const std::string& optimizer);

// Activation bytes of one transformer layer for one micro-batch on one rank (derivation in
// memory.cc), for the shape's tp / cp / sequence parallel, attention kind and checkpointing.
double layer_activation_bytes(const core::ModelSpec& m, bool moe_layer, const ComputeShape& shape, int act_bytes);

struct Memory {
  std::int64_t params = 0;       // parameter shards + FSDP's gathered working set
  std::int64_t grads = 0;        // gradient shards + unsharded accumulated gradients
  std::int64_t optimizer = 0;    // fp32 master weights + optimizer states
  std::int64_t activations = 0;  // saved activations of the in-flight micro-batches + logits
  std::int64_t peak = 0;
  std::int64_t capacity = 0;
};

// Memory of the busiest GPU for a plan lowered into `schedule`.
Memory memory(const core::Plan& plan, const core::Mesh& mesh, const core::Schedule& schedule);

// Under full activation checkpointing, the fewest recomputed layers whose peak stays within
// `limit` bytes: sets plan.training's recompute_num_layers (`block`: the first N layers of each
// pipeline chunk, Megatron --recompute-method block) or recompute_every (every N-th layer,
// torchtitan layer SAC) to the least recompute that fits, or clears both (every layer
// recomputed) when none narrower does. Memory falls as N rises (block) or falls (every), so a
// bisection over N costs a handful of memory() calls. Returns whether a narrower setting fits.
bool narrow_recompute(core::Plan& plan, const core::Mesh& mesh, const core::Schedule& schedule, bool block,
                      double limit);

}  // namespace planck::sim
