// planck simulate PLAN [--topology FILE] [--format text|json] [--nvls] [--no-tree] [-o FILE]

#include <memory>
#include <optional>
#include <string>

#include "cli/command.h"
#include "cli/plan_input.h"
#include "core/plan/plan_load.h"
#include "core/check/report.h"
#include "sim/simulate.h"
#include "sim/topology.h"

namespace planck::cli {
namespace {

struct SimulateOptions {
  std::string plan;
  std::string topology;
  std::string format = "text";
  std::string output = "-";
  bool nvls = false;
  bool no_tree = false;
};

int run_simulate(const SimulateOptions& o) {
  auto input = load_plan_input(o.plan);
  if (!input) return kExitCannotRun;
  const core::Plan* plan = &input->plan;
  const core::Mesh* mesh = &input->mesh;
  std::optional<sim::Topology> topology;
  sim::SimOptions opts;
  if (auto st = sim::configure_sim_options(opts, topology, o.topology, o.nvls, o.no_tree); !st) {
    print_error(st.message());
    return kExitCannotRun;
  }
  auto result = sim::simulate(*plan, *mesh, opts);
  if (!result) {
    print_error(o.plan + ": " + result.message());
    return kExitCannotRun;
  }
  const std::string out = o.format == "json" ? sim::sim_to_json(*result) : sim::sim_to_text(*result, *plan, *mesh);
  return write_output(o.output, out) ? kExitOk : kExitCannotRun;
}

void setup_simulate(CLI::App& app, Action& action) {
  auto o = std::make_shared<SimulateOptions>();
  app.description(
      "Lower the plan into the collectives of one optimizer step (role, dims, op, phase, group size, bytes per "
      "call, calls per step), time each on the cluster's links (NCCL-like ring/tree choice; NVLink inside a node, "
      "NICs across nodes), add compute time from model FLOPs at the plan's MFU (default 0.4), what overlaps and "
      "what is exposed, and the memory of the most-loaded GPU (params, grads, optimizer, activations, peak vs "
      "capacity). Needs the plan's model. JSON is planck-sim/1 (docs/simulator.md); details in docs/simulator.md.\n"
      "Exit 2 when the plan cannot be loaded, its mesh is invalid, it has no model, or --topology is unreadable; "
      "else 0 (memory-exceeds is a verify rule, not a simulate failure).");
  app.add_option("plan", o->plan, "plan file (planck/1 JSON)")->required();
  app.add_option("--topology", o->topology,
                 "planck-topology/1 profile (from planck calibrate): measured latency/bandwidth per link class "
                 "override the GPU preset's link figures");
  app.add_option("--format", o->format, "text or json")->check(CLI::IsMember({"text", "json"}))->default_str("text");
  app.add_flag("--nvls", o->nvls, "allow NVLink SHARP all-reduce inside a node (NVSwitch systems)");
  app.add_flag("--no-tree", o->no_tree, "ring only: never pick NCCL's tree all-reduce");
  app.add_option("-o,--output", o->output, "write here ('-' = stdout), atomically")->default_str("-");
  action = [o] { return run_simulate(*o); };
}

}  // namespace

PLANCK_COMMAND(simulate, "per-step collective schedule, bytes, predicted time, per-rank memory", setup_simulate);

}  // namespace planck::cli
