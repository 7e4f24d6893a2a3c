#include "core/check/checks.h"

#include <set>

namespace planck::core {

std::vector<RuleInfo> CheckRegistry::rules() const {
  std::vector<RuleInfo> out;
  std::set<std::string> seen;
  for (const auto& c : checks_) {
    for (const auto& r : c.rules) {
      if (seen.insert(r.id).second) out.push_back(r);
    }
  }
  return out;
}

namespace {

// docs/verify.md: per role only the most specific rule is reported. hsdp-flattened replaces
// groups-mismatch and group-size; group-overlap / group-coverage / group-size replace
// groups-mismatch.
void keep_most_specific(Diagnostics& diags) {
  std::set<std::string> flattened, structural;
  for (const auto& d : diags.items()) {
    if (d.role.empty()) continue;
    if (d.rule == "hsdp-flattened") flattened.insert(d.role);
    if (d.rule == "group-overlap" || d.rule == "group-coverage" || d.rule == "group-size") structural.insert(d.role);
  }
  auto& items = diags.items();
  std::vector<Diagnostic> kept;
  kept.reserve(items.size());
  for (auto& d : items) {
    bool drop = false;
    if (!d.role.empty()) {
      if (flattened.count(d.role) && (d.rule == "groups-mismatch" || d.rule == "group-size")) drop = true;
      if (structural.count(d.role) && d.rule == "groups-mismatch") drop = true;
    }
    if (!drop) kept.push_back(std::move(d));
  }
  items = std::move(kept);
}

}  // namespace

Diagnostics run_checks(const CheckRegistry& registry, const CheckContext& ctx) {
  Diagnostics out;
  for (const auto& c : registry.checks()) {
    if (c.needs_mesh && !ctx.mesh) continue;
    c.run(ctx, out);
  }
  keep_most_specific(out);
  for (auto& d : out.items()) {
    if (d.line == 0 && d.file.empty()) {
      SourcePos pos = ctx.plan.position(d.pointer);
      d.line = pos.line;
      d.column = pos.column;
    }
  }
  return out;
}

}  // namespace planck::core
