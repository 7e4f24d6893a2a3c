#include "core/observed/observed_files.h"

#include <algorithm>

#include "core/observed/group_match.h"

namespace planck::core::observed {

const ObservedGroup* world_comm(const Observed& o, const Mesh& mesh) {
  for (const auto& g : o.groups) {
    if (g.name == "world" || g.name == "default_pg") return &g;
  }
  for (const auto& g : o.groups) {
    if (g.complete && g.size == o.world.value_or(mesh.world()) && dims_from_name(mesh, g.name).empty()) return &g;
  }
  return nullptr;
}

ObservedFile read_file_against(const Observed& o, const Mesh& mesh) {
  const std::int64_t W = mesh.world();
  ObservedFile f;
  f.obs = &o;
  f.world = world_comm(o, mesh);
  if (o.world && *o.world > W) {
    f.problem = FileProblem::kWorldLarger;
    return f;
  }
  if (o.world && *o.world < W) {
    f.problem = FileProblem::kWorldSmaller;
    return f;
  }
  for (const auto& g : o.groups) {
    if (!g.ranks.empty() && g.ranks.back() >= W && g.ranks.back() > f.outside_rank) {
      f.outside_rank = g.ranks.back();
      f.outside_group = &g;
    }
  }
  if (f.outside_group) {
    f.problem = FileProblem::kRankOutside;
    return f;
  }
  const bool no_ranks = std::all_of(o.groups.begin(), o.groups.end(), [](const auto& g) { return g.ranks.empty(); });
  if (o.ranks_seen.empty() && no_ranks) f.problem = FileProblem::kNoGlobalRanks;
  return f;
}

std::vector<ObservedFile> usable_files(const std::vector<Observed>& observed, const Mesh& mesh) {
  std::vector<ObservedFile> out;
  for (const Observed& o : observed) {
    ObservedFile f = read_file_against(o, mesh);
    if (f.problem == FileProblem::kNone) out.push_back(f);
  }
  return out;
}

std::optional<FlattenedHsdp> flattened_hsdp(const Mesh& mesh, const std::vector<std::string>& shard_dims,
                                            const std::vector<std::string>& replicate_dims,
                                            const std::vector<ObservedFile>& files) {
  FlattenedHsdp v;
  v.shard = nontrivial(mesh, shard_dims);
  v.replicate = nontrivial(mesh, replicate_dims);
  if (v.shard.empty() || v.replicate.empty()) return std::nullopt;  // hsdp-degenerate's business
  v.flat = v.shard;
  v.flat.insert(v.flat.end(), v.replicate.begin(), v.replicate.end());
  v.flat = nontrivial(mesh, v.flat);
  bool shard_seen = false;
  for (const auto& f : files) {
    for (const auto& g : f.obs->groups) {
      if (g.ranks.empty()) continue;
      if (is_group_of(mesh, g, v.shard)) shard_seen = true;
      // The world communicator is every run's; it only counts when it is not also the world.
      if (!v.flattened && &g != f.world && is_group_of(mesh, g, v.flat)) v.flattened = &g;
    }
  }
  if (!v.flattened || shard_seen) return std::nullopt;
  return v;
}

}  // namespace planck::core::observed
