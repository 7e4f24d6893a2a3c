// mpirun -np N planck exec PLAN [--backend nccl|mpi] [--warmup W] [--iters K] [--max-bytes B]
//                               [--check] [--topology FILE] [--expect INTENDED] [--timeout S] [-o REPORT]
// Runs the plan's communicators and schedule for real and compares with sim's prediction.

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/command.h"
#include "cli/exec_prediction.h"
#include "cli/inject_flag.h"
#include "cli/launcher_flags.h"
#include "core/mesh/placement.h"
#include "core/mesh/plan_mesh.h"
#include "core/plan/plan_load.h"
#include "core/plan/presets.h"
#include "core/check/report.h"
#include "core/schedule/schedule.h"
#include "exec/launch/launch.h"
#include "exec/runner.h"
#include "sim/cost.h"
#include "sim/topology.h"

namespace planck::cli {
namespace {

struct ExecOptions {
  std::string plan;
  LauncherFlags launcher;  // --backend, --timeout (30 s), --mpi-transport
  int warmup = 2;
  int iters = 5;
  std::int64_t max_bytes = std::int64_t{64} << 20;
  bool check = false;
  std::string topology;
  std::string output = "-";
  int kill_rank = -1;
  std::int64_t wire_min_bytes = std::int64_t{32} << 20;
  std::string inject;  // FAULT:VALUE
  std::string expect;  // intended plan
};

// The intended plan of --expect, lowered; the run's ops are predicted from its entries.
struct Intended {
  std::optional<core::Mesh> mesh;
  core::Schedule schedule;
  double factor = 1;
  // The intended entry for a run op: same role, op, phase and description; else same role,
  // op and phase.
  std::optional<exec::ExpectedOp> match(const core::ScheduledCollective& run) const {
    const core::ScheduledCollective* best = nullptr;
    for (const auto& e : schedule.collectives) {
      if (e.role != run.role || e.op != run.op || e.phase != run.phase) continue;
      if (!best || e.what == run.what) best = &e;
    }
    if (!best) return std::nullopt;
    return exec::ExpectedOp{mesh->groups(best->dims), exec::scaled_bytes(*best, factor),
                            std::string(core::op_name(best->op)) + " of role " + best->role + " over [" +
                                mesh->groups(best->dims).key() + "] in groups of " +
                                std::to_string(mesh->groups(best->dims).group_size())};
  }
};

core::Result<Intended> load_intended(const std::string& path, std::int64_t world, std::int64_t max_bytes) {
  core::LoadedPlan loaded = core::load_plan_file(path);
  core::Diagnostics diags = loaded.diagnostics;
  Intended in;
  if (loaded.plan) in.mesh = core::plan_mesh(*loaded.plan, &diags);
  if (!loaded.plan || !in.mesh) return core::Status::error("--expect " + path + ": the plan does not load (run planck verify " + path + ")");
  if (in.mesh->world() != world) {
    return core::Status::error("--expect " + path + ": its mesh " + in.mesh->to_string() + " has " +
                               std::to_string(in.mesh->world()) + " ranks, the run has " + std::to_string(world));
  }
  auto s = core::lower(*loaded.plan, *in.mesh);
  if (!s) return core::Status::error("--expect " + path + ": " + s.message());
  in.schedule = std::move(*s);
  in.factor = exec::scale_factor(in.schedule, max_bytes);
  return in;
}

// Only world rank 0 speaks, so N ranks do not print N copies of one error.
void say(bool root, const std::string& message) {
  if (root) print_error(message);
}
bool me_root(const exec::Communicator& world) { return world.rank() == 0; }

int run_exec(const ExecOptions& o) {
  const int rank = exec::launcher_rank();
  const bool root = rank == 0;
  core::LoadedPlan loaded = core::load_plan_file(o.plan);
  core::Diagnostics diags = loaded.diagnostics;
  std::optional<core::Mesh> mesh;
  if (loaded.plan) mesh = core::plan_mesh(*loaded.plan, &diags);
  if (!loaded.plan || !mesh) {
    if (root) {
      core::VerifyReport r;
      r.plan_path = o.plan;
      r.diagnostics = diags;
      r.ok = false;
      const std::string text = core::render_report(r, core::ReportFormat::kText);
      std::fwrite(text.data(), 1, text.size(), stderr);
    }
    return kExitCannotRun;
  }
  const core::Plan& plan = *loaded.plan;
  auto schedule = core::lower(plan, *mesh);
  if (!schedule) {
    say(root, o.plan + ": " + schedule.message());
    return kExitCannotRun;
  }
  if (o.kill_rank >= mesh->world()) {
    say(root, "--kill-rank " + std::to_string(o.kill_rank) + " is not a rank of " + o.plan + " (" + mesh->to_string() +
                  " has ranks 0 to " + std::to_string(mesh->world() - 1) + ")");
    return kExitCannotRun;
  }
  warn_if_slow(root, o.max_bytes, o.warmup + o.iters);
  auto fault = parse_fault(o.inject, mesh->world());
  if (!fault) {
    say(root, fault.message());
    return kExitCannotRun;
  }
  if (o.kill_rank >= 0) *fault = exec::Fault{exec::Fault::Kind::kKill, o.kill_rank, 0};
  std::optional<Intended> intended;
  if (!o.expect.empty()) {
    auto in = load_intended(o.expect, mesh->world(), o.max_bytes);
    if (!in) {
      say(root, in.message());
      return kExitCannotRun;
    }
    intended = std::move(*in);
  }
  std::optional<sim::Topology> topology;
  if (!o.topology.empty()) {
    auto t = sim::load_topology(o.topology);
    if (!t) {
      say(root, "--topology: " + t.message());
      return kExitCannotRun;
    }
    topology = std::move(*t);
  }

  auto launched = exec::launch(o.launcher.launch_options());
  if (!launched) {
    say(root, launched.message());
    return kExitCannotRun;
  }
  exec::Launch& L = *launched;
  exec::Communicator& world = *L.world;
  // Before any collective: a launcher that started the wrong number of ranks is a usage error.
  if (world.size() != mesh->world()) {
    say(world.rank() == 0, "the launcher started " + std::to_string(world.size()) + " ranks but " + o.plan + " has " +
                               mesh->to_string() + " = " + std::to_string(mesh->world()) + " ranks (nodes " +
                               std::to_string(plan.cluster.nodes) + " x gpus_per_node " +
                               std::to_string(plan.cluster.gpus_per_node) + "); run mpirun -np " +
                               std::to_string(mesh->world()));
    exec::shutdown(L);
    return kExitCannotRun;
  }

  const core::GpuSpec gpu = prediction_gpu(plan, L.backend);
  const sim::Topology* topo = topology ? &*topology : nullptr;
  exec::RunOptions ro;
  ro.warmup = o.warmup;
  ro.iters = o.iters;
  ro.max_bytes = o.max_bytes;
  ro.check_every_iteration = o.check;
  ro.fault = *fault;
  ro.wire = o.wire_min_bytes > 0 ? L.wire.get() : nullptr;
  ro.wire_min_total_bytes = o.wire_min_bytes;
  ro.wire_unavailable = o.wire_min_bytes > 0 ? L.wire_unavailable : "--wire-min-bytes 0";
  ro.traffic = L.traffic.get();
  ro.traffic_unavailable = L.traffic_unavailable;
  if (intended) {
    if (!ro.traffic) {
      say(me_root(world), "--expect compares per-peer traffic, which this run cannot measure: " + L.traffic_unavailable);
      exec::shutdown(L);
      return kExitCannotRun;
    }
    ro.expect = [&](const core::ScheduledCollective& run) { return intended->match(run); };
  }
  ro.predict = make_predictor(plan, *mesh, L.backend, topo);
  const int me = world.rank();
  const auto watchdog = exit_on_hang(me, world.size(), o.launcher.timeout_s);
  ro.watchdog = watchdog.get();

  exec::ExecReport report;
  report.backend = L.backend;
  report.plan = o.plan;
  report.prediction_basis = topo ? "topology" : "preset";
  report.gpu = topo ? o.topology : gpu.name;
  report.mpi = L.mpi;
  report.expect = o.expect;
  report.gpus_per_node = plan.cluster.gpus_per_node;
  if (!L.single_host || plan.cluster.nodes > 1) {
    report.notes.push_back("the plan's nodes are blocks of " + std::to_string(plan.cluster.gpus_per_node) +
                           " ranks; this run exercised the '" + L.link + "' link only, other link classes are unmeasured");
  }
  core::Status st = exec::run_plan(world, *mesh, *schedule, ro, report);
  if (!st) {
    world.abort("rank " + std::to_string(me) + ": " + st.message());
    exec::shutdown(L);
    return kExitCannotRun;
  }
  if (topo) {
    // Which figures came from where: the profile, or the preset where it has none.
    std::vector<std::pair<sim::LinkClass, core::CollOp>> used_links;
    for (const exec::OpResult& op : report.ops) {
      const auto link = sim::parse_link(op.link);
      if (link && op.group_size > 1) used_links.emplace_back(*link, op.op);
    }
    const std::string gaps = sim::missing_figures(*topo, used_links);
    if (!gaps.empty()) {
      report.prediction_basis = "topology+preset";
      report.notes.push_back("partial topology profile " + o.topology + ": no figures for " + gaps +
                             "; those predictions use the GPU preset " + gpu.name);
    }
  }
  int code = report.ok ? kExitOk : kExitFindings;
  if (const std::string why = fault_without_effect(ro.fault, report); !why.empty()) {
    say(me == 0, "--inject " + (o.inject.empty() ? "kill" : o.inject) + " changed nothing this run checks: " + why);
    code = kExitCannotRun;
  }
  if (me == 0) {
    if (!write_document_and_table(o.output, exec::report_json(report), exec::report_table(report))) {
      code = kExitCannotRun;
    }
  }
  exec::shutdown(L);
  return code;
}

void setup_exec(CLI::App& app, Action& action) {
  auto o = std::make_shared<ExecOptions>();
  app.description(
      "Run the plan's communicators and its collective schedule for real, under a launcher "
      "(mpirun -np N planck exec PLAN, or srun), and compare with the prediction. Every role's communicators are "
      "split from the world and their members checked; each scheduled collective runs once per iteration with its "
      "buffer scaled so the largest call is --max-bytes (the report records the factor); warmup, then timed "
      "iterations (min/median/max of the slowest rank), nccl-tests algbw/busbw, rank-dependent data checked "
      "exactly after the timed loop, per-peer traffic (bytes every rank sent to every other rank during one call, "
      "read by the transport: the kernel's TCP socket counts under MPI) against the prediction of the pinned "
      "algorithm (ring neighbours, pairwise all-to-all, chain broadcast), and wire bytes from interface counters "
      "where the transport has one (MPI forced onto TCP; over loopback on one host).\n"
      "Predicted times are a verdict only with --topology (a profile from planck calibrate); otherwise the run is "
      "reported as uncalibrated and no time ratio is given.\n"
      "Output: planck-exec/1 JSON to -o and an nccl-tests-like table on stdout (on stderr when the "
      "JSON goes to stdout). Details: docs/exec.md.\n"
      "Exit 0 when membership, data, per-peer traffic (no pair carrying unpredicted traffic, pairs within 3%), "
      "bytes and wire bytes (within 3%) agree; 1 when one disagreed; 2 when the "
      "plan cannot be loaded or lowered (it needs a model), the backend is missing, or the launcher started a "
      "number of ranks different from the plan's world. A rank that dies or hangs ends the whole job with an "
      "error naming it; the report is then not written.");
  app.add_option("plan", o->plan, "plan file (planck/1 JSON)")->required();
  add_launcher_flags(app, o->launcher);
  app.add_option("--warmup", o->warmup, "untimed calls per collective")->check(CLI::Range(0, 1000))->default_str("2");
  app.add_option("--iters", o->iters, "timed calls per collective")->check(CLI::Range(1, 100000))->default_str("5");
  app.add_option("--max-bytes", o->max_bytes,
                 "largest buffer of any call (bytes; suffixes KiB, MiB, GiB or K, M, G = powers of 1024); the "
                 "schedule is scaled down to fit")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40))
      ->default_str("64MiB");
  app.add_flag("--check", o->check, "also check the data after every warmup and timed call (not only the last)");
  app.add_option("--topology", o->topology,
                 "planck-topology/1 profile (from planck calibrate) for the predicted times; default: the plan's GPU "
                 "preset, 'cpu' for the MPI backend");
  app.add_option("--kill-rank", o->kill_rank,
                 "testing aid: this rank (0 to world-1) kills itself (SIGKILL) after the communicators are built, to "
                 "check that the job ends with an error naming it (mpirun then exits 137 = 128 + SIGKILL)")
      ->check(whole_number(0, core::kMaxWorld - 1));
  app.add_option("--wire-min-bytes", o->wire_min_bytes,
                 "interface-counter measurement: repeat each op until this many bytes crossed the wire in total, "
                 "plus an idle window as long (suffixes as --max-bytes; 0 = do not measure wire bytes)")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40))
      ->default_str("32MiB");
  app.add_option("--expect", o->expect,
                 "intended plan (same world size): predict every op's per-peer traffic from it instead of from PLAN, "
                 "and report each op and rank pair that it does not predict (what was meant vs what ran; exit 1)");
  app.add_option("--inject", o->inject,
                 "testing aid, a fault to see a check fail: wrong-data:RANK (that rank sends one wrong element), "
                 "wrong-colour:RANK (that rank splits into the next group), perturb:FRACTION (predicted per-peer "
                 "bytes x (1 + FRACTION); -1 to 1000, more than 0.03 either way), kill:RANK (as --kill-rank). RANK "
                 "is 0 to world-1; a run the fault did not change is exit 2");
  app.add_option("-o,--output", o->output, "planck-exec/1 JSON report ('-' = stdout), written atomically by rank 0")
      ->default_str("-");
  action = [o] { return run_exec(*o); };
}

}  // namespace

PLANCK_COMMAND(exec, "run the plan's communicators and collective schedule for real (under mpirun / srun)", setup_exec);

}  // namespace planck::cli
