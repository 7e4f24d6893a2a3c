#pragma once
// Loading a plan for `planck diff` / `planck report`: the plan and its mesh (cli/plan_input.h),
// verify's diagnostics (cli/verify_registry.h, so a finding reads as verify prints it) and the
// facts report/plan_facts.h gathers from the one lowering.

#include <optional>
#include <string>
#include <vector>

#include "core/observed/observed.h"
#include "report/plan_facts.h"
#include "cli/verify_config.h"
#include "sim/simulate.h"

namespace planck::cli {

// The facts, or nullopt after printing why the plan cannot be loaded. `observed` (may be null)
// are --observed runs, checked as verify --observed checks them.
// `config` (may be null): PATH may be a framework config read with these options (cli/config_input.h).
std::optional<report::PlanFacts> load_plan_facts(const std::string& path, const sim::SimOptions& options,
                                                 const std::vector<core::Observed>* observed = nullptr,
                                                 const ConfigOptions* config = nullptr);

}  // namespace planck::cli
