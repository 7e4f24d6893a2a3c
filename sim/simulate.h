#pragma once
// One plan, one step: the lowered schedule timed by the cost model, compute time from FLOPs and
// MFU, what overlaps, and memory per GPU (docs/simulator.md, "planck-sim/1"). O(1) in the world size:
// every group of a role has the same shape, so nothing loops over ranks.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/mesh/mesh.h"
#include "core/plan/plan.h"
#include "core/schedule/schedule.h"
#include "core/base/status.h"
#include "sim/cost.h"
#include "sim/memory.h"
#include "sim/topology.h"

namespace planck::sim {

struct SimOptions {
  const Topology* topology = nullptr;
  CostOptions cost;
};

// What the simulate / enumerate command lines share: --topology FILE (empty = none), --nvls,
// --no-tree. Loads the profile into `storage` and points `options` at it; the error names the file.
core::Status configure_sim_options(SimOptions& options, std::optional<Topology>& storage,
                                   const std::string& topology_path, bool nvls, bool no_tree);

struct TimedCollective {
  core::ScheduledCollective entry;
  std::int64_t bytes_sent_per_rank = 0;  // all calls of the step, busiest rank
  double time_s = 0;                     // all calls of the step
  LinkClass link = LinkClass::kNvlink;
  Algorithm algorithm = Algorithm::kRing;
  bool overlapped = false;  // runs under compute (data-parallel syncs, ring attention)
};

struct StepTime {
  std::int64_t bytes_sent_per_rank = 0;
  double comm_time_s = 0;
  double compute_time_s = 0;  // including recomputation and the pipeline bubble
  double exposed_comm_time_s = 0;
  double step_time_s = 0;
};

struct SimResult {
  std::int64_t world = 0;
  core::Schedule schedule;  // the lowering's facts; its collectives live in `collectives`
  std::vector<TimedCollective> collectives;
  StepTime step;
  Memory memory;
  double mfu = 0.4;
  double flops_per_rank = 0;  // model FLOPs of one step on one rank
  std::vector<std::string> notes;
};

// Needs the plan's model; the mesh must be the plan's valid mesh.
core::Result<SimResult> simulate(const core::Plan& plan, const core::Mesh& mesh, const SimOptions& options = {});

// Times a schedule already lowered (enumerate lowers once per layout and reuses this).
SimResult simulate_schedule(const core::Plan& plan, const core::Mesh& mesh, core::Schedule schedule,
                            const SimOptions& options);

// "planck-sim/1" JSON (docs/simulator.md) and a text table.
std::string sim_to_json(const SimResult& r);
std::string sim_to_text(const SimResult& r, const core::Plan& plan, const core::Mesh& mesh);

}  // namespace planck::sim
