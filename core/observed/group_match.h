#pragma once
// Matching observed communicators to the plan's mesh. docs/plan-format.md: any group of any subset of mesh
// dims is a legitimate communicator, so an observed group is checked against every subset of the
// mesh's non-trivial dims (at most 2^7), not only against the roles.

#include <cstdint>
#include <string>
#include <vector>

#include "core/mesh/mesh.h"
#include "core/observed/observed.h"
#include "core/plan/plan.h"

namespace planck::core::observed {

// True when `g` is (complete) or may be (partial: every rank seen sits in one group of that
// size) a group of `dims`. Dims of size 1 change nothing and are ignored.
bool is_group_of(const Mesh& mesh, const ObservedGroup& g, const std::vector<std::string>& dims);

// Every dims subset (dims of size > 1, mesh order) that `g` is or may be a group of.
std::vector<std::vector<std::string>> matching_dims(const Mesh& mesh, const ObservedGroup& g);

// The plan role (or, when the plan has none, the dims subset) whose group through the observed
// group's first rank is most like it (Jaccard similarity); ties go to the closer size.
struct Closest {
  std::string label;                  // "tp (dims tp)" or "dims dp_shard,cp"
  std::string role;                   // "" when no role
  std::vector<std::int64_t> members;  // that expected group
  std::int64_t shared = 0;            // ranks in common with the observed group
};
Closest closest_expected(const Plan& plan, const Mesh& mesh, const ObservedGroup& g);

// The dims a group name stands for: torch DeviceMesh names groups "mesh_<dim>" and flattened
// ones "mesh_dp_shard_cp"; bare names ("tp", "dp_cp") are read too. Empty when the name is not
// about this mesh's dims.
std::vector<std::string> dims_from_name(const Mesh& mesh, const std::string& name);

// The plan role whose dims are exactly `dims` (ignoring size-1 dims), or "".
std::string role_of_dims(const Plan& plan, const Mesh& mesh, const std::vector<std::string>& dims);

// Dims with size > 1, in mesh order.
std::vector<std::string> nontrivial(const Mesh& mesh, const std::vector<std::string>& dims);

}  // namespace planck::core::observed
