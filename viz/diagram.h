#pragma once
// Diagrams of a device mesh and its communicators, as deterministic DOT text (render it with
// viz/graphviz.h). Views:
//   mesh  - nodes as clusters, GPUs as boxes labelled with rank and coordinates, filled by the
//           group of the first chosen dim set; a legend.
//   comm  - the same boxes, each group of each chosen dim set drawn as a ring in rank order
//           (pp as a chain: stages pass to the next stage only); links inside a node and across
//           nodes styled differently.
//   observed vs expected (when `observed` is given): expected groups observed, expected but
//           missing, observed but unexpected, each marked; HSDP running as FSDP is called out.
//   traffic overlay (when `schedule` is given): bytes per step on every ring edge and a table of
//           bytes per step per link class in the legend.
// Above `collapse_above` ranks the views collapse to per-node / per-group summaries with counts,
// and the legend says so.

#include <cstdint>
#include <string>
#include <vector>

#include "core/mesh/mesh.h"
#include "core/plan/plan.h"
#include "core/observed/observed.h"
#include "core/mesh/roles.h"
#include "core/schedule/schedule.h"
#include "core/base/status.h"

namespace planck::viz {

enum class View { kAuto, kMesh, kComm };

// A set of dims whose groups are drawn, e.g. {"fsdp", {"dp_shard"}}; role may be "".
struct DimSet {
  std::string key;                // "dp_shard,cp" (mesh order)
  std::vector<std::string> dims;  // mesh order, only dims present in the mesh
  std::string role;               // the plan role these dims serve, when known
};

inline constexpr std::int64_t kDefaultCollapseAbove = 256;

struct DiagramInput {
  std::string title;                      // plan name or file
  const core::Mesh* mesh = nullptr;       // required
  std::int64_t gpus_per_node = 1;         // block placement: rank r on node r / gpus_per_node
  std::vector<DimSet> dim_sets;           // at least one
  View view = View::kAuto;                // auto = comm
  std::vector<core::RoleGroups> roles;    // the plan's roles (observed matching); may be empty
  bool hsdp = false;                      // the plan's effective strategy is HSDP
  const std::vector<core::Observed>* observed = nullptr;
  const core::Schedule* schedule = nullptr;
  std::int64_t collapse_above = kDefaultCollapseAbove;
};

// The diagram as DOT text, or an error naming what is wrong with the input.
core::Result<std::string> build_dot(const DiagramInput& input);

// DimSets for --dim specs ("tp", "dp_shard,cp", torchtitan's "dp", "dp_shard_cp", "dp_cp"),
// each labelled with the role whose dims it equals. Unknown names are an error.
core::Result<std::vector<DimSet>> dim_sets_from_specs(const core::Mesh& mesh,
                                                      const std::vector<std::string>& specs,
                                                      const std::vector<core::RoleGroups>& roles);

// The default when no --dim is given: the first plan role whose groups have more than one rank
// (fsdp for FSDP/HSDP, dp for DDP, ...), else the first role, else the dims of size > 1.
std::vector<DimSet> default_dim_sets(const core::Mesh& mesh, const std::vector<core::RoleGroups>& roles);

// The input every command draws a plan with (render, report): title = the plan's name (else
// the file name of `path`), block placement from the cluster, the plan's roles and HSDP-ness,
// and the default dim sets. Callers set view, observed, schedule and dim_sets as they need.
DiagramInput plan_diagram_input(const core::Plan& plan, const core::Mesh& mesh, const std::string& path);

}  // namespace planck::viz
