#pragma once
// What the software stack changes in a layer's price (docs/simulator.md "Software stack"), from
// first principles: the bytes the memory-bound ops move when each runs as PyTorch's eager ops
// rather than as one fused kernel, and the attention kernel's speed relative to
// FlashAttention-2, whose curve the GPU presets hold.

#include "core/plan/plan.h"

namespace planck::sim {

struct ComputeShape;

// Bytes one layer's forward moves through HBM beyond the fused accounting of
// sim/compute.cc layer_memory_bytes, when the stack runs eager ops (0 for fused stacks).
double eager_extra_layer_bytes(const core::ModelSpec& m, const ComputeShape& s, double act_bytes);

// Throughput of `kernel` relative to FlashAttention-2 for causal attention over q = seq_len / cp
// query rows (1 for fa2 and sdpa, and on GPUs without Hopper's kernels).
double attention_kernel_speedup(const core::GpuSpec& gpu, core::AttentionKernel kernel, double q);

}  // namespace planck::sim
