#include "core/schedule/ep_dispatch.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/mesh/placement.h"

namespace planck::core {
namespace {

std::int64_t clamp_bytes(double b) {
  if (!(b > 0)) return 0;
  return b >= 9.2e18 ? std::numeric_limits<std::int64_t>::max() : static_cast<std::int64_t>(std::ceil(b));
}

}  // namespace

double node_limited_reach(double nodes, double groups, double groups_per_token, double k) {
  const double g = std::min(groups_per_token, groups);
  double reach = 0;
  if (groups >= nodes) {
    // Each node holds groups / nodes whole groups: a node is missed when none of the g groups
    // drawn (without replacement) is one of its own.
    const double own = groups / nodes;
    double missed = 1;
    for (double i = 0; i < g; ++i) missed *= std::max(0.0, (groups - own - i) / (groups - i));
    reach = nodes * (1 - missed);
  } else {
    // Each group spans nodes / groups nodes, and its k / g experts fall on them evenly.
    const double span = nodes / groups;
    reach = g * span * (1 - std::pow(1 - 1 / span, k / g));
  }
  return std::min({reach, nodes, k});
}

MoeDispatcher effective_dispatcher(const Plan& plan) {
  if (plan.parallelism.moe_dispatcher) return *plan.parallelism.moe_dispatcher;
  const bool node_limited = plan.model && plan.model->expert_groups >= 1 && plan.model->expert_groups_per_token >= 1 &&
                            !plan.parallelism.expert_capacity_factor;
  return node_limited ? MoeDispatcher::kDeepEp : MoeDispatcher::kAllToAll;
}

DispatchSplit dispatch_split(const Plan& plan, const Mesh& mesh, const std::vector<std::string>& ep_dims,
                             std::int64_t tokens, std::int64_t bytes, int activation_bytes) {
  DispatchSplit out;
  const Placement place = placement_of(mesh, ep_dims, std::max<std::int64_t>(1, link_domain(plan.cluster)));
  if (place.nodes_spanned <= 1 || bytes <= 0) return out;
  const double n = static_cast<double>(mesh.groups(ep_dims).group_size());
  const double r = static_cast<double>(std::max<std::int64_t>(1, place.ranks_per_node));
  const double nodes = static_cast<double>(place.nodes_spanned);
  const double b = static_cast<double>(bytes);
  const MoeDispatcher disp = effective_dispatcher(plan);
  if (disp == MoeDispatcher::kAllToAll || disp == MoeDispatcher::kAllGather) {
    out.inter_node = clamp_bytes(b * (n - r) / n);
    out.intra_node = clamp_bytes(b * (r - 1) / n);
    out.note = "expert all-to-all over " + std::to_string(place.nodes_spanned) + " nodes: " +
               std::to_string(static_cast<std::int64_t>(std::lround(100 * (n - r) / n))) +
               "% of the routed copies cross the NIC, the rest stay on NVLink";
    return out;
  }
  const ModelSpec& m = *plan.model;
  const double k = static_cast<double>(std::max<std::int64_t>(1, m.experts_per_token));
  double reach = 0;
  if (m.expert_groups >= 1 && m.expert_groups_per_token >= 1) {
    reach = node_limited_reach(nodes, static_cast<double>(m.expert_groups),
                               static_cast<double>(m.expert_groups_per_token), k);
    out.note = "node-limited routing: each token crosses to at most " + std::to_string(m.expert_groups_per_token) +
               " of " + std::to_string(m.expert_groups) + " expert groups' nodes, once per node (" +
               to_string(disp) + ", docs/simulator.md \"Token dispatch\")";
  } else {
    reach = nodes * (1 - std::pow(1 - 1 / nodes, k));
    char mean[32];
    std::snprintf(mean, sizeof mean, "%.1f", reach);
    out.note = std::string(to_string(disp)) + " dispatch: each token crosses once per destination node (" + mean +
               " of " + std::to_string(place.nodes_spanned) +
               " nodes on average for top-" + std::to_string(m.experts_per_token) +
               "), then NVLink forwards it (docs/simulator.md \"Token dispatch\")";
  }
  const double imbalance = plan.parallelism.expert_imbalance.value_or(1.0);
  const double rows = static_cast<double>(tokens) * reach * (nodes - 1) / nodes * imbalance;
  out.inter_node = clamp_bytes(rows * static_cast<double>(m.hidden) * activation_bytes);
  out.intra_node = clamp_bytes(b * (r - 1) / r);
  return out;
}

}  // namespace planck::core
