// planck diff A B [--format text|json] [--fail-on regression] [--threshold PCT] [--topology FILE] [-o FILE]

#include <memory>
#include <optional>
#include <string>

#include "cli/command.h"
#include "cli/config_input.h"
#include "cli/number_flags.h"
#include "cli/plan_facts_input.h"
#include "report/diff.h"

namespace planck::cli {
namespace {

struct DiffOptions {
  ConfigOptions config;  // a framework config as input (cli/config_input.h)
  std::string a, b;
  std::string format = "text";
  std::string fail_on = "never";
  double threshold_pct = 5;
  bool threshold_given = false;  // --threshold on the command line (gates even inside the stated intervals)
  std::string topology;
  std::string output = "-";
};

int run_diff(const DiffOptions& o) {
  std::optional<sim::Topology> topology;
  sim::SimOptions opts;
  if (auto st = sim::configure_sim_options(opts, topology, o.topology, false, false); !st) {
    print_error(st.message());
    return kExitCannotRun;
  }
  auto a = load_plan_facts(o.a, opts, nullptr, &o.config);
  if (!a) return kExitCannotRun;
  auto b = load_plan_facts(o.b, opts, nullptr, &o.config);
  if (!b) return kExitCannotRun;
  const report::PlanDiff d = report::diff_plans(*a, *b);
  const std::string out = o.format == "json" ? report::diff_to_json(d, o.threshold_pct, o.threshold_given)
                                             : report::diff_to_text(d, o.threshold_pct, o.threshold_given);
  if (!write_output(o.output, out)) return kExitCannotRun;
  if (o.fail_on == "regression" && !report::regressions(d, o.threshold_pct, o.threshold_given).empty()) {
    return kExitFindings;
  }
  return kExitOk;
}

void setup_diff(CLI::App& app, Action& action) {
  auto o = std::make_shared<DiffOptions>();
  app.description(
      "What changes from plan A to plan B: communicators added, removed or resized per role (dims, group size, "
      "groups, nodes spanned), bytes per rank per step across nodes and inside a node, peak memory per GPU, "
      "step time and exposed communication (from the one lowering `planck simulate` prices), and verify's "
      "diagnostics gained or lost. JSON is planck-diff/1 (docs/diff.md).\n"
      "Exit 0; with --fail-on regression, 1 when step time, cross-node bytes or peak memory per GPU are worse in "
      "B by more than --threshold percent; 2 when a plan cannot be loaded or bad usage.\n"
      "Example: planck diff plans/torchtitan-hsdp-2x8.json plans/torchtitan-hsdp-2x8-flattened.json");
  app.add_option("a", o->a, "plan A, the baseline (planck/1 JSON)")->required();
  app.add_option("b", o->b, "plan B, the proposed change (planck/1 JSON, or a framework config as verify takes)")->required();
  add_config_options(app, o->config);
  app.add_option("--format", o->format, "text or json")->check(CLI::IsMember({"text", "json"}))->default_str("text");
  app.add_option("--fail-on", o->fail_on,
                 "never (default) or regression: exit 1 when B's step time, cross-node bytes per step or peak "
                 "memory per GPU is worse than A's by more than --threshold percent (for CI on pull requests)")
      ->check(CLI::IsMember({"never", "regression"}))
      ->default_str("never");
  auto* threshold = app.add_option("--threshold", o->threshold_pct,
                                   "percent a gated figure may worsen before it is a regression; given, it also "
                                   "gates a step time that stays within both plans' stated intervals")
                        ->check(finite_number(0, 1e6, "percent"))
                        ->default_str("5");
  app.add_option("--topology", o->topology, "planck-topology/1 profile for both plans (as planck simulate)");
  app.add_option("-o,--output", o->output, "write here ('-' = stdout), atomically")->default_str("-");
  action = [o, threshold] {
    o->threshold_given = threshold->count() > 0;
    return run_diff(*o);
  };
}

}  // namespace

PLANCK_COMMAND(diff, "what changes between two plans: communicators, bytes across nodes, memory, step time", setup_diff);

}  // namespace planck::cli
