#pragma once
// Cost of one collective: which link it crosses, which algorithm an NCCL-like runtime picks,
// and latency + bytes / bandwidth (docs/sources/simulator.md §1). This is the API cli/cmd_exec.cc uses for
// its predictions:
//
//   auto place = core::placement_of(mesh.groups(entry.dims), plan.cluster.gpus_per_node);
//   sim::CallCost c = sim::predict_time(entry, place, plan.cluster.gpu, topology_or_null);
//
// Bytes on the wire come from core/schedule/collectives.h, the one table shared with exec and bench.

#include <cstdint>

#include "core/schedule/collectives.h"
#include "core/mesh/mesh.h"
#include "core/mesh/placement.h"
#include "core/plan/plan.h"
#include "core/schedule/schedule.h"
#include "sim/topology.h"

namespace planck::sim {

using core::Placement;  // placement is core's (core/mesh/placement.h); the cost model reads it

// kFitted: a topology profile's line; kMeasured: its measured points (sim/topology.h).
enum class Algorithm { kRing, kTree, kNvls, kFitted, kMeasured };
const char* algorithm_name(Algorithm a);  // "ring", "tree", "nvls", "fitted", "measured"

struct CostOptions {
  bool allow_tree = true;   // NCCL's tree all-reduce (latency-bound sizes across nodes)
  bool allow_nvls = false;  // NVLink SHARP all-reduce inside a node (NVSwitch systems)
};

// The link class a group crosses: the topology's placement map when given, else nvlink inside
// a node and net across nodes (shm / net for the "cpu" preset).
LinkClass link_for(const Placement& place, const core::GpuSpec& gpu, const Topology* topology);

struct CallCost {
  double time_s = 0;                // one call (or all calls, from predict_time)
  std::int64_t wire_bytes = 0;      // bytes the busiest rank sends (per call / all calls)
  LinkClass link = LinkClass::kNvlink;
  Algorithm algorithm = Algorithm::kRing;
};

// One call of `bytes` (nccl-tests size convention) in a group of n ranks. With a topology entry
// for (link, op) its measured points (group size measured) or its fitted line are used with ring bytes; otherwise the GPU preset's figures with
// NCCL's latency constants and the cheapest allowed algorithm.
CallCost predict_call(core::CollOp op, std::int64_t n, std::int64_t bytes, const Placement& place,
                      const core::GpuSpec& gpu, const Topology* topology, const CostOptions& options = {});

// All calls of a scheduled collective in one step: time and wire bytes of predict_call x
// calls_per_step; an all-to-all with inter_node_bytes_per_call spanning nodes is priced as its
// NIC part and its NVLink part running at once (docs/simulator.md "Token dispatch").
CallCost predict_time(const core::ScheduledCollective& c, const Placement& place, const core::GpuSpec& gpu,
                      const Topology* topology, const CostOptions& options = {});

}  // namespace planck::sim
