// planck report PLAN [--observed FILE]... [--enumerate FILE] [--baseline PLAN] [--threshold PCT]
//               [--topology FILE] -o report.html

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/config_input.h"
#include "cli/number_flags.h"
#include "cli/plan_facts_input.h"
#include "cli/plan_input.h"
#include "core/base/input_file.h"
#include "report/html.h"
#include "viz/diagram.h"
#include "viz/graphviz.h"

namespace planck::cli {
namespace {

struct ReportOptions {
  ConfigOptions config;  // a framework config as input (cli/config_input.h)
  std::string plan;
  std::vector<std::string> observed;
  std::string enumerate;
  std::string baseline;
  double threshold_pct = 5;
  std::string topology;
  std::string output;
};

std::optional<std::string> svg_of(const viz::DiagramInput& in) {
  auto dot = viz::build_dot(in);
  if (!dot) {
    print_error(dot.message());
    return std::nullopt;
  }
  auto svg = viz::render_dot(*dot, viz::Format::kSvg);
  if (!svg) {
    print_error(svg.message());
    return std::nullopt;
  }
  return *svg;
}

// The timeline of the performance model's stages: every virtual stage the busiest stage's time
// per micro-batch / v (simulate's compute breakdown); backward split evenly into input and weight
// gradients, which schedules without a separate W run back to back (sim/pipeline.h).
void add_pipeline(report::ReportInput& r, const core::Plan& plan, const core::Mesh& mesh) {
  r.pp = mesh.size("pp");
  const auto& sim = r.facts->sim;
  if (!sim) {
    r.pipeline_note = "Not simulated: " + r.facts->why_not;
    return;
  }
  if (r.pp <= 1) {
    r.pipeline_note = "pp = 1: one stage, no pipeline to draw.";
    return;
  }
  r.virtual_stages = sim->schedule.virtual_stages;
  sim::PipelineInput in;
  in.schedule = plan.parallelism.pipeline_schedule.value_or(core::PipelineSchedule::k1F1B);
  in.pp = r.pp;
  in.virtual_stages = r.virtual_stages;
  in.micro_batches = sim->schedule.micro_batches;
  const double v = static_cast<double>(r.virtual_stages);
  sim::StageTimes st;
  st.forward_s = sim->compute.layers_forward_s / v;
  st.backward_input_s = st.backward_weight_s = sim->compute.layers_backward_s / (2 * v);
  in.stages.assign(static_cast<std::size_t>(r.pp * r.virtual_stages), st);
  auto tl = sim::simulate_pipeline(in);
  if (!tl) {
    r.pipeline_note = tl.message();
    return;
  }
  r.pipeline = std::move(*tl);
}

int run_report(const ReportOptions& o) {
  std::optional<sim::Topology> topology;
  sim::SimOptions opts;
  if (auto st = sim::configure_sim_options(opts, topology, o.topology, false, false); !st) {
    print_error(st.message());
    return kExitCannotRun;
  }
  auto read = read_observed_files(o.observed);
  if (!read) return kExitCannotRun;
  std::vector<core::Observed> observed = std::move(*read);
  std::vector<report::LayoutPoint> layouts;
  if (!o.enumerate.empty()) {
    auto text = core::read_input(o.enumerate);
    auto points = text ? report::read_enumerate(o.enumerate, *text) : core::Result<std::vector<report::LayoutPoint>>(text.status());
    if (!points) {
      print_error("--enumerate " + points.message());
      return kExitCannotRun;
    }
    layouts = std::move(*points);
  }
  auto input = load_plan_input(o.plan, o.config);
  if (!input) return kExitCannotRun;
  auto facts = load_plan_facts(o.plan, opts, observed.empty() ? nullptr : &observed, &o.config);
  if (!facts) return kExitCannotRun;
  std::optional<report::PlanDiff> diff;
  if (!o.baseline.empty()) {
    auto base = load_plan_facts(o.baseline, opts, nullptr, &o.config);
    if (!base) return kExitCannotRun;
    diff = report::diff_plans(*base, *facts);
  }

  report::ReportInput r;
  r.facts = &*facts;
  viz::DiagramInput d = viz::plan_diagram_input(input->plan, input->mesh, o.plan);
  d.view = viz::View::kMesh;
  auto mesh_svg = svg_of(d);
  d.view = viz::View::kComm;
  if (facts->schedule) d.schedule = &*facts->schedule;
  auto comm_svg = svg_of(d);
  if (!mesh_svg || !comm_svg) return kExitCannotRun;
  r.mesh_svg = std::move(*mesh_svg);
  r.comm_svg = std::move(*comm_svg);
  if (!observed.empty()) {
    d.schedule = nullptr;
    d.observed = &observed;
    auto obs_svg = svg_of(d);
    if (!obs_svg) return kExitCannotRun;
    r.observed_svg = std::move(*obs_svg);
    r.observed_files = o.observed;
  }
  add_pipeline(r, input->plan, input->mesh);
  if (diff) r.baseline = &*diff;
  r.threshold_pct = o.threshold_pct;
  if (!o.enumerate.empty()) {
    r.layouts = &layouts;
    r.enumerate_path = o.enumerate;
  }
  return write_output(o.output, report::report_html(r)) ? kExitOk : kExitCannotRun;
}

void setup_report(CLI::App& app, Action& action) {
  auto o = std::make_shared<ReportOptions>();
  app.description(
      "Write one self-contained HTML page for the plan (inline CSS and SVG, no script, no network; open it from a "
      "CI artifact): the verify verdict and every diagnostic with its fix, the mesh and communicator diagrams, the "
      "per-step schedule with bytes and time per link class, memory per GPU as a stacked bar against capacity, the "
      "pipeline timeline of the performance model, and as asked: --observed (observed-vs-expected diagram, "
      "observed checks), --enumerate (time-vs-memory scatter, Pareto front, chosen layout), --baseline (what "
      "changes from the baseline plan, as planck diff). Sections and ids: docs/report.md.\n"
      "Exit 0 when the page is written (whatever the verdict: planck verify gates); 2 when an input cannot be "
      "read or bad usage.\n"
      "Example: planck report plans/torchtitan-hsdp-2x8-flattened.json --baseline plans/torchtitan-hsdp-2x8.json "
      "-o report.html");
  app.add_option("plan", o->plan, "a planck plan or a framework config (as verify takes: torchtitan TOML or config_registry.py:FUNCTION, Lingua YAML, Megatron script, DeepSpeed JSON), with --nodes/--gpus-per-node and the run's facts")->required();
  add_config_options(app, o->config);
  app.add_option("--observed", o->observed,
                 "what a real run created (as planck verify --observed; repeatable: one run's files)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--enumerate", o->enumerate, "planck enumerate --format json output to plot");
  app.add_option("--baseline", o->baseline, "the plan this one replaces: adds planck diff BASELINE PLAN as a section");
  app.add_option("--threshold", o->threshold_pct, "percent a gated figure may worsen before --baseline marks it a regression")
      ->check(finite_number(0, 1e6, "percent"))
      ->default_str("5");
  app.add_option("--topology", o->topology, "planck-topology/1 profile (as planck simulate)");
  app.add_option("-o,--output", o->output, "the HTML file to write, atomically ('-' = stdout)")->required();
  action = [o] { return run_report(*o); };
}

}  // namespace

PLANCK_COMMAND(report, "one self-contained HTML page: verdict, diagrams, schedule, memory, pipeline", setup_report);

}  // namespace planck::cli
