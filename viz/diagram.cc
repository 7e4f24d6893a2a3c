#include "viz/diagram.h"

#include "core/base/format.h"
#include "viz/scene.h"

namespace planck::viz {
namespace {

std::string role_for(const std::vector<std::string>& dims, const std::vector<core::RoleGroups>& roles) {
  for (const auto& r : roles) {
    if (r.dims == dims) return r.role;
  }
  return {};
}

// Only dims present in the mesh carry groups (an absent dim has size 1).
std::vector<std::string> present(const core::Mesh& mesh, const std::vector<std::string>& dims) {
  std::vector<std::string> out;
  for (const auto& d : mesh.dims()) {
    for (const auto& want : dims) {
      if (d == want) out.push_back(d);
    }
  }
  return out;
}

}  // namespace

core::Result<std::vector<DimSet>> dim_sets_from_specs(const core::Mesh& mesh, const std::vector<std::string>& specs,
                                                      const std::vector<core::RoleGroups>& roles) {
  std::vector<DimSet> out;
  for (const auto& spec : specs) {
    auto dims = core::resolve_dim_spec(mesh, spec);
    if (!dims) return core::Status::error("--dim " + spec + ": " + dims.message());
    std::vector<std::string> in_mesh = present(mesh, *dims);
    out.push_back({core::join(in_mesh, ","), in_mesh, role_for(in_mesh, roles)});
  }
  return out;
}

std::vector<DimSet> default_dim_sets(const core::Mesh& mesh, const std::vector<core::RoleGroups>& roles) {
  const core::RoleGroups* pick = nullptr;
  for (const auto& r : roles) {
    std::vector<std::string> dims = present(mesh, r.dims);
    if (mesh.groups(dims).group_size() > 1) {
      pick = &r;
      break;
    }
  }
  if (pick == nullptr && !roles.empty()) pick = &roles.front();
  if (pick != nullptr) {
    std::vector<std::string> dims = present(mesh, pick->dims);
    return {{core::join(dims, ","), dims, pick->role}};
  }
  std::vector<std::string> dims;
  for (int i = 0; i < mesh.ndims(); ++i) {
    if (mesh.sizes()[i] > 1) dims.push_back(mesh.dims()[i]);
  }
  return {{core::join(dims, ","), dims, role_for(dims, roles)}};
}

core::Result<std::string> build_dot(const DiagramInput& input) {
  if (input.mesh == nullptr) return core::Status::error("render: no mesh to draw");
  if (input.gpus_per_node < 1) {
    return core::Status::error("render: gpus_per_node is " + std::to_string(input.gpus_per_node) + ", must be >= 1");
  }
  if (input.dim_sets.empty()) return core::Status::error("render: no dims chosen to draw");
  detail::Scene scene;
  scene.input = &input;
  scene.mesh = input.mesh;
  scene.gpus_per_node = input.gpus_per_node;
  scene.nodes = (input.mesh->world() + input.gpus_per_node - 1) / input.gpus_per_node;
  for (const DimSet& s : input.dim_sets) scene.sets.push_back(input.mesh->groups(s.dims));
  for (int d = 0; d < input.mesh->ndims(); ++d) {
    if (input.mesh->sizes()[d] > 1) scene.label_dims.push_back(d);
  }
  scene.collapsed = input.mesh->world() > input.collapse_above;
  if (scene.collapsed) return detail::build_summary_view(scene);
  if (input.observed != nullptr) return detail::build_observed_view(scene);
  if (input.view == View::kMesh) return detail::build_mesh_view(scene);
  return detail::build_comm_view(scene);
}

}  // namespace planck::viz
