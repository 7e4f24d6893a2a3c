// mpirun -np N planck calibrate [--backend nccl|mpi] [--min-bytes B] [--max-bytes B] -o TOPOLOGY
// planck calibrate --compute PLAN -o TOPOLOGY   (one process on a GPU host: cli/calibrate_compute.h)
// Size sweeps of every collective over groups of several sizes, a least-squares line per op and
// the measured points, written as the planck-topology/1 profile that `planck simulate/exec --topology` read.

#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/calibrate_compute.h"
#include "cli/command.h"
#include "cli/launcher_flags.h"
#include "exec/calibrate.h"
#include "exec/launch/launch.h"
#include "sim/topology.h"

namespace planck::cli {
namespace {

struct CalibrateOptions {
  LauncherFlags launcher{"", 60, "tcp"};  // --backend, --timeout (60 s: a sweep step is long), --mpi-transport
  std::int64_t min_bytes = 4096;
  std::int64_t max_bytes = std::int64_t{64} << 20;
  int iters = 5;
  int warmup = 1;
  std::string output = "-";
  std::string compute_plan;
};

sim::LinkFit to_link_fit(const exec::CalibrationFit& f, const std::vector<std::int64_t>& group_sizes,
                         const exec::CalibrateOptions& co, const std::vector<exec::CalibrationSample>& samples) {
  sim::LinkFit l;
  l.latency_s = f.latency_s;
  l.step_latency_s = f.step_latency_s;
  l.bandwidth_gbps = f.bandwidth_gbps;
  l.fit = {{"samples", f.samples},
           {"rms_relative_error", f.rms_relative_error},
           {"group_sizes", group_sizes},
           {"min_bytes", co.min_bytes},
           {"max_bytes", co.max_bytes},
           {"method", "least squares of (line - time)^2 / time, non-negative terms"}};
  // The measurements: the simulator reads them for the group sizes swept (sim/topology.h),
  // and they let a fit be judged or redone.
  for (const auto& s : samples) {
    if (s.op == f.op) l.points.push_back({s.group_size, s.bytes, s.time_s});
  }
  sim::sort_points(l.points);
  return l;
}

int run_calibrate(const CalibrateOptions& o) {
  if (!o.compute_plan.empty()) return run_calibrate_compute(o.compute_plan, o.output, o.warmup, o.iters);
  const bool root = exec::launcher_rank() == 0;
  if (o.min_bytes > o.max_bytes) {
    if (root) print_error("--min-bytes " + std::to_string(o.min_bytes) + " exceeds --max-bytes " + std::to_string(o.max_bytes));
    return kExitCannotRun;
  }
  warn_if_slow(root, o.max_bytes, o.warmup + o.iters);
  auto launched = exec::launch(o.launcher.launch_options());
  if (!launched) {
    if (root) print_error(launched.message());
    return kExitCannotRun;
  }
  exec::Launch& L = *launched;
  exec::Communicator& world = *L.world;
  if (world.size() < 2) {
    if (world.rank() == 0) print_error("calibrate needs at least 2 ranks: run it under mpirun -np N (N >= 2)");
    exec::shutdown(L);
    return kExitCannotRun;
  }
  const int me = world.rank();
  const auto watchdog = exit_on_hang(me, world.size(), o.launcher.timeout_s);
  exec::CalibrateOptions co;
  co.min_bytes = o.min_bytes;
  co.max_bytes = o.max_bytes;
  co.iters = o.iters;
  co.warmup = o.warmup;
  co.watchdog = watchdog.get();
  auto samples = exec::calibration_sweep(world, co);
  if (!samples) {
    world.abort("rank " + std::to_string(me) + ": " + samples.message());
    exec::shutdown(L);
    return kExitCannotRun;
  }
  int code = kExitOk;
  if (me == 0) {
    auto link = sim::parse_link(L.link);
    sim::Topology t;
    t.source = "planck calibrate --backend " + L.backend + ", " + std::to_string(world.size()) + " ranks, " +
               (L.single_host ? "one host" : "several hosts") + ", link " + L.link;
    t.intra_node = link.value_or(sim::LinkClass::kLoopback);
    // One host: the plan's "nodes" are blocks of ranks on the same link.
    if (L.single_host) t.inter_node = t.intra_node;
    const auto sizes = exec::calibration_group_sizes(world.size());
    std::string table = "# planck calibrate: " + t.source + "\n#  op               latency(us)  step(us)  busbw(GB/s)  rms_err  samples\n";
    for (core::CollOp op : core::kAllCollOps) {
      auto f = exec::fit_line(*samples, op);
      if (!f) continue;
      t.set(t.intra_node, op, to_link_fit(*f, sizes, co, *samples));
      char line[200];
      std::snprintf(line, sizeof line, "   %-15s %12.2f %9.2f %12.3f %8.3f %8lld\n", core::op_name(op), f->latency_s * 1e6,
                    f->step_latency_s * 1e6, f->bandwidth_gbps, f->rms_relative_error, static_cast<long long>(f->samples));
      table += line;
    }
    if (auto all = exec::fit_line(*samples, std::nullopt)) t.set_default(t.intra_node, to_link_fit(*all, sizes, co, {}));
    if (!write_document_and_table(o.output, sim::topology_to_json(t), table)) code = kExitCannotRun;
  }
  exec::shutdown(L);
  return code;
}

void setup_calibrate(CLI::App& app, Action& action) {
  auto o = std::make_shared<CalibrateOptions>();
  app.description(
      "Measure latency and bandwidth of this machine's links under a launcher (mpirun -np N planck calibrate -o "
      "topo.json): every collective over groups of N, N/2, ... 2 ranks (all groups at once, as a plan's groups run), "
      "sizes from --min-bytes to --max-bytes in steps of 4x, median of the slowest rank; then a least-squares line "
      "per op, time = latency + step_latency x ring steps + wire bytes per rank / bus bandwidth, written with the "
      "measured points as a planck-topology/1 profile for planck simulate --topology and planck exec --topology "
      "(group sizes that were measured are predicted from the points, others from the line). More --iters steady "
      "the points on a noisy machine. Details: docs/exec.md.\n"
      "--compute PLAN instead times, in one process on this host's GPU (no launcher), the cuBLAS BF16 GEMMs PLAN's "
      "model runs under its tp/cp/ep, fits one efficiency scale against the GPU preset's curve and writes or merges "
      "the profile's compute section (docs/simulator.md, \"Compute profile\"); exit 2 without a GPU or CUDA.\n"
      "Exit 2 when the backend is missing, fewer than 2 ranks run, or the output cannot be written.");
  add_launcher_flags(app, o->launcher);
  app.add_option("--min-bytes", o->min_bytes, "smallest call (bytes; KiB/MiB/GiB suffixes)")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40))
      ->default_str("4KiB");
  app.add_option("--max-bytes", o->max_bytes, "largest call (bytes; KiB/MiB/GiB suffixes)")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40))
      ->default_str("64MiB");
  app.add_option("--iters", o->iters, "timed calls per point")->check(CLI::Range(1, 1000))->default_str("5");
  app.add_option("--warmup", o->warmup, "untimed calls per point")->check(CLI::Range(0, 1000))->default_str("1");
  app.add_option("--compute", o->compute_plan,
                 "PLAN: time the GEMMs of this plan's model on the local GPU and write the compute section");
  app.add_option("-o,--output", o->output,
                 "planck-topology/1 profile ('-' = stdout), written atomically by rank 0; --compute merges into it")
      ->default_str("-");
  action = [o] { return run_calibrate(*o); };
}

}  // namespace

PLANCK_COMMAND(calibrate, "measure latency/bandwidth per link class, write a topology profile (under mpirun)",
               setup_calibrate);

}  // namespace planck::cli
