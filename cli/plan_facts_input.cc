#include "cli/plan_facts_input.h"

#include <utility>

#include "cli/config_input.h"
#include "cli/plan_input.h"
#include "cli/verify_registry.h"
#include "core/check/checks.h"

namespace planck::cli {

std::optional<report::PlanFacts> load_plan_facts(const std::string& path, const sim::SimOptions& options,
                                                 const std::vector<core::Observed>* observed,
                                                 const ConfigOptions* config) {
  auto input = config ? load_plan_input(path, *config) : load_plan_input(path);
  if (!input) return std::nullopt;
  const core::CheckRegistry registry = verify_registry();
  core::CheckContext ctx{input->plan, &input->mesh, observed};
  core::Diagnostics found = core::run_checks(registry, ctx);
  return report::plan_facts(path, input->plan, input->mesh, std::move(found), options);
}

}  // namespace planck::cli
