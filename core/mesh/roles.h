#pragma once
// The role table of docs/plan-format.md: which dims each strategy's communicators span.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/mesh/mesh.h"
#include "core/plan/plan.h"

namespace planck::core {

// Roles in report order.
const std::vector<std::string>& role_names();  // fsdp, replicate, dp, tp, pp, cp, ep

// The plan's data_parallel, or the torchtitan inference when absent: dp_replicate > 1 and
// dp_shard > 1 -> hsdp; dp_shard > 1 -> fsdp; dp or dp_replicate > 1 -> ddp; else none.
DataParallel effective_data_parallel(const Plan& plan, const Mesh& mesh);

// Data-parallel dims present in the mesh, in mesh order.
std::vector<std::string> data_parallel_dims(const Mesh& mesh);

// Dims of `role` under the plan's strategy, in mesh order, or nullopt when the strategy has no
// such role (e.g. "replicate" under fsdp). tp/pp/cp/ep are that dim (when in the mesh).
std::optional<std::vector<std::string>> role_dims(const Plan& plan, const Mesh& mesh, std::string_view role);

struct RoleGroups {
  std::string role;
  std::vector<std::string> dims;
};
// Every role the plan has, in role_names() order.
std::vector<RoleGroups> plan_roles(const Plan& plan, const Mesh& mesh);

// Degrees used by the checks and the simulator.
struct Degrees {
  std::int64_t pp = 1, dp_replicate = 1, dp_shard = 1, dp = 1, cp = 1, tp = 1, ep = 1;
  std::int64_t dp_degree() const { return dp * dp_replicate * dp_shard; }  // data ranks
};
Degrees degrees(const Mesh& mesh);

}  // namespace planck::core
