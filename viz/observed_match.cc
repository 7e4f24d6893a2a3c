#include "viz/observed_match.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "viz/scene.h"
#include "viz/style.h"
#include "core/base/str_cat.h"

namespace planck::viz {
namespace {

std::string join(const std::vector<std::string>& dims) {
  std::string out;
  for (const auto& d : dims) out += (out.empty() ? "" : ",") + d;
  return out;
}

bool in_world(const core::Mesh& mesh, const core::ObservedGroup& o) {
  return !o.ranks.empty() && o.ranks.front() >= 0 && o.ranks.back() < mesh.world();
}

// The group of `gs` that observed group `o` is (all its seen ranks in one group of the right
// size), if any.
std::optional<std::int64_t> group_matching(const core::GroupSet& gs, const core::Mesh& mesh, const core::ObservedGroup& o) {
  if (!in_world(mesh, o) || o.size != gs.group_size()) return std::nullopt;
  std::int64_t g = gs.group_of(o.ranks.front());
  for (std::int64_t r : o.ranks) {
    if (gs.group_of(r) != g) return std::nullopt;
  }
  return g;
}

bool strict_superset(const std::vector<std::string>& big, const std::vector<std::string>& small) {
  if (big.size() <= small.size()) return false;
  return std::all_of(small.begin(), small.end(),
                     [&](const std::string& d) { return std::find(big.begin(), big.end(), d) != big.end(); });
}

// Which dims' groups `o` is, trying every subset of the mesh's dims of size > 1 (at most 2^7).
std::optional<std::vector<std::string>> dims_of(const core::Mesh& mesh, const core::ObservedGroup& o) {
  std::vector<int> real;
  for (int d = 0; d < mesh.ndims(); ++d) {
    if (mesh.sizes()[d] > 1) real.push_back(d);
  }
  for (unsigned mask = 1; mask < (1u << real.size()); ++mask) {
    std::vector<std::string> dims;
    for (std::size_t i = 0; i < real.size(); ++i) {
      if (mask & (1u << i)) dims.push_back(mesh.dims()[real[i]]);
    }
    if (group_matching(mesh.groups(dims), mesh, o)) return dims;
  }
  return std::nullopt;
}

std::string origin(const core::ObservedGroup& o) {
  std::string out;
  if (!o.name.empty()) out += o.name;
  if (!o.source.empty()) {
    out += core::str_cat(out.empty() ? "from " : " from ", o.source);
    if (o.line > 0) out += core::str_cat(":", std::to_string(o.line));
  }
  return out;
}

}  // namespace

const char* status_name(GroupStatus s) {
  switch (s) {
    case GroupStatus::kMatched: return "matched";
    case GroupStatus::kMissing: return "missing";
    case GroupStatus::kUnexpected: return "unexpected";
  }
  return "matched";
}

Comparison compare_with_observed(const core::Mesh& mesh, const DimSet& set, const std::vector<core::RoleGroups>& roles,
                                 bool hsdp, const std::vector<core::ObservedGroup>& observed, std::int64_t max_listed) {
  Comparison c;
  core::GroupSet gs = mesh.groups(set.dims);
  c.expected_groups = gs.num_groups();
  std::set<std::int64_t> matched;
  std::vector<const core::ObservedGroup*> rest;
  for (const core::ObservedGroup& o : observed) {
    auto g = group_matching(gs, mesh, o);
    if (g && matched.insert(*g).second) {
      std::string note = origin(o);
      if (static_cast<std::int64_t>(o.ranks.size()) < o.size) {
        note += (note.empty() ? "" : "; ") + std::to_string(o.ranks.size()) + " of " + std::to_string(o.size) + " ranks seen";
      }
      c.groups.push_back({GroupStatus::kMatched, gs.members(*g), gs.group_size(), note, false});
    } else if (!g) {
      rest.push_back(&o);
    }
  }
  c.matched = static_cast<std::int64_t>(matched.size());
  c.missing = c.expected_groups - c.matched;
  std::int64_t listed = 0;
  for (std::int64_t g = 0; g < gs.num_groups() && listed < max_listed && listed < c.missing; ++g) {
    if (matched.count(g)) continue;
    c.groups.push_back({GroupStatus::kMissing, gs.members(g), gs.group_size(), "expected, not observed", false});
    ++listed;
  }
  std::map<std::string, std::int64_t> other;
  std::set<std::pair<std::vector<std::int64_t>, std::int64_t>> judged;
  for (const core::ObservedGroup* o : rest) {
    // Two communicators over the same ranks (e.g. NCCL comms of two process groups) are one
    // finding, not two.
    if (!judged.insert({o->ranks, o->size}).second) continue;
    std::optional<std::vector<std::string>> dims = in_world(mesh, *o) ? dims_of(mesh, *o) : std::nullopt;
    const core::RoleGroups* role = nullptr;
    for (const auto& r : roles) {
      if (dims && r.dims == *dims) role = &r;
    }
    bool flattened = dims && strict_superset(*dims, set.dims);
    // A bigger group over a superset of the chosen dims is legitimate (torchtitan creates the
    // flattened dp eagerly) unless it stands where one of the chosen groups is missing.
    bool covers_missing = false;
    if (flattened) {
      for (std::int64_t r : o->ranks) covers_missing = covers_missing || !matched.count(gs.group_of(r));
    }
    if (role != nullptr && !(flattened && covers_missing)) {
      ++other[role->role];
      continue;
    }
    std::string note;
    if (!in_world(mesh, *o)) {
      note = "rank " + std::to_string(o->ranks.back() >= mesh.world() ? o->ranks.back() : o->ranks.front()) +
             " is outside the plan's world of " + std::to_string(mesh.world());
    } else if (dims) {
      note = "= the " + (role ? role->role + " " : std::string()) + "group over " + join(*dims) + (flattened ? " (flattened)" : "");
    } else {
      note = "matches no group of any mesh dims";
    }
    std::string from = origin(*o);
    if (!from.empty()) note += "; " + from;
    if (static_cast<std::int64_t>(o->ranks.size()) < o->size) {
      note += "; " + std::to_string(o->ranks.size()) + " of " + std::to_string(o->size) + " ranks seen";
    }
    c.groups.push_back({GroupStatus::kUnexpected, o->ranks, o->size, note, flattened});
    ++c.unexpected;
    c.hsdp_flattened = c.hsdp_flattened || (hsdp && set.role == "fsdp" && flattened);
  }
  for (const auto& [role, n] : other) c.other_roles.push_back({role, n});

  const std::string what = set.role.empty() ? set.key : set.role + " (" + set.key + ")";
  if (c.hsdp_flattened) {
    std::int64_t biggest = 0;
    for (const auto& g : c.groups) {
      if (g.status == GroupStatus::kUnexpected && g.flattened) biggest = std::max(biggest, g.size);
    }
    c.headline = "HSDP RUNS AS FSDP: parameters sharded over " + std::to_string(biggest) +
                 "-rank flattened groups, not the " + detail::describe_groups(gs) + " of " + what;
  } else if (c.missing > 0 || c.unexpected > 0) {
    c.headline = "MISMATCH: " + std::to_string(c.missing) + " of " + std::to_string(c.expected_groups) + " expected " + what +
                 " groups not observed, " + std::to_string(c.unexpected) + " unexpected";
  } else {
    c.headline = "observed communicators match the plan: " + std::to_string(c.matched) + " of " +
                 std::to_string(c.expected_groups) + " " + what + " groups";
  }
  return c;
}

}  // namespace planck::viz
