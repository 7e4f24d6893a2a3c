#pragma once
// What the software stack changes in a layer's price (docs/simulator.md "Software stack"), from
// first principles: the bytes the memory-bound ops move when each runs as PyTorch's eager ops
// rather than as one fused kernel, and the attention kernel's speed relative to
// FlashAttention-2, whose curve the GPU presets hold.

#include "core/plan/plan.h"
#include "core/schedule/schedule.h"

namespace planck::sim {

struct ComputeShape;

// Bytes one layer's forward moves through HBM beyond the fused accounting of
// sim/compute.cc layer_memory_bytes, for the ops the stack runs eagerly (s.eager_ops).
double eager_extra_layer_bytes(const core::ModelSpec& m, const ComputeShape& s, double act_bytes);

// Bytes FSDP2 moves through HBM on the compute stream per micro-batch, forward and backward
// (0 unless the plan runs FSDP2, sim/memory_reserved.h fsdp2_buffers): each all-gather's copy-out reads the flat
// gathered buffer and writes the unsharded parameters (2 x the gathered bytes,
// foreach_all_gather_copy_out's split_with_sizes_copy), and each reduce-scatter's copy-in reads
// the unsharded gradients and writes them, cast to the reduce dtype, into the flat input
// (foreach_reduce_scatter_copy_in's chunk_cat; torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py).
struct FsdpCopyBytes {
  double forward = 0, backward = 0;
};
FsdpCopyBytes fsdp2_copy_bytes(const core::Plan& plan, const core::Schedule& s);

// Throughput of `kernel` relative to FlashAttention-2 for causal attention over q = seq_len / cp
// query rows (1 for fa2 and sdpa, and on GPUs without Hopper's kernels).
double attention_kernel_speedup(const core::GpuSpec& gpu, core::AttentionKernel kernel, double q);

// Throughput of `kernel` at head dimension `head_dim` relative to its own at 128 (the dimension
// every attention curve planck holds was measured at), causal, q query rows: the kernels'
// published charts at head dims 64, 128 and 256, interpolated in log2 of the dimension and held
// at the ends (1 above 128 for FlashAttention-1, charted at 64 and 128 only).
double attention_head_dim_factor(const core::GpuSpec& gpu, core::AttentionKernel kernel, double head_dim, double q);

}  // namespace planck::sim
