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

// Bytes per trainable parameter the optimizer keeps (docs/simulator.md "Optimizers"): the
// master copy (4 when param_dtype is 16-bit, 2 with master_dtype bf16, 0 for fp32 parameters or
// master_dtype none:
// ZeRO §3.1's K = 12 for mixed-precision Adam) and its states, s bytes each (s = 4, or 2 under
// optimizer_state_dtype bf16): adam/adamw/lamb 2s (m, v), sgd (momentum), lion and muon s,
// adafactor 0 (factored second moment, no first moment: Shazeer & Stern 2018), adam8bit 2 (two
// 8-bit states, bitsandbytes), onebit_adam 3s (m, v and the compression error feedback,
// DeepSpeed onebit/adam.py worker_error). `matrix` false: a parameter Muon leaves to AdamW
// (embedding, output layer, norms).
struct OptimizerBytes {
  double master = 0, states = 0;
  double total() const { return master + states; }
};
OptimizerBytes optimizer_bytes(const core::Training& t, bool matrix = true);
// optimizer_bytes().total() for an optimizer name with fp32 states (the older signature).
double optimizer_bytes_per_param(const std::string& optimizer, int param_bytes);

// ZeRO §3.1 / Fig. 1 and Megatron's theoretical_memory_usage.py, per GPU for `params` parameters
// of which `trainable` take gradients and optimizer state (K = optimizer bytes per parameter):
//   none/ddp:        b_p + b_g + K                 (16 with fp16 grads, Megatron's 18 with fp32)
//   zero1:           b_p + b_g + K/d               (Megatron distributed optimizer: 6 + 12/d)
//   zero2:           b_p + (b_g + K)/d
//   zero3/fsdp/hsdp: (b_p + b_g + K)/d             (hsdp: d = the shard group, not r x s)
// memory() prices PyTorch FSDP's trainable shards as (4 + 4 + K - 4)/d: the fp32 shard is the
// master (see memory.cc), so no b_p shard and an fp32 gradient shard.
ModelStates model_states(double params, double trainable, core::DataParallel dp, std::int64_t shard, int param_bytes,
                         int grad_bytes, double optimizer_bytes);
ModelStates model_states(double params, core::DataParallel dp, std::int64_t shard, int param_bytes,
                         int grad_bytes, const std::string& optimizer);

// Activation bytes of one transformer layer for one micro-batch on one rank (derivation in
// memory.cc), for the shape's tp / cp / sequence parallel, attention kind and checkpointing.
double layer_activation_bytes(const core::ModelSpec& m, bool moe_layer, const ComputeShape& shape, int act_bytes);

struct Memory {
  std::int64_t params = 0;       // 16-bit parameter shards + FSDP's gathered working set
                                 // (PyTorch FSDP's fp32 shard is the master copy, under optimizer)
  std::int64_t grads = 0;        // gradient shards + unsharded accumulated gradients
  std::int64_t optimizer = 0;    // fp32 master weights + optimizer states
  std::int64_t activations = 0;  // saved activations of the in-flight micro-batches + logits
  // Bytes of this rank's states held off the GPU (training.offload_*), and what crosses the
  // host link per step for them (docs/simulator.md "Offload, optimizers and frozen weights").
  std::int64_t offloaded = 0;
  std::int64_t host_traffic = 0;
  // The allocated peak (params + grads + optimizer + activations + workspaces): what
  // torch.cuda.max_memory_allocated reports. `loss` is the loss's share of activations;
  // `persistent` the states made once and kept every step (parameter shards, optimizer states,
  // Transformer Engine's FP8 weight caches).
  std::int64_t peak_allocated = 0;
  std::int64_t loss = 0;
  std::int64_t persistent = 0;
  std::int64_t workspaces = 0;  // cuBLAS workspaces (allocated through the caching allocator)
  // The caching allocator's view (sim/memory_reserved.h): segments cached on FSDP2's all-gather
  // stream beyond the live buffer, the fragmented share of the step's own allocations, and the
  // reserved peak as torch.cuda.max_memory_reserved would report it.
  std::int64_t gather_pool = 0;
  std::int64_t fragmentation = 0;
  std::int64_t peak_reserved = 0;
  // Outside the allocator: the CUDA context and NCCL's buffers.
  std::int64_t cuda_context = 0;
  std::int64_t nccl_buffers = 0;
  // What the GPU holds at the peak: reserved (every cache kept) + context + NCCL. The rules
  // judge it (memory-tight), and `required` = allocated + fragmentation + context + NCCL, the
  // least the GPU must hold once the allocator has released what it can (memory-exceeds).
  std::int64_t peak = 0;
  std::int64_t required = 0;
  std::int64_t capacity = 0;
};

// memory-exceeds: what must stay resident (Memory::required) does not fit the GPU.
inline bool memory_exceeds(const Memory& m) { return m.capacity > 0 && m.required > m.capacity; }

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
