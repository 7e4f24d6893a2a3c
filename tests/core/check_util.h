#pragma once
// Helpers for core tests: a plan from text, and the diagnostics the core checks give it.

#include <string>

#include "core/mesh/plan_mesh.h"
#include "core/check/checks.h"
#include "core/plan/plan_load.h"

namespace planck::test {

struct Checked {
  core::LoadedPlan loaded;
  core::Diagnostics diags;    // run_checks over the core checks (empty when loading failed)
  core::Diagnostics skipped;  // its checks-skipped notes, kept apart so rule tests see one rule
  int count(const std::string& rule) const {
    int n = 0;
    for (const auto& d : diags.items()) n += d.rule == rule;
    for (const auto& d : loaded.diagnostics.items()) n += d.rule == rule;
    return n;
  }
  const core::Diagnostic* find(const std::string& rule) const {
    for (const auto& d : diags.items()) {
      if (d.rule == rule) return &d;
    }
    for (const auto& d : loaded.diagnostics.items()) {
      if (d.rule == rule) return &d;
    }
    return nullptr;
  }
};

inline Checked check_text(const std::string& text) {
  Checked c;
  c.loaded = core::load_plan_text(text, "plan.json");
  if (!c.loaded.plan) return c;
  core::CheckRegistry reg;
  core::add_core_checks(reg);
  auto mesh = core::plan_mesh(*c.loaded.plan, nullptr);
  core::CheckContext ctx{*c.loaded.plan, mesh ? &*mesh : nullptr, nullptr};
  core::Diagnostics all = core::run_checks(reg, ctx);
  for (auto& d : all.items()) {
    (d.rule == "checks-skipped" ? c.skipped : c.diags).add(std::move(d));
  }
  return c;
}

// A minimal valid plan with the given cluster/mesh and extra top-level members (JSON text
// starting with a comma, or empty).
inline std::string plan(int nodes, int gpn, const std::string& dims, const std::string& shape,
                        const std::string& extra = "") {
  return "{\"format\": \"planck/1\", \"cluster\": {\"nodes\": " + std::to_string(nodes) +
         ", \"gpus_per_node\": " + std::to_string(gpn) + "}, \"mesh\": {\"dims\": " + dims + ", \"shape\": " +
         shape + "}" + extra + "}";
}

}  // namespace planck::test
