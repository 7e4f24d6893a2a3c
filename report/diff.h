#pragma once
// What changes from plan A to plan B (`planck diff A B`, and the baseline section of `planck
// report`): communicators added / removed / resized per role, bytes per step by link class,
// memory per GPU, step time, and the diagnostics gained or lost. Every figure is read from the
// two PlanFacts (report/plan_facts.h): nothing is recomputed here. JSON shape "planck-diff/1"
// in docs/diff.md.

#include <optional>
#include <string>
#include <vector>

#include "report/plan_facts.h"

namespace planck::report {

enum class Change { kAdded, kRemoved, kResized, kUnchanged };
const char* change_name(Change c);  // "added", "removed", "resized", "unchanged"

struct CommunicatorChange {
  Change change = Change::kUnchanged;
  std::string role;
  std::optional<Communicator> before, after;
};

// One figure of both plans. `known` is false when either plan has no model (nothing simulated).
struct Metric {
  std::string key;    // "step_time_s", "cross_node_bytes_per_step", ...
  std::string label;  // "step time"
  bool bytes = true;  // else seconds
  bool gates = false;  // checked by --fail-on regression
  bool known = false;
  double before = 0, after = 0;
  // Step time only: each plan's stated interval (sim/uncertainty.h).
  bool has_band = false;
  double before_low = 0, before_high = 0, after_low = 0, after_high = 0;
  // Both values inside both intervals: the model cannot tell them apart.
  bool within_bands() const;
  // (after - before) / before in percent; nullopt when before is 0 (and after is not).
  std::optional<double> change_pct() const;
  bool worse_by_more_than(double threshold_pct) const;
  std::string value_text(double v) const;  // "4.02 GB" or "3.27 s" / "657 ms"
  std::string change_text() const;         // "+5703.7%", or "new" from 0
};

// "3.27 s", "657 ms"; "n/a" when not finite.
std::string format_seconds(double s);

struct DiagnosticChange {
  bool gained = true;  // present in B only (else A only)
  core::Diagnostic diagnostic;
};

struct PlanDiff {
  std::string a_name, a_path, a_mesh, b_name, b_path, b_mesh;
  std::vector<CommunicatorChange> communicators;  // role order; unchanged ones included
  std::vector<Metric> metrics;
  std::vector<DiagnosticChange> diagnostics;
  std::string why_not;  // why the metrics are unknown, when they are
  double error_band = 0;  // MoE plans: the measured relative step-time error (sim/moe_band.h)
};

PlanDiff diff_plans(const PlanFacts& a, const PlanFacts& b);

// Gating metrics (step time, cross-node bytes, peak memory) worse by more than threshold_pct. A
// step time within both plans' stated intervals is no regression unless the threshold was given
// explicitly (threshold_given: --threshold on the command line).
std::vector<const Metric*> regressions(const PlanDiff& d, double threshold_pct, bool threshold_given = true);

// "dp_shard: 2 groups of 8 ranks, inside one node" / "... spanning 2 nodes".
std::string describe(const Communicator& c);

std::string diff_to_text(const PlanDiff& d, double threshold_pct, bool threshold_given = true);
std::string diff_to_json(const PlanDiff& d, double threshold_pct, bool threshold_given = true);

}  // namespace planck::report
