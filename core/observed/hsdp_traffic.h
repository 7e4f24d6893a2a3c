#pragma once
// What it costs when HSDP silently runs as FSDP over the flattened replicate x shard group: the
// bytes one rank sends per optimizer step through collectives whose group spans nodes, for the
// run as observed and for the plan's groups (ring algorithms, nccl-tests' byte convention, as
// docs/simulator.md: all-gather and reduce-scatter send (n-1)/n of the full buffer, all-reduce 2(n-1)/n).

#include <cstdint>
#include <optional>
#include <string>

#include "core/mesh/mesh.h"
#include "core/plan/plan.h"

namespace planck::core::observed {

struct HsdpTraffic {
  double params = 0;                     // parameters of the plan's model
  std::int64_t grad_accumulation = 1;    // micro-batches per step
  double flattened_cross_node_bytes = 0; // per rank per step, as the run did it
  double planned_cross_node_bytes = 0;   // per rank per step, with the planned shard/replicate groups
  std::string param_dtype, reduce_dtype;
};

// Per step: all-gathers = A x (2 with reshard_after_forward, else 1) of P params in param_dtype;
// reduce-scatters of P gradients in reduce_dtype = A (every_microbatch, last_microbatch_replicate)
// or 1; HSDP's replicate all-reduce of P/shard gradients = A (every_microbatch) or 1. A collective
// counts only when its group spans nodes. nullopt when the plan has no model.
std::optional<HsdpTraffic> hsdp_traffic(const Plan& plan, const GroupSet& flattened,
                                        const GroupSet& shard, const GroupSet& replicate);

}  // namespace planck::core::observed
