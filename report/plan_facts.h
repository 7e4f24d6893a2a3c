#pragma once
// What `planck diff` and `planck report` say about one plan, gathered once: its communicators per
// role, the collectives of one step (core::lower, the one lowering), bytes per step by link class
// (core::step_bytes, the sums verify's hsdp-flattened witness uses), step time and memory from
// the simulator fed that same schedule, and verify's diagnostics (run by the caller).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/diagnostics.h"
#include "core/base/status.h"
#include "core/mesh/mesh.h"
#include "core/plan/plan.h"
#include "core/schedule/schedule.h"
#include "core/schedule/step_bytes.h"
#include "sim/simulate.h"

namespace planck::report {

// The groups one role's collectives run on (every group of a role has the same shape).
struct Communicator {
  std::string role;               // fsdp, replicate, dp, tp, pp, cp, ep
  std::string dims;               // "dp_replicate,dp_shard" (mesh order)
  std::int64_t group_size = 1;
  std::int64_t groups = 1;
  std::int64_t nodes_spanned = 1;  // block placement (core::placement_of)
};

struct PlanFacts {
  std::string path;
  std::string name;                // plan name, else the file name
  std::string mesh;                // mesh[...] canonical text
  std::int64_t world = 1;
  std::int64_t nodes = 1;
  std::int64_t gpus_per_node = 1;
  std::vector<Communicator> communicators;  // roles in core::role_names() order
  core::Diagnostics diagnostics;
  // Only when the plan has a model (core::lower needs it); `why_not` says so otherwise.
  std::optional<core::Schedule> schedule;  // the lowering, as viz draws its bytes per hop
  std::optional<core::StepBytes> bytes;
  std::optional<sim::SimResult> sim;
  std::string why_not;
};

// `diagnostics` are verify's findings for the plan (cli/verify_registry.h runs them).
PlanFacts plan_facts(const std::string& path, const core::Plan& plan, const core::Mesh& mesh,
                     core::Diagnostics diagnostics, const sim::SimOptions& options = {});

}  // namespace planck::report
