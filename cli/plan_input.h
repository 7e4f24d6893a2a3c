#pragma once
// Loading PLAN for the commands that run no checks (groups, simulate, render): docs/verify.md#exit-codes says
// they exit 2 when the plan cannot be loaded or its mesh is invalid. The reason is printed to
// stderr in verify's text form, so the user sees the same file:line:column diagnostics.

#include <optional>
#include <string>

#include "core/mesh/mesh.h"
#include "core/plan/plan.h"

namespace planck::cli {

struct PlanInput {
  core::Plan plan;
  core::Mesh mesh;
};

// The plan and its mesh, or nullopt after printing why not.
std::optional<PlanInput> load_plan_input(const std::string& path);

}  // namespace planck::cli
