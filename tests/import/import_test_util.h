#pragma once
// Helpers for the importer suites: import a config, then load the plan with core's loader and
// run core's checks on it, as `planck verify` does.

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/mesh/plan_mesh.h"
#include "core/check/checks.h"
#include "core/plan/plan_load.h"
#include "core/check/rank_checks.h"
#include "import/importer.h"

namespace planck::import::test {

inline std::string data_path(const std::string& rel) { return std::string(PLANCK_TEST_DATA_DIR) + "/import/" + rel; }

inline std::string read_data(const std::string& rel) {
  std::ifstream in(data_path(rel), std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "missing test data " << rel);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// `s` with the first `from` replaced by `to`; a test whose text lacks `from` fails.
inline std::string replace(std::string s, const std::string& from, const std::string& to) {
  auto p = s.find(from);
  REQUIRE_MESSAGE(p != std::string::npos, "test setup: '" << from << "' not found");
  return s.replace(p, from.size(), to);
}

inline ImportOptions world(std::int64_t nodes, std::int64_t gpus_per_node) {
  ImportOptions o;
  o.nodes = nodes;
  o.gpus_per_node = gpus_per_node;
  return o;
}

// A config of tests/data/import/ imported with `framework`'s importer; the refusal's message fails.
inline ImportResult import_data_ok(const std::string& framework, const std::string& rel, const ImportOptions& opts) {
  auto r = import_file(framework, data_path(rel), opts);
  REQUIRE_MESSAGE(r.is_ok(), (r.is_ok() ? std::string() : r.message()));
  return std::move(*r);
}

inline ImportResult import_ok(ImportFn fn, const std::string& text, const ImportOptions& opts,
                              const std::string& path = "config") {
  auto r = fn(text, path, opts);
  REQUIRE_MESSAGE(r.is_ok(), (r.is_ok() ? std::string() : r.message()));
  return std::move(*r);
}

inline std::string import_error(ImportFn fn, const std::string& text, const ImportOptions& opts,
                                const std::string& path = "config") {
  auto r = fn(text, path, opts);
  REQUIRE_MESSAGE(!r.is_ok(), "expected a refusal, got a plan");
  return r.message();
}

// A finding of `rule` whose message contains `text`.
inline bool finding_says(const ImportResult& r, const std::string& rule, const std::string& text) {
  for (const ImportFinding& f : r.findings) {
    if (f.rule == rule && f.message.find(text) != std::string::npos) return true;
  }
  return false;
}

// The plan through core: load (schema), mesh, core and rank-program checks.
inline core::Diagnostics verify(const ImportResult& r) {
  core::LoadedPlan lp = core::load_plan_text(r.plan.dump(2), "imported.json");
  core::Diagnostics out = lp.diagnostics;
  REQUIRE_MESSAGE(lp.plan.has_value(),
                  "importer wrote a plan core rejects: " << r.plan.dump(2) << "\n"
                                                         << (out.items().empty() ? "" : out.items()[0].message));
  core::Diagnostics mesh_diags;
  auto mesh = core::plan_mesh(*lp.plan, &mesh_diags);
  core::CheckRegistry registry;
  core::add_core_checks(registry);
  core::add_rank_checks(registry);
  core::CheckContext ctx{*lp.plan, mesh ? &*mesh : nullptr, nullptr};
  out.append(core::run_checks(registry, ctx));
  if (!mesh) out.append(mesh_diags);
  return out;
}

inline std::string error_rules(const core::Diagnostics& d) {
  std::string out;
  for (const auto& x : d.items()) {
    if (x.severity == core::Severity::kError) out += x.rule + ": " + x.message + "\n";
  }
  return out;
}

// The communicators of `dims` in the imported plan's mesh, as rank lists.
inline std::vector<std::vector<std::int64_t>> groups(const ImportResult& r, const std::vector<std::string>& dims) {
  core::LoadedPlan lp = core::load_plan_text(r.plan.dump(), "imported.json");
  REQUIRE(lp.plan.has_value());
  auto mesh = core::plan_mesh(*lp.plan, nullptr);
  REQUIRE(mesh.has_value());
  core::GroupSet gs = mesh->groups(dims);
  std::vector<std::vector<std::int64_t>> out;
  for (std::int64_t g = 0; g < gs.num_groups(); ++g) out.push_back(gs.members(g));
  return out;
}

// Findings of `rule` whose message contains `text`.
inline int findings(const ImportResult& r, const std::string& rule, const std::string& text = "") {
  int n = 0;
  for (const ImportFinding& f : r.findings) n += f.rule == rule && f.message.find(text) != std::string::npos;
  return n;
}

inline bool any_contains(const std::vector<std::string>& lines, const std::string& needle) {
  for (const auto& l : lines) {
    if (l.find(needle) != std::string::npos) return true;
  }
  return false;
}

using Shape = std::vector<std::int64_t>;
using Dims = std::vector<std::string>;
inline Shape shape_of(const ImportResult& r) { return r.plan["mesh"]["shape"].get<Shape>(); }
inline Dims dims_of(const ImportResult& r) { return r.plan["mesh"]["dims"].get<Dims>(); }

}  // namespace planck::import::test
