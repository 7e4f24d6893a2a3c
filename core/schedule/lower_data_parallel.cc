// The data-parallel family of the lowering (docs/simulator.md, the strategy table): where DDP,
// ZeRO-1/2 (DeepSpeed, Megatron's distributed optimizer), FSDP / ZeRO-3 / HSDP gather and reduce,
// dense parameters over the data-parallel dims and routed experts over their expert-data-
// parallel group, each as often as its framework does (core::fsdp_runtime).

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/mesh/roles.h"
#include "core/plan/trainable.h"
#include "core/schedule/lowering.h"

namespace planck::core::lowering {
namespace {

// PyTorch DDP bucket_cap_mb = 25, turned into bytes as int(bucket_cap_mb * 1024 * 1024)
// (torch/nn/parallel/distributed.py).
constexpr std::int64_t kDdpBucketBytes = 25LL * 1024 * 1024;
// DeepSpeed ZeRO-1/2 reduce_bucket_size and allgather_bucket_size default 5e8 elements
// (deepspeed/runtime/zero/config.py).
constexpr std::int64_t kZeroBucketElements = 500000000;

// One kind of FSDP unit: `count` units of `params` each (per rank, before sharding).
struct Unit {
  double params;
  std::int64_t count;
  bool root;
  const char* name;
};

// A set of parameters synchronised over one group: dense weights over the data-parallel dims
// (and ep, whose ranks see different tokens: Megatron reduces dense grads over the full DP group
// that contains the expert-parallel ranks), routed experts over the data-parallel dims only
// (Megatron's expert-data-parallel group, docs/sources/simulator.md §2.1).
struct ParamClass {
  const char* label;
  std::vector<Unit> units;
  double total() const {
    double t = 0;
    for (const auto& u : units) t += u.params * static_cast<double>(u.count);
    return t;
  }
};

}  // namespace

void lower_data_parallel(const Plan& plan, const Mesh& mesh, const DataParallelInputs& in, Lowering& lo) {
  const ModelSpec& m = *plan.model;
  const Training tr = plan.training.value_or(Training{});
  const Degrees d = degrees(mesh);
  const DataParallel dp = effective_data_parallel(plan, mesh);
  const std::int64_t k = in.k;
  const int bp = in.bp, bg = in.bg;
  const bool every = in.every, rs_every = in.rs_every;
  const FsdpRuntime runtime = in.runtime;
  const RankParams& rp = in.rp;
  ParamClass dense{"dense", {}};
  dense.units.push_back({rp.dense_layer, rp.dense_layers, false, "transformer block"});
  dense.units.push_back({rp.moe_layer_dense, rp.moe_layers, false, "MoE block, non-expert part"});
  dense.units.push_back({rp.root, 1, true, "root (embedding, head, final norm)"});
  ParamClass experts{"expert", {{rp.moe_layer_experts, rp.moe_layers, false, "routed experts of an MoE block"}}};
  const std::optional<std::int64_t> bucket = plan.parallelism.dp_bucket_params;
  // Frozen weights (training.frozen, LoRA's base) take no gradient: no gradient reduction and no
  // updated-parameter gather for them; FSDP still gathers them to compute (core/plan/trainable.h).
  const bool frozen = base_frozen(tr);
  for (const ParamClass* pc : {&dense, &experts}) {
    const bool is_dense = pc == &dense;
    if (pc->total() <= 0) continue;
    if (frozen && dp != DataParallel::kFsdp && dp != DataParallel::kZero3 && dp != DataParallel::kHsdp) continue;
    auto dims_of = [&](const char* role) { return param_sync_dims(plan, mesh, role, is_dense); };
    const std::string tag = m.is_moe() ? std::string(" of ") + pc->label + " parameters" : std::string();
    if (dp == DataParallel::kNone || dp == DataParallel::kDdp) {
      // DDP: bucketed all-reduce during backward; no_sync() skips it on all but the last
      // micro-batch (PyTorch DDP docs; docs/sources/simulator.md §2.1).
      lo.repeats(every ? k : 1);
      lo.add_bucketed("dp", dims_of("dp"), CollOp::kAllReduce, Phase::kBackward, to_bytes(pc->total(), bg),
                      bucket ? sat_mul(*bucket, bg) : kDdpBucketBytes, every ? k : 1, bg, "gradient all-reduce" + tag);
    } else if (dp == DataParallel::kZero1 || dp == DataParallel::kZero2) {
      // DeepSpeed stage_1_and_2.py reduce_ready_partitions_and_remove_grads: stage 2 reduces every
      // micro-batch, stage 1 at the accumulation boundary; both all-gather the updated
      // parameters after the optimizer step (ZeRO §7.2.1).
      const auto dims = dims_of("fsdp");
      const std::int64_t syncs = (dp == DataParallel::kZero2 || every) ? k : 1;
      lo.repeats(syncs);
      lo.add_bucketed("fsdp", dims, CollOp::kReduceScatter, Phase::kBackward, to_bytes(pc->total(), bg),
                      sat_mul(bucket.value_or(kZeroBucketElements), bg), syncs, bg, "gradient reduce-scatter" + tag);
      // The updated parameters travel in their gathered dtype (FP8 blocks under fp8_param_gather,
      // Megatron's distributed optimizer casting them before the all-gather).
      const int bb = gathered_param_bytes(plan, false);
      double root = 0;
      for (const Unit& u : pc->units) root += u.root ? u.params * static_cast<double>(u.count) : 0;
      lo.repeats(1);
      lo.add_bucketed("fsdp", dims, CollOp::kAllGather, Phase::kOptimizer,
                      sat_add(to_bytes(pc->total() - root, bb), to_bytes(root, bp)),
                      sat_mul(bucket.value_or(kZeroBucketElements), bb), 1, bb,
                      "updated-parameter all-gather" + tag + (bb != bp ? " (FP8 weights)" : ""));
    } else {
      // FSDP2 / ZeRO-3 per unit (each block plus the root): all-gather in forward, again in
      // backward when resharded after forward (the root never is: FSDP2 reshard_after_forward=None
      // keeps the root unsharded), reduce-scatter of gradients; under accumulation
      // set_requires_gradient_sync(False) skips the reduce-scatter (and HSDP's all-reduce) until
      // the last micro-batch, set_requires_all_reduce(False) only the all-reduce
      // (torch/distributed/fsdp/_fully_shard/_fully_shard.py; docs/sources/simulator.md §2.1).
      const auto shard = dims_of("fsdp");
      const std::int64_t n_shard = mesh.groups(shard).group_size();
      // Replicas all-reduce over the replicate dims the shard group does not already span: when
      // fsdp_dims include them (the flattened HSDP of torchtitan #711) FSDP shards across the
      // replicas and no all-reduce runs (Lowering::add drops the trivial group).
      std::vector<std::string> replicate;
      for (const auto& r : dims_of("replicate")) {
        if (std::find(shard.begin(), shard.end(), r) == shard.end()) replicate.push_back(r);
      }
      // Under a pipeline, torch.distributed.pipelining runs every backward with
      // set_reshard_after_backward(False) and reshards only in REDUCE_GRAD after the stage's last
      // backward (stage.py backward_maybe_with_nosync / perform_reduce_grad). A unit gathered
      // once stays gathered until something reshards it: without reshard_after_forward nothing
      // does before the step's end (1 gather per step); with it every forward reshards, so a
      // forward gathers only when the stage's previous pass was a forward (or none) and every
      // backward after a forward gathers again: 1 + k per step, whatever the schedule (each of
      // the k forwards is followed by exactly one pass, the step ending on a backward).
      // Megatron-FSDP and DeepSpeed ZeRO-3 gather per micro-batch with or without a pipeline
      // (core::fsdp_runtime); routed experts over their expert-data-parallel group (dims_of).
      const bool pipelined = d.pp > 1 && runtime == FsdpRuntime::kFsdp2;
      for (const Unit& u : pc->units) {
        if (u.count <= 0 || u.params <= 0) continue;
        const std::string what = u.name;
        const bool reshard = plan.parallelism.reshard_after_forward && !u.root;
        const std::int64_t fwd_gathers = pipelined ? 1 : k;
        const int bu = gathered_param_bytes(plan, u.root);
        const std::string fp8 = bu != bp ? " (FP8 weights)" : "";
        lo.repeats(fwd_gathers);
        lo.add("fsdp", shard, CollOp::kAllGather, Phase::kForward, to_bytes(u.params, bu), sat_mul(u.count, fwd_gathers),
               bu,
               (!pipelined ? "parameter all-gather, " + what
                : reshard  ? "parameter all-gather of the first forward (a backward leaves it gathered), " + what
                           : "parameter all-gather once per step (gathered until the last backward), " + what) +
                   fp8);
        if (reshard) {
          lo.repeats(k);
          lo.add("fsdp", shard, CollOp::kAllGather, Phase::kBackward, to_bytes(u.params, bu), sat_mul(u.count, k), bu,
                 "parameter re-gather in backward, " + what + fp8);
        }
        if (frozen) continue;
        const bool hsdp = dp == DataParallel::kHsdp;
        lo.repeats((hsdp ? rs_every : every) ? k : 1);
        lo.add("fsdp", shard, CollOp::kReduceScatter, Phase::kBackward, to_bytes(u.params, bg),
               sat_mul(u.count, (hsdp ? rs_every : every) ? k : 1), bg, "gradient reduce-scatter, " + what);
        if (hsdp) {
          const std::int64_t shard_bytes = ceil_div(to_bytes(u.params, bg), n_shard);
          lo.repeats(every ? k : 1);
          lo.add("replicate", replicate, CollOp::kAllReduce, Phase::kBackward, shard_bytes,
                 sat_mul(u.count, every ? k : 1), bg, "gradient-shard all-reduce across replicas, " + what);
        }
      }
    }
  }

}

}  // namespace planck::core::lowering
