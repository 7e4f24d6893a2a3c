#pragma once
// Loading a plan file: plan-syntax (not JSON) and plan-schema (missing field, wrong type,
// unknown key with "did you mean", unknown preset, absurd value) diagnostics, each with a JSON
// pointer and the line/column of the value.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/diagnostics.h"
#include "core/base/format.h"  // did_you_mean, which every reader of names uses
#include "core/plan/plan.h"

namespace planck::core {

struct LoadedPlan {
  std::optional<Plan> plan;  // set when there was no plan-syntax / plan-schema error
  Diagnostics diagnostics;
};

LoadedPlan load_plan_file(const std::string& path);
LoadedPlan load_plan_text(std::string_view text, const std::string& path);

}  // namespace planck::core
