// merge_observed (observed_merge.h): one observation of a run from several files.

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "core/observed/observed_merge.h"
#include "core/base/str_cat.h"

namespace planck::core::observed {
namespace {

std::string first_source(const Observed& o) { return o.sources.empty() ? "(unnamed)" : o.sources.front(); }

bool is_world_name(const std::string& name) { return name == "world" || name == "default_pg"; }

std::string ranks_text(const ObservedGroup& g) {
  std::string k = "|";
  for (auto r : g.ranks) k += std::to_string(r) + ",";
  return k;
}

// Two records are one communicator when they share this key: the same id, or both the world
// communicator of one size, or the same complete rank set under the same name. A partial group
// without an id is never joined to anything ("" key): it could be any communicator of that size.
std::string comm_key(const ObservedGroup& g) {
  const std::string size = str_cat("#", std::to_string(g.size));
  if (!g.id.empty()) return "id:" + g.id + size;
  if (is_world_name(g.name)) return "world" + size;
  if (!g.complete) return "";
  return "ranks:" + g.name + size + ranks_text(g);
}

// Joining must not make a group bigger than its communicator: torch reuses one pg name for
// different groups on different ranks, so an id alone does not prove two records are one.
bool fits(const ObservedGroup& a, const ObservedGroup& b) {
  std::vector<std::int64_t> all;
  std::set_union(a.ranks.begin(), a.ranks.end(), b.ranks.begin(), b.ranks.end(), std::back_inserter(all));
  return static_cast<std::int64_t>(all.size()) <= a.size;
}

void join_ranks(ObservedGroup& into, const ObservedGroup& from) {
  std::vector<std::int64_t> all;
  std::set_union(into.ranks.begin(), into.ranks.end(), from.ranks.begin(), from.ranks.end(), std::back_inserter(all));
  into.ranks = std::move(all);
  into.complete = static_cast<std::int64_t>(into.ranks.size()) == into.size;
  if (into.name.empty()) into.name = from.name;
}

}  // namespace

Result<Observed> merge_observed(const std::vector<Observed>& parts) {
  Observed out;
  std::map<std::int64_t, std::string> host_from;  // rank -> file that named its host
  std::string world_from;
  std::set<std::int64_t> seen;
  std::unordered_map<std::string, std::size_t> index;  // comm_key -> position in out.groups
  for (const Observed& p : parts) {
    for (const auto& s : p.sources) {
      if (std::find(out.sources.begin(), out.sources.end(), s) == out.sources.end()) out.sources.push_back(s);
    }
    if (p.world) {
      if (out.world && *out.world != *p.world) {
        return Status::error(world_from + " shows a world of " + std::to_string(*out.world) + " ranks but " +
                             first_source(p) + " one of " + std::to_string(*p.world) +
                             ": they come from different runs; observe them separately");
      }
      out.world = p.world;
      world_from = first_source(p);
    }
    seen.insert(p.ranks_seen.begin(), p.ranks_seen.end());
    out.notes.insert(out.notes.end(), p.notes.begin(), p.notes.end());
    for (const auto& [r, h] : p.hosts) {
      auto [it, fresh] = out.hosts.emplace(r, h);
      if (!fresh && it->second != h) {
        return Status::error(host_from[r] + " puts rank " + std::to_string(r) + " on host " + it->second + " but " +
                             first_source(p) + " on " + h + ": they come from different runs; observe them separately");
      }
      if (fresh) host_from[r] = first_source(p);
    }
    for (const auto& g : p.groups) {
      std::string key = comm_key(g);
      auto it = key.empty() ? index.end() : index.find(key);
      if (it != index.end() && !fits(out.groups[it->second], g)) {
        key += ranks_text(g);  // same id, other members: another communicator
        it = index.find(key);
      }
      if (it != index.end()) {
        join_ranks(out.groups[it->second], g);
        continue;
      }
      if (!key.empty()) index.emplace(key, out.groups.size());
      out.groups.push_back(g);
    }
  }
  out.ranks_seen.assign(seen.begin(), seen.end());
  return out;
}

}  // namespace planck::core::observed
