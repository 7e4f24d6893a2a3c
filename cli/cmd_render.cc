// planck render PLAN [--dim NAME[,NAME...]]... [--observed FILE]... [--sim] [--view mesh|comm|auto]
//               [--collapse-above N] [--format dot|svg|png] -o OUT.(svg|png|dot)

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/config_input.h"
#include "cli/plan_input.h"
#include "core/plan/plan_load.h"
#include "core/check/report.h"
#include "core/mesh/roles.h"
#include "core/schedule/schedule.h"
#include "viz/diagram.h"
#include "viz/graphviz.h"

namespace planck::cli {
namespace {

struct RenderOptions {
  ConfigOptions config;  // a framework config as input (cli/config_input.h)
  std::string plan;
  std::vector<std::string> dims;
  std::vector<std::string> observed;
  bool sim = false;
  std::string view = "auto";
  std::string format;  // "" = from the output's extension
  std::int64_t collapse_above = viz::kDefaultCollapseAbove;
  std::string output = "-";
};

int run_render(const RenderOptions& o) {
  viz::Format format = viz::Format::kDot;
  if (!o.format.empty()) {
    format = o.format == "svg" ? viz::Format::kSvg : (o.format == "png" ? viz::Format::kPng : viz::Format::kDot);
  } else if (!o.output.empty() && o.output != "-") {
    auto f = viz::format_from_path(o.output);
    if (!f) {
      print_error(f.message() + " (or pass --format dot|svg|png)");
      return kExitCannotRun;
    }
    format = *f;
  }
  if (o.view == "mesh" && !o.observed.empty()) {
    print_error("--observed draws the observed-vs-expected view (rings); drop --view mesh");
    return kExitCannotRun;
  }

  auto input = load_plan_input(o.plan, o.config);
  if (!input) return kExitCannotRun;
  const core::Plan& plan = input->plan;
  const core::Mesh* mesh = &input->mesh;

  viz::DiagramInput in = viz::plan_diagram_input(plan, *mesh, o.plan);
  in.view = o.view == "mesh" ? viz::View::kMesh : (o.view == "comm" ? viz::View::kComm : viz::View::kAuto);
  in.collapse_above = o.collapse_above;
  if (!o.dims.empty()) {
    auto sets = viz::dim_sets_from_specs(*mesh, o.dims, in.roles);
    if (!sets) {
      print_error(sets.message());
      return kExitCannotRun;
    }
    in.dim_sets = std::move(*sets);
  }

  auto read = read_observed_files(o.observed);
  if (!read) return kExitCannotRun;
  std::vector<core::Observed> observed = std::move(*read);
  if (!o.observed.empty()) in.observed = &observed;

  core::Schedule schedule;
  if (o.sim) {
    auto lowered = core::lower(plan, *mesh);
    if (!lowered) {
      print_error("--sim: " + lowered.message());
      return kExitCannotRun;
    }
    schedule = std::move(*lowered);
    in.schedule = &schedule;
  }

  auto dot = viz::build_dot(in);
  if (!dot) {
    print_error(dot.message());
    return kExitCannotRun;
  }
  auto bytes = viz::render_dot(*dot, format);
  if (!bytes) {
    print_error(bytes.message());
    return kExitCannotRun;
  }
  return write_output(o.output, *bytes) ? kExitOk : kExitCannotRun;
}

void setup_render(CLI::App& app, Action& action) {
  auto o = std::make_shared<RenderOptions>();
  app.description(
      "Draw the plan's mesh and communicators through Graphviz (in-process; no `dot` needed).\n"
      "  comm view (default): each group of the chosen dims as a ring in rank order; hops inside a node\n"
      "    solid blue, hops across nodes thick dashed red (a flattened HSDP ring leaves its node).\n"
      "  mesh view (--view mesh): nodes as clusters, GPUs as boxes 'rank (coordinates)', filled by group.\n"
      "  --observed: expected groups the run created (green), expected but missing (grey dashed, red\n"
      "    boxes), observed but unexpected (thick red), with a verdict line; HSDP running as FSDP is named.\n"
      "  --sim: bytes per optimizer step per ring hop and per link class (in the legend), from the lowered schedule.\n"
      "Above 32 ranks the comm view draws hops across nodes as a separate layer: one line per pair of nodes.\n"
      "Above --collapse-above ranks the diagram shows per-node / per-group summaries with counts.\n"
      "Output format from the -o extension (.svg, .png, .dot); '-o -' writes DOT to stdout.\n"
      "Exit 2 when the plan cannot be loaded or its mesh is invalid (or bad usage), else 0.\n"
      "Example: planck render plans/torchtitan-hsdp-2x8.json -o hsdp.svg");
  app.add_option("plan", o->plan, "a planck plan or a framework config (as verify takes: torchtitan TOML or config_registry.py:FUNCTION, Lingua YAML, Megatron script, DeepSpeed JSON), with --nodes/--gpus-per-node and the run's facts")->required();
  add_config_options(app, o->config);
  app.add_option("--dim", o->dims,
                 "dim or comma-joined dims to draw (repeatable; default: the plan's main role, e.g. fsdp for HSDP); "
                 "torchtitan's flattened names dp, dp_shard_cp and dp_cp are accepted")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--observed", o->observed,
                 "what a real run created: planck-observed JSON, NCCL_DEBUG=INFO log or PyTorch flight-recorder "
                 "dump (repeatable: one run's files are merged)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_flag("--sim", o->sim, "overlay bytes per step per link from the simulated schedule (needs the plan's model)");
  app.add_option("--view", o->view, "mesh, comm or auto (= comm)")->check(CLI::IsMember({"mesh", "comm", "auto"}))->default_str("auto");
  app.add_option("--collapse-above", o->collapse_above, "summarise per node / per group above this many ranks")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{4096}))
      ->default_str(std::to_string(viz::kDefaultCollapseAbove));
  app.add_option("--format", o->format, "dot, svg or png (default: from the -o extension)")
      ->check(CLI::IsMember({"dot", "svg", "png"}));
  app.add_option("-o,--output", o->output, "OUT.svg, OUT.png or OUT.dot, written atomically ('-' = stdout)")
      ->default_str("-");
  action = [o] { return run_render(*o); };
}

}  // namespace

PLANCK_COMMAND(render, "mesh / communicator diagram through Graphviz", setup_render);

}  // namespace planck::cli
