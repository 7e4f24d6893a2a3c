#pragma once
// An imported plan priced as `planck verify CONFIG` prices it: loaded, lowered, its memory from the
// simulator's model and every core and simulator rule run (for the suites that link planck_sim).

#include <doctest/doctest.h>

#include "core/check/checks.h"
#include "core/mesh/plan_mesh.h"
#include "core/plan/plan_load.h"
#include "core/schedule/schedule.h"
#include "sim/memory.h"
#include "sim/sim_checks.h"

namespace planck::import::test {

struct Priced {
  core::Plan plan;
  sim::Memory memory;
  core::Diagnostics diags;
};

inline Priced price(const nlohmann::ordered_json& plan_json) {
  core::LoadedPlan lp = core::load_plan_text(plan_json.dump(2), "imported.json");
  REQUIRE_MESSAGE(lp.plan.has_value(), (lp.diagnostics.items().empty() ? plan_json.dump(2)
                                                                       : lp.diagnostics.items()[0].message));
  auto mesh = core::plan_mesh(*lp.plan, nullptr);
  REQUIRE(mesh.has_value());
  auto schedule = core::lower(*lp.plan, *mesh);
  REQUIRE(schedule.is_ok());
  Priced p{*lp.plan, sim::memory(*lp.plan, *mesh, *schedule), {}};
  core::CheckRegistry registry;
  core::add_core_checks(registry);
  sim::add_sim_checks(registry);
  core::CheckContext ctx{*lp.plan, &*mesh, nullptr};
  p.diags = core::run_checks(registry, ctx);
  return p;
}

}  // namespace planck::import::test
