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

}  // namespace planck::core
