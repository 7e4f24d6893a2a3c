#include "core/observed/group_match.h"

#include <algorithm>
#include <cstdlib>

#include "core/base/format.h"
#include "core/mesh/roles.h"

namespace planck::core::observed {

std::vector<std::string> nontrivial(const Mesh& mesh, const std::vector<std::string>& dims) {
  std::vector<std::string> out;
  for (const auto& d : mesh.dims()) {
    if (mesh.size(d) > 1 && std::find(dims.begin(), dims.end(), d) != dims.end()) out.push_back(d);
  }
  return out;
}

bool is_group_of(const Mesh& mesh, const ObservedGroup& g, const std::vector<std::string>& dims) {
  if (g.ranks.empty() || g.ranks.back() >= mesh.world()) return false;
  const GroupSet set = mesh.groups(nontrivial(mesh, dims));
  if (set.group_size() != g.size) return false;
  const std::int64_t first = set.group_of(g.ranks.front());
  for (std::int64_t r : g.ranks) {
    if (set.group_of(r) != first) return false;
  }
  // Ranks are unique and sorted, so with all in one group of g.size they are that group.
  return true;
}

std::vector<std::vector<std::string>> matching_dims(const Mesh& mesh, const ObservedGroup& g) {
  const std::vector<std::string> dims = nontrivial(mesh, mesh.dims());
  std::vector<std::vector<std::string>> out;
  for (std::uint32_t mask = 0; mask < (1u << dims.size()); ++mask) {
    std::vector<std::string> subset;
    for (std::size_t i = 0; i < dims.size(); ++i) {
      if (mask & (1u << i)) subset.push_back(dims[i]);
    }
    if (is_group_of(mesh, g, subset)) out.push_back(std::move(subset));
  }
  return out;
}

namespace {

std::string dims_or_none(const std::vector<std::string>& v) { return v.empty() ? "(none)" : join(v, ","); }

std::int64_t shared_with(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& sorted_b) {
  std::int64_t n = 0;
  for (auto r : a) n += std::binary_search(sorted_b.begin(), sorted_b.end(), r) ? 1 : 0;
  return n;
}

}  // namespace

Closest closest_expected(const Plan& plan, const Mesh& mesh, const ObservedGroup& g) {
  struct Candidate {
    std::string label, role;
    std::vector<std::string> dims;
  };
  std::vector<Candidate> cands;
  for (const auto& rg : plan_roles(plan, mesh)) {
    if (nontrivial(mesh, rg.dims).empty()) continue;
    cands.push_back({rg.role + " (dims " + dims_or_none(nontrivial(mesh, rg.dims)) + ")", rg.role, rg.dims});
  }
  if (cands.empty()) {
    const auto dims = nontrivial(mesh, mesh.dims());
    for (const auto& d : dims) cands.push_back({"dims " + d, "", {d}});
  }
  // Closest by Jaccard similarity |A n B| / |A u B| (the observed group counted at its full
  // size), compared exactly as cross products; ties go to the closer size.
  Closest best;
  std::int64_t best_union = 0, best_gap = -1;
  for (const auto& c : cands) {
    const GroupSet set = mesh.groups(nontrivial(mesh, c.dims));
    if (g.ranks.empty() || g.ranks.front() >= mesh.world() || set.group_size() > (std::int64_t{1} << 22)) continue;
    std::vector<std::int64_t> members = set.members(set.group_of(g.ranks.front()));
    const std::int64_t shared = shared_with(g.ranks, members);
    const std::int64_t uni = g.size + set.group_size() - shared;
    const std::int64_t gap = std::abs(set.group_size() - g.size);
    const bool better = best_gap < 0 || shared * best_union > best.shared * uni ||
                        (shared * best_union == best.shared * uni && gap < best_gap);
    if (better) {
      best = Closest{c.label, c.role, std::move(members), shared};
      best_union = uni;
      best_gap = gap;
    }
  }
  return best;
}

std::vector<std::string> dims_from_name(const Mesh& mesh, const std::string& name) {
  std::string spec = name.rfind("mesh_", 0) == 0 ? name.substr(5) : name;
  if (spec.empty() || spec == "default_pg" || spec == "world") return {};
  auto dims = resolve_dim_spec(mesh, spec);
  if (!dims) {
    // "dp_shard_cp"-style joins of dims other than torchtitan's three: split on known names.
    std::vector<std::string> found;
    std::string rest = spec;
    while (!rest.empty()) {
      std::string hit;
      for (const auto& d : mesh.dims()) {
        if (rest.rfind(d, 0) == 0 && d.size() > hit.size() && (rest.size() == d.size() || rest[d.size()] == '_')) hit = d;
      }
      if (hit.empty()) return {};
      found.push_back(hit);
      rest = rest.size() == hit.size() ? "" : rest.substr(hit.size() + 1);
    }
    return found;
  }
  return *dims;
}

std::string role_of_dims(const Plan& plan, const Mesh& mesh, const std::vector<std::string>& dims) {
  const auto want = nontrivial(mesh, dims);
  for (const auto& rg : plan_roles(plan, mesh)) {
    if (nontrivial(mesh, rg.dims) == want) return rg.role;
  }
  return "";
}

}  // namespace planck::core::observed
