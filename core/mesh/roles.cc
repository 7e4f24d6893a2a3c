#include "core/mesh/roles.h"

#include <algorithm>

namespace planck::core {
namespace {

// Keeps `names` that the mesh has, in mesh order.
std::vector<std::string> in_mesh_order(const Mesh& mesh, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& d : mesh.dims()) {
    if (std::find(names.begin(), names.end(), d) != names.end()) out.push_back(d);
  }
  return out;
}

std::vector<std::string> with_cp(const Mesh& mesh, std::vector<std::string> dims) {
  if (mesh.size("cp") > 1) dims.push_back("cp");
  return in_mesh_order(mesh, dims);
}

}  // namespace

const std::vector<std::string>& role_names() {
  static const std::vector<std::string> kRoles = {"fsdp", "replicate", "dp", "tp", "pp", "cp", "ep", "edp", "etp"};
  return kRoles;
}

DataParallel effective_data_parallel(const Plan& plan, const Mesh& mesh) {
  if (plan.parallelism.data_parallel) return *plan.parallelism.data_parallel;
  // torchtitan ParallelDims: dp_replicate > 1 and dp_shard > 1 is HSDP, dp_shard > 1 FSDP,
  // replicate only DDP (docs/sources/mesh.md §2.2).
  const std::int64_t r = mesh.size("dp_replicate"), s = mesh.size("dp_shard"), dp = mesh.size("dp");
  if (r > 1 && s > 1) return DataParallel::kHsdp;
  if (s > 1) return DataParallel::kFsdp;
  if (dp > 1 || r > 1) return DataParallel::kDdp;
  return DataParallel::kNone;
}

std::vector<std::string> data_parallel_dims(const Mesh& mesh) {
  std::vector<std::string> out;
  for (const auto& d : mesh.dims()) {
    if (is_data_parallel_dim(d)) out.push_back(d);
  }
  return out;
}

std::vector<std::string> data_rank_dims(const Mesh& mesh) {
  std::vector<std::string> out;
  for (const auto& d : mesh.dims()) {
    if (is_data_parallel_dim(d) || d == "ep") out.push_back(d);
  }
  return out;
}

namespace {

// The data-parallel roles before ep joins dp and fsdp.
std::optional<std::vector<std::string>> dp_family_dims(const Plan& plan, const Mesh& mesh, std::string_view role) {
  const DataParallel dp = effective_data_parallel(plan, mesh);
  const auto dp_dims = data_parallel_dims(mesh);
  const auto& par = plan.parallelism;
  switch (dp) {
    case DataParallel::kNone:
      return std::nullopt;
    case DataParallel::kDdp:
      if (role == "dp") return with_cp(mesh, dp_dims);
      return std::nullopt;
    case DataParallel::kFsdp:
    case DataParallel::kZero3:
    case DataParallel::kZero1:
    case DataParallel::kZero2: {
      if (role != "fsdp" && role != "dp") return std::nullopt;
      if (par.fsdp_dims) return in_mesh_order(mesh, *par.fsdp_dims);
      return with_cp(mesh, dp_dims);
    }
    case DataParallel::kHsdp: {
      std::vector<std::string> shard = par.fsdp_dims ? in_mesh_order(mesh, *par.fsdp_dims)
                                                     : with_cp(mesh, {"dp_shard"});
      std::vector<std::string> repl = par.replicate_dims ? in_mesh_order(mesh, *par.replicate_dims)
                                                         : in_mesh_order(mesh, {"dp_replicate"});
      if (role == "fsdp") return shard;
      if (role == "replicate") return repl;
      if (role == "dp") {
        std::vector<std::string> both = shard;
        both.insert(both.end(), repl.begin(), repl.end());
        return in_mesh_order(mesh, both);
      }
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace

std::int64_t expert_tp(const Plan& plan, const Mesh& mesh) {
  return plan.parallelism.etp.value_or(mesh.size("tp"));
}

std::vector<std::string> expert_parallel_dims(const Plan& plan, const Mesh& mesh) {
  if (!mesh.has("ep")) return {};
  std::vector<std::string> dims{"ep", "cp"};
  if (expert_tp(plan, mesh) == 1) dims.push_back("tp");
  return in_mesh_order(mesh, dims);
}

std::vector<std::string> expert_data_parallel_dims(const Plan& plan, const Mesh& mesh) {
  std::vector<std::string> dims = data_parallel_dims(mesh);
  if (!mesh.has("ep")) {
    // No expert parallelism: every rank of a stage that holds distinct tokens and the same
    // expert shard replicates the experts (Megatron's expert grid with ep = 1).
    dims.push_back("cp");
    if (expert_tp(plan, mesh) == 1) dims.push_back("tp");
  }
  return in_mesh_order(mesh, dims);
}

std::optional<std::vector<std::string>> role_dims(const Plan& plan, const Mesh& mesh, std::string_view role) {
  if (role == "tp" || role == "pp" || role == "cp") {
    if (!mesh.has(role)) return std::nullopt;
    return std::vector<std::string>{std::string(role)};
  }
  if (role == "ep") {
    if (!mesh.has("ep")) return std::nullopt;
    return expert_parallel_dims(plan, mesh);
  }
  if (role == "etp") {
    if (!mesh.has("tp") || expert_tp(plan, mesh) != mesh.size("tp") || mesh.size("tp") <= 1) return std::nullopt;
    return std::vector<std::string>{"tp"};
  }
  if (role == "edp") {
    if (!mesh.has("ep") && !plan.parallelism.etp) return std::nullopt;
    auto dims = expert_data_parallel_dims(plan, mesh);
    if (dims.empty()) return std::nullopt;
    return dims;
  }
  auto dims = dp_family_dims(plan, mesh, role);
  // ep is data parallelism for everything but the routed experts: the data-parallel role (dp)
  // and the sharding role (fsdp) span it, as Megatron's data-parallel group and torchtitan's
  // dense FSDP mesh contain the expert-parallel ranks (docs/plan-format.md).
  if (mesh.has("ep") && (role == "dp" || role == "fsdp")) {
    if (!dims) {
      if (role != "dp" || mesh.size("ep") <= 1) return dims;
      dims = std::vector<std::string>{};
    }
    dims->push_back("ep");
    return in_mesh_order(mesh, *dims);
  }
  return dims;
}

std::vector<RoleGroups> plan_roles(const Plan& plan, const Mesh& mesh) {
  std::vector<RoleGroups> out;
  for (const auto& role : role_names()) {
    auto dims = role_dims(plan, mesh, role);
    if (dims) out.push_back({role, *dims});
  }
  return out;
}

Degrees degrees(const Mesh& mesh) {
  Degrees d;
  d.pp = mesh.size("pp");
  d.dp_replicate = mesh.size("dp_replicate");
  d.dp_shard = mesh.size("dp_shard");
  d.dp = mesh.size("dp");
  d.cp = mesh.size("cp");
  d.tp = mesh.size("tp");
  d.ep = mesh.size("ep");
  return d;
}

namespace {

// The size of one communicator over `dims` (distinct names, as the role functions return them),
// without building the GroupSet: enumerate asks for it for every candidate layout.
std::int64_t group_size_of(const Mesh& mesh, const std::vector<std::string>& dims) {
  std::int64_t n = 1;
  for (const auto& d : dims) n *= mesh.size(d);
  return n;
}

}  // namespace

ExpertDegrees expert_degrees(const Plan& plan, const Mesh& mesh) {
  ExpertDegrees e;
  e.ep = group_size_of(mesh, expert_parallel_dims(plan, mesh));
  e.etp = std::max<std::int64_t>(1, expert_tp(plan, mesh));
  e.edp = group_size_of(mesh, expert_data_parallel_dims(plan, mesh));
  return e;
}

}  // namespace planck::core
