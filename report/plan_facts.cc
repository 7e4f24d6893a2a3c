#include "report/plan_facts.h"

#include <algorithm>
#include <utility>

#include "core/base/format.h"
#include "core/mesh/placement.h"
#include "core/mesh/roles.h"

namespace planck::report {
namespace {

std::string file_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

Communicator communicator(const core::Mesh& mesh, const std::string& role, const std::vector<std::string>& dims,
                          std::int64_t gpus_per_node) {
  const core::GroupSet gs = mesh.groups(dims);
  Communicator c;
  c.role = role;
  c.dims = gs.key();
  c.group_size = gs.group_size();
  c.groups = gs.num_groups();
  c.nodes_spanned = core::placement_of(mesh, gs.dims(), gpus_per_node).nodes_spanned;
  return c;
}

// The communicators the step's collectives run on, one per (role, dims), in role order; a
// plan without a model (nothing lowered) lists its roles' groups instead.
std::vector<Communicator> communicators(const core::Plan& plan, const core::Mesh& mesh, const core::Schedule* schedule) {
  const std::int64_t gpn = plan.cluster.gpus_per_node;
  std::vector<std::pair<std::string, std::vector<std::string>>> used;
  if (schedule != nullptr) {
    for (const auto& c : schedule->collectives) {
      if (c.group_size <= 1) continue;
      std::pair<std::string, std::vector<std::string>> key{c.role, c.dims};
      if (std::find(used.begin(), used.end(), key) == used.end()) used.push_back(std::move(key));
    }
  } else {
    for (const auto& r : core::plan_roles(plan, mesh)) {
      if (mesh.groups(r.dims).group_size() > 1) used.emplace_back(r.role, r.dims);
    }
  }
  const auto& order = core::role_names();
  auto rank = [&](const std::string& role) { return std::find(order.begin(), order.end(), role) - order.begin(); };
  std::stable_sort(used.begin(), used.end(), [&](const auto& a, const auto& b) { return rank(a.first) < rank(b.first); });
  std::vector<Communicator> out;
  for (const auto& u : used) out.push_back(communicator(mesh, u.first, u.second, gpn));
  return out;
}

}  // namespace

PlanFacts plan_facts(const std::string& path, const core::Plan& plan, const core::Mesh& mesh,
                     core::Diagnostics diagnostics, const sim::SimOptions& options) {
  PlanFacts f;
  f.path = path;
  f.name = plan.name.empty() ? file_name(path) : plan.name;
  f.mesh = mesh.to_string();
  f.world = mesh.world();
  f.gpus_per_node = std::max<std::int64_t>(1, plan.cluster.gpus_per_node);
  f.nodes = (f.world + f.gpus_per_node - 1) / f.gpus_per_node;
  f.diagnostics = std::move(diagnostics);
  auto schedule = core::lower(plan, mesh);
  if (!schedule) {
    f.why_not = schedule.message();
    f.communicators = communicators(plan, mesh, nullptr);
    return f;
  }
  f.communicators = communicators(plan, mesh, &*schedule);
  f.bytes = core::step_bytes(*schedule, mesh, f.gpus_per_node);
  f.schedule = *schedule;
  f.sim = sim::simulate_schedule(plan, mesh, std::move(*schedule), options);
  return f;
}

}  // namespace planck::report
