#pragma once
// Where the ranks of a group sit (block placement: rank r on node r / gpus_per_node, see
// docs/plan-format.md). Every group of a mesh dim set has the same shape, so one answer serves
// all of them. sim/ prices links with it, the lowering's per-step totals split bytes into intra-
// and cross-node with it, verify's observed checks cost a layout with it: one function for all.

#include <cstdint>
#include <string>
#include <vector>

#include "core/mesh/mesh.h"

namespace planck::core {

struct Placement {
  std::int64_t nodes_spanned = 1;   // nodes one group touches
  std::int64_t ranks_per_node = 1;  // group members inside one node
  bool crosses_nodes() const { return nodes_spanned > 1; }
};

// Exact, from the groups' members (cost grows with the group count: fine for exec's worlds).
Placement placement_of(const GroupSet& groups, std::int64_t gpus_per_node);

// The same from the mesh's strides, in O(dims x gpus_per_node^2) whatever the world size, for
// the lowering, simulate and enumerate: worst case over the groups' offsets inside a node. Exact
// when the group's strides are below gpus_per_node or multiples of it and a node holds whole
// blocks of the small-stride dims (every layout enumerate makes); otherwise it reads the
// small-stride part as contiguous.
Placement placement_of(const Mesh& mesh, const std::vector<std::string>& dims, std::int64_t gpus_per_node);

// How close to the GPUs frameworks place each dim: torchtitan builds its mesh as
// [pp, dp_replicate, dp_shard, cp, tp] (ParallelDims.build_mesh, tp innermost) and carves ep out
// of dp_shard x cp; Megatron-Core's default order is tp-cp-ep-dp-pp (RankGenerator, tp
// fastest). So tp gets the node first (4), then cp/ep (3), then the sharding dims (2), then
// dp_replicate and pp (1). A group may cross nodes when dims of higher priority fill the node.
int placement_priority(const std::string& dim);

// Ranks of the mesh's other dims that frameworks place inside the group of `dims` (those of
// higher priority than its lowest): the group shares each node with that many of them.
std::int64_t ranks_placed_inside(const Mesh& mesh, const std::vector<std::string>& dims);

// Whether a group of `dims` could sit in one node beside the dims placed inside it (their ranks
// times the group's divide gpus_per_node): only then is its crossing nodes a layout's choice, not
// forced by the mesh. One rule for verify's shard-crosses-node and render's headline colour.
bool crossing_avoidable(const Mesh& mesh, const std::vector<std::string>& dims, std::int64_t gpus_per_node);

}  // namespace planck::core
