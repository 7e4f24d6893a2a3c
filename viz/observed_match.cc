#include "viz/observed_match.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "core/base/format.h"
#include "core/observed/group_match.h"
#include "core/observed/observed_files.h"
#include "viz/scene.h"
#include "viz/style.h"
#include "core/base/str_cat.h"

namespace planck::viz {
namespace {

bool in_world(const core::Mesh& mesh, const core::ObservedGroup& o) {
  return !o.ranks.empty() && o.ranks.front() >= 0 && o.ranks.back() < mesh.world();
}

// The group of `gs` (over `dims`) that observed group `o` is or may be, by core's matcher.
std::optional<std::int64_t> group_matching(const core::GroupSet& gs, const core::Mesh& mesh,
                                           const std::vector<std::string>& dims, const core::ObservedGroup& o) {
  if (!in_world(mesh, o) || !core::observed::is_group_of(mesh, o, dims)) return std::nullopt;
  return gs.group_of(o.ranks.front());
}

// The first (fewest dims, mesh order) non-trivial dims subset `o` is a group of, by core's matcher.
std::optional<std::vector<std::string>> dims_of(const core::Mesh& mesh, const core::ObservedGroup& o) {
  for (auto& dims : core::observed::matching_dims(mesh, o)) {
    if (!dims.empty()) return std::move(dims);
  }
  return std::nullopt;
}

bool strict_superset(const std::vector<std::string>& big, const std::vector<std::string>& small) {
  if (big.size() <= small.size()) return false;
  return std::all_of(small.begin(), small.end(),
                     [&](const std::string& d) { return std::find(big.begin(), big.end(), d) != big.end(); });
}

const std::vector<std::string>* dims_of_role(const std::vector<core::RoleGroups>& roles, const char* role) {
  for (const auto& r : roles) {
    if (r.role == role) return &r.dims;
  }
  return nullptr;
}

// verify's hsdp-flattened verdict (core/observed/observed_files.h) on this run's groups: the
// flattened communicator's size, 0 when the run is not flattened HSDP.
std::int64_t runs_as_flattened_fsdp(const core::Mesh& mesh, const std::vector<core::RoleGroups>& roles,
                            const std::vector<core::ObservedGroup>& observed) {
  const auto* shard = dims_of_role(roles, "fsdp");
  const auto* repl = dims_of_role(roles, "replicate");
  if (!shard || !repl) return 0;
  core::Observed run;
  run.groups = observed;
  const core::observed::ObservedFile file{&run, core::observed::world_comm(run, mesh)};
  const auto verdict = core::observed::flattened_hsdp(mesh, *shard, *repl, {file});
  return verdict ? verdict->flattened->size : 0;
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
    // A communicator with no global rank known cannot be placed on the mesh (verify skips it too).
    if (o.ranks.empty()) continue;
    auto g = group_matching(gs, mesh, set.dims, o);
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
      note = "= the " + (role ? role->role + " " : std::string()) + "group over " + core::join(*dims, ",") + (flattened ? " (flattened)" : "");
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
  }
  // The run-level verdict is verify's; the drawing names it on the fsdp groups it concerns.
  const std::int64_t flattened_size = hsdp && set.role == "fsdp" ? runs_as_flattened_fsdp(mesh, roles, observed) : 0;
  c.hsdp_flattened = flattened_size > 0;
  for (const auto& [role, n] : other) c.other_roles.push_back({role, n});

  const std::string what = set.role.empty() ? set.key : set.role + " (" + set.key + ")";
  if (c.hsdp_flattened) {
    c.headline = "HSDP RUNS AS FSDP: parameters sharded over " + std::to_string(flattened_size) +
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
