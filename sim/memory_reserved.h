#pragma once
// Memory as PyTorch's caching allocator and the device see it (docs/simulator.md "Memory as the
// allocator sees it"): the allocated peak of sim/memory.h, the segments the allocator reserves
// beyond it, and what the GPU holds outside the allocator (CUDA context, NCCL's buffers).
//
//   reserved  = allocated + gather pool + fragmentation
//   device    = reserved + CUDA context + NCCL buffers                      (Memory::peak)
//
// - gather pool: FSDP2 allocates its all-gather buffers on a stream of their own (the copy-in
//   stream, torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py foreach_all_gather); a block
//   freed on one stream is reused only by allocations on that stream (c10/cuda/
//   CUDACachingAllocator.cpp: "Once freed, blocks can be re-allocated on the same stream, but not
//   on any other stream"), so that stream keeps segments for its largest two consecutive
//   gathers while the default stream's peak holds one of them.
// - fragmentation: the share of the bytes allocated and freed within a step (the allocated peak
//   less the persistent states) that the allocator holds in cached blocks it cannot hand out at
//   the peak (blocks split for smaller requests, holes between live tensors). One constant,
//   kFragmentation, fitted leave-one-source-out on published peak reserved memory
//   (tests/sim/sim_published_memory_test.cc).
// - Under pressure the allocator frees its cached blocks and retries (CUDACachingAllocator.cpp
//   malloc: release_available_cached_blocks, release_cached_blocks), so the reserved peak it
//   reports never exceeds what the device leaves it, nor falls below what must be resident.

#include <cstdint>

#include "core/mesh/mesh.h"
#include "core/mesh/roles.h"
#include "core/plan/plan.h"
#include "core/schedule/schedule.h"
#include "sim/memory.h"

namespace planck::sim {

// Fitted on every published source (sim_published_peak_memory prints "fitted on every source");
// each held-out source is scored with the value fitted without it.
inline constexpr double kFragmentation = 0.0;
// CUDA context with lazy module loading (CUDA >= 12.2 default, PyTorch sets CUDA_MODULE_LOADING=LAZY
// since 1.13): 287,047,680 bytes measured at initialisation (pytorch/pytorch#86509) plus the
// modules a training step loads; 512 MiB assumed.
inline constexpr double kCudaContextBytes = 512.0 * 1024 * 1024;

// Bytes the loss holds on the last stage at its peak (the start of the backward) for `tokens`
// tokens of a rank, the logits split over tp (docs/simulator.md "The loss"):
//   fused    4 (h + V) per token: Megatron's count (theoretical_memory_usage.py), the
//            vocab-parallel cross entropy working in place on its fp32 copy
//   eager    2 h + 12 V per token: the head's bf16 input, and per logit the saved fp32
//            log-probabilities, their gradient and the gradient of the input (aten
//            _log_softmax_backward_data); 16 V under tp (loss_parallel's _log_softmax keeps
//            its input, the gradient, exp(x) and their sum, torch/distributed/tensor/parallel/loss.py)
//   compiled 2 h + 4 V: the saved bf16 logits and their bf16 gradient (Inductor fuses the upcast,
//            log-softmax and its backward)
//   te       4 h + 2 V: as fused, with Transformer Engine's parallel_cross_entropy keeping the
//            16-bit logits (which its backward overwrites with their gradient) in place of an
//            fp32 copy
double loss_bytes(core::CrossEntropy ce, std::int64_t tokens, std::int64_t hidden, std::int64_t vocab, std::int64_t tp);

// Whether each rank holds only a shard of the parameters (FSDP, HSDP, ZeRO-3).
bool shards_params(core::DataParallel dp);

// What the memory model reads of the plan's communicators: the expert degrees, the parameter-sync
// group of the dense and the routed-expert weights under the dp and the fsdp role
// (core::param_sync_dims), and NCCL's buffers. They depend on the mesh, the
// plan's data-parallel strategy, fsdp / replicate dims and etp, the node size and the GPU only, so
// they are memoised per thread on those: enumerate prices each mesh under every schedule,
// micro-batch and recompute choice, and building the role dims (string vectors) and placing the
// communicators each time was most of its cost.
struct SyncGroups {
  core::ExpertDegrees experts;
  std::int64_t dense_dp = 1, experts_dp = 1;
  std::int64_t dense_fsdp = 1, experts_fsdp = 1;
  // NCCL's device buffers for the communicators a rank joins (one per distinct role of
  // core::plan_roles; docs/simulator.md "Outside the allocator"): per ring channel one receive
  // connection with the three protocols' buffers (LL 512 KiB, LL128 4.69 MiB, Simple 4 MiB:
  // NVIDIA/nccl src/init.cc DEFAULT_*BUFFSIZE), 32 channels inside an NVLink node and 16 across
  // nodes, plus NVLS's 16 channels x 2 x 1 MiB x local ranks (src/transport/nvls.cc
  // ncclNvlsBufferSetup) for a group of more than two ranks inside an NVSwitch node of a GPU with
  // FP8 tensor cores (Hopper and later); 0 on the cpu preset.
  double nccl_buffers = 0;
};
SyncGroups sync_groups(const core::Plan& plan, const core::Mesh& mesh);

// Whether the plan's FSDP is PyTorch's FSDP2 (core::fsdp_runtime: no stack stated, torchtitan,
// fsdp2; not the fsdp1 stack, whose flat parameters are gathered in place): its all-gather
// buffers live on their own stream and are copied out into the unsharded parameters.
bool fsdp2_buffers(const core::Plan& plan);

// Fills the allocator and device fields of `m` (whose allocated parts memory() computed); `g` is
// sync_groups(plan, mesh).
void allocator_view(const core::Plan& plan, const core::Mesh& mesh, const core::Schedule& s, const SyncGroups& g,
                    Memory& m);

// The reserved peak the allocator would report at fragmentation share f: capped by what the
// device leaves it (capacity less context and NCCL), never below the must-stay-resident bytes.
std::int64_t reserved_at(const Memory& m, double f);

}  // namespace planck::sim
