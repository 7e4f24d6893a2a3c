#pragma once
// Per-step byte totals of a lowered schedule: the one place a step's bytes are summed (verify's
// sync-every-microbatch and hsdp-flattened figures, simulate's step, render --sim's hop labels).
// Ring bytes in nccl-tests' convention (core/schedule/collectives.h), overflow saturating
// (core/base/saturating.h), cross-node from core::placement_of.

#include <cstdint>

#include "core/mesh/mesh.h"
#include "core/schedule/schedule.h"

namespace planck::core {

// Bytes the busiest rank sends for all calls of `c` in one step under the ring algorithms:
// wire_bytes_per_rank(op, group_size, bytes_per_call) x calls_per_step.
std::int64_t wire_bytes_per_step(const ScheduledCollective& c);

struct StepBytes {
  std::int64_t total = 0;       // per rank per step, every collective
  std::int64_t intra_node = 0;  // collectives whose groups stay inside one node
  std::int64_t cross_node = 0;  // collectives whose groups span nodes (block placement)
};

// Sums wire_bytes_per_step over the schedule; a collective is cross-node when
// placement_of(mesh, its dims, gpus_per_node) spans more than one node, except an expert
// all-to-all the lowering split (inter_node_bytes_per_call): its NIC part counts across nodes
// and its NVLink part inside the node (docs/simulator.md "Token dispatch").
StepBytes step_bytes(const Schedule& schedule, const Mesh& mesh, std::int64_t gpus_per_node);

}  // namespace planck::core
