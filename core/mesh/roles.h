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
const std::vector<std::string>& role_names();  // fsdp, replicate, dp, tp, pp, cp, ep, edp, etp

// The plan's data_parallel, or the torchtitan inference when absent: dp_replicate > 1 and
// dp_shard > 1 -> hsdp; dp_shard > 1 -> fsdp; dp or dp_replicate > 1 -> ddp; else none.
DataParallel effective_data_parallel(const Plan& plan, const Mesh& mesh);

// Data-parallel dims present in the mesh, in mesh order.
std::vector<std::string> data_parallel_dims(const Mesh& mesh);
// The dims whose ranks read different data: the data-parallel dims and ep (ep is data parallel
// for the batch, docs/plan-format.md "Mixture of experts"), in mesh order.
std::vector<std::string> data_rank_dims(const Mesh& mesh);

// Dims of `role` under the plan's strategy, in mesh order, or nullopt when the strategy has no
// such role (e.g. "replicate" under fsdp). tp/pp/cp are that dim (when in the mesh). Expert
// parallelism (docs/plan-format.md "Mixture of experts"): the dp and fsdp roles also span ep; "ep" is the expert-
// parallel group expert_parallel_dims(), "edp" the expert-data-parallel group, "etp" the tp dim
// when the experts are tensor-parallel (parallelism.etp = tp, the default).
std::optional<std::vector<std::string>> role_dims(const Plan& plan, const Mesh& mesh, std::string_view role);

// parallelism.etp, or tp when absent (Megatron's default, expert_tensor_parallel_size = tp).
std::int64_t expert_tp(const Plan& plan, const Mesh& mesh);
// The ranks that split the routed experts of one layer: ep, plus cp (experts have no context
// parallelism: Megatron's expert grid has no cp, torchtitan's EP borrows dp_shard x cp), plus tp
// when etp = 1 (the tp ranks hold different tokens and fold into EP). Empty without an ep dim.
std::vector<std::string> expert_parallel_dims(const Plan& plan, const Mesh& mesh);
// The ranks that hold the same expert shard and different tokens: the data-parallel dims (plus
// cp, and tp when etp = 1, when there is no ep dim to absorb them).
std::vector<std::string> expert_data_parallel_dims(const Plan& plan, const Mesh& mesh);

struct RoleGroups {
  std::string role;
  std::vector<std::string> dims;
};
// Every role the plan has, in role_names() order.
std::vector<RoleGroups> plan_roles(const Plan& plan, const Mesh& mesh);

// Degrees used by the checks and the simulator.
struct Degrees {
  std::int64_t pp = 1, dp_replicate = 1, dp_shard = 1, dp = 1, cp = 1, tp = 1, ep = 1;
  // Data ranks: the global batch divides by them. ep is data parallel for the batch.
  std::int64_t dp_degree() const { return dp * dp_replicate * dp_shard * ep; }
};
Degrees degrees(const Mesh& mesh);

// Expert-layer degrees: ep = size of the expert-parallel group (experts per rank = experts /
// ep), etp = expert tensor parallel, edp = expert-data-parallel group size.
struct ExpertDegrees {
  std::int64_t ep = 1, etp = 1, edp = 1;
};
ExpertDegrees expert_degrees(const Plan& plan, const Mesh& mesh);

}  // namespace planck::core
