// planck simulate PLAN [--topology FILE] [--format text|json] [--nvls] [--no-tree] [-o FILE]
// planck simulate PLAN --measured-step-s S -o PROFILE   (fit the compute profile's gemm_scale)

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "cli/command.h"
#include "cli/config_input.h"
#include "cli/number_flags.h"
#include "cli/plan_input.h"
#include "core/plan/plan_load.h"
#include "core/check/report.h"
#include "sim/simulate.h"
#include "sim/topology.h"

namespace planck::cli {
namespace {

struct SimulateOptions {
  ConfigOptions config;  // a framework config as input (cli/config_input.h)
  std::string plan;
  std::string topology;
  std::string format = "text";
  std::string output = "-";
  bool nvls = false;
  bool no_tree = false;
  double measured_step_s = 0;
};

// The gemm_scale at which the plan's predicted step equals `measured` (the step falls as the
// scale rises; bisection in log space), merged into the profile at `path` (created when absent).
int fit_measured_step(const SimulateOptions& o, const core::Plan& plan, const core::Mesh& mesh) {
  if (o.output == "-") {
    print_error("--measured-step-s needs -o PROFILE: the planck-topology/1 file to write the compute section into");
    return kExitCannotRun;
  }
  sim::Topology profile;
  if (std::filesystem::exists(o.output)) {
    auto t = sim::load_topology(o.output);
    if (!t) {
      print_error("-o " + t.message());
      return kExitCannotRun;
    }
    profile = std::move(*t);
  }
  std::optional<sim::Topology> links;
  sim::SimOptions opts;
  if (auto st = sim::configure_sim_options(opts, links, o.topology, o.nvls, o.no_tree); !st) {
    print_error(st.message());
    return kExitCannotRun;
  }
  sim::Topology trial = links ? *links : profile;
  trial.compute = sim::ComputeProfile{};
  opts.topology = &trial;
  auto step_at = [&](double scale) -> std::optional<double> {
    trial.compute->gemm_scale = scale;
    auto r = sim::simulate(plan, mesh, opts);
    if (!r) return std::nullopt;
    return r->step.step_time_s;
  };
  double lo = 0.01, hi = 100;
  const auto slow = step_at(lo), fast = step_at(hi);
  if (!slow || !fast) {
    print_error(o.plan + ": the plan cannot be simulated");
    return kExitCannotRun;
  }
  if (!(o.measured_step_s <= *slow && o.measured_step_s >= *fast)) {
    print_error("--measured-step-s " + std::to_string(o.measured_step_s) + " is outside what any gemm_scale in [0.01, 100] gives for " +
                o.plan + " (" + std::to_string(*fast) + " .. " + std::to_string(*slow) +
                " s): communication or memory-bound time alone exceeds it, or the plan is not the measured run");
    return kExitCannotRun;
  }
  for (int i = 0; i < 60; ++i) {
    const double mid = std::sqrt(lo * hi);
    (*step_at(mid) > o.measured_step_s ? lo : hi) = mid;
  }
  sim::ComputeProfile c = profile.compute.value_or(sim::ComputeProfile{});
  c.gemm_scale = std::sqrt(lo * hi);
  c.gpu = plan.cluster.gpu.name;
  c.method = "planck simulate " + o.plan + " --measured-step-s " + std::to_string(o.measured_step_s);
  profile.compute = c;
  if (!write_output(o.output, sim::topology_to_json(profile))) return kExitCannotRun;
  std::printf("gemm_scale %.4f written to %s (predicted step %.4g s at scale 1)\n", c.gemm_scale, o.output.c_str(),
              *step_at(1.0));
  return kExitOk;
}

int run_simulate(const SimulateOptions& o) {
  auto input = load_plan_input(o.plan, o.config);
  if (!input) return kExitCannotRun;
  const core::Plan* plan = &input->plan;
  const core::Mesh* mesh = &input->mesh;
  if (o.measured_step_s > 0) return fit_measured_step(o, *plan, *mesh);
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
      "or inside cluster.nvlink_domain where the plan sets one, NICs across them), add compute time from a "
      "per-kernel model (GEMMs, attention, memory-bound kernels, recompute; or model FLOPs at training.mfu when "
      "the plan sets it), the bubble, what overlaps and what is exposed, and the memory of the most-loaded GPU "
      "(params, grads, optimizer, activations, peak vs capacity). Needs the plan's model. JSON is planck-sim/1 "
      "(docs/simulator.md); details in docs/simulator.md.\n"
      "Exit 2 when the plan cannot be loaded, its mesh is invalid, it has no model, or --topology is unreadable; "
      "else 0 (memory-exceeds is a verify rule, not a simulate failure).");
  app.add_option("plan", o->plan, "a planck plan or a framework config (as verify takes: torchtitan TOML or config_registry.py:FUNCTION, Lingua YAML, Megatron script, DeepSpeed JSON), with --nodes/--gpus-per-node and the run's facts")->required();
  add_config_options(app, o->config);
  app.add_option("--topology", o->topology,
                 "planck-topology/1 profile (from planck calibrate): measured latency/bandwidth per link class "
                 "override the GPU preset's link figures; its compute section's gemm_scale scales GEMM and "
                 "attention efficiency");
  app.add_option("--format", o->format, "text or json")->check(CLI::IsMember({"text", "json"}))->default_str("text");
  app.add_flag("--nvls", o->nvls, "allow NVLink SHARP all-reduce inside a node (NVSwitch systems)");
  app.add_flag("--no-tree", o->no_tree, "ring only: never pick NCCL's tree all-reduce");
  app.add_option("-o,--output", o->output,
                 "write here ('-' = stdout), atomically; with --measured-step-s the profile to write")
      ->default_str("-");
  app.add_option("--measured-step-s", o->measured_step_s,
                 "a step time measured for this plan: fit the compute efficiency scale (gemm_scale) at which the "
                 "predicted step equals it and write it into -o PROFILE's compute section (planck-topology/1, "
                 "merged when the file exists)")
      ->check(finite_number(1e-9, 1e9, "seconds"));
  action = [o] { return run_simulate(*o); };
}

}  // namespace

PLANCK_COMMAND(simulate, "per-step collective schedule, bytes, predicted time, per-rank memory", setup_simulate);

}  // namespace planck::cli
