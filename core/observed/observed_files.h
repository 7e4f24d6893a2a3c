#pragma once
// Which observed files can be judged against a mesh, and the verdicts drawn from them that both
// `verify --observed` (core/check/observed_checks.cc) and `render --observed` (viz/) give: one
// matcher (group_match.h), one reading of each file, one HSDP verdict.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/mesh/mesh.h"
#include "core/observed/observed.h"

namespace planck::core::observed {

// The world communicator of one file: named so (NCCL logs, torch's default_pg), else the first
// complete group of the world's size whose name does not say it is a group of some dims
// ("mesh_dp" is the flattened dp group, never the world). nullptr when the file shows none.
const ObservedGroup* world_comm(const Observed& o, const Mesh& mesh);

// Whether a file's global ranks can be trusted against the mesh, and if not, why.
enum class FileProblem {
  kNone,
  kWorldLarger,     // its world communicator is larger than the plan's world
  kWorldSmaller,    // its largest communicator is smaller: the world's init lines are missing
  kRankOutside,     // some group names a rank >= the plan's world
  kNoGlobalRanks,   // no rank seen and no group with ranks
};

struct ObservedFile {
  const Observed* obs = nullptr;
  const ObservedGroup* world = nullptr;        // world_comm()
  FileProblem problem = FileProblem::kNone;
  std::int64_t outside_rank = -1;              // kRankOutside: the largest such rank
  const ObservedGroup* outside_group = nullptr;  // kRankOutside: the group naming it
};

ObservedFile read_file_against(const Observed& o, const Mesh& mesh);

// The usable files (problem kNone) of `observed`, in order.
std::vector<ObservedFile> usable_files(const std::vector<Observed>& observed, const Mesh& mesh);

// HSDP planned as shard over `shard_dims` and replicate over `replicate_dims`, but the run
// sharded over the flattened group: some usable file shows a communicator of the flattened dims
// (shard + replicate, other than its own world communicator) and none shows a shard group.
struct FlattenedHsdp {
  std::vector<std::string> shard, replicate, flat;  // non-trivial dims, mesh order
  const ObservedGroup* flattened = nullptr;         // the first flattened communicator seen
};
std::optional<FlattenedHsdp> flattened_hsdp(const Mesh& mesh, const std::vector<std::string>& shard_dims,
                                            const std::vector<std::string>& replicate_dims,
                                            const std::vector<ObservedFile>& files);

}  // namespace planck::core::observed
