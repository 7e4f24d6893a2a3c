// mpirun -np N planck bench PLAN... [--topology FILE] [--warmup W] [--iters K] [--max-bytes B] [-o REPORT]
// mpirun -np N planck bench --from-enumerate FILE --plan TEMPLATE [--top K] ...
// Runs several layouts' schedules on the same allocation and ranks them by what was measured.

#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/exec_prediction.h"
#include "cli/launcher_flags.h"
#include "core/base/input_file.h"
#include "core/base/json_scan.h"
#include "core/mesh/plan_mesh.h"
#include "core/plan/plan_load.h"
#include "core/schedule/schedule.h"
#include "exec/bench.h"
#include "exec/launch/launch.h"
#include "exec/runner.h"
#include "exec/socket_traffic.h"
#include "sim/topology.h"

namespace planck::cli {
namespace {

struct BenchOptions {
  std::vector<std::string> plans;
  std::string from_enumerate, templ;
  std::int64_t top = 3;
  LauncherFlags launcher;
  int warmup = 2;
  int iters = 5;
  std::int64_t max_bytes = std::int64_t{64} << 20;
  std::string topology;
  std::string output = "-";
};

struct Candidate {
  std::string name;
  core::Plan plan;
  core::Mesh mesh;
  core::Schedule schedule;
};

core::Result<Candidate> lower_text(const std::string& name, const std::string& text) {
  core::LoadedPlan loaded = core::load_plan_text(text, name);
  core::Diagnostics diags = loaded.diagnostics;
  std::optional<core::Mesh> mesh;
  if (loaded.plan) mesh = core::plan_mesh(*loaded.plan, &diags);
  if (!loaded.plan || !mesh) {
    std::string why;
    for (const auto& d : diags.items()) why += (why.empty() ? "" : "; ") + d.message;
    return core::Status::error(name + ": the plan does not load" + (why.empty() ? "" : " (" + why + ")"));
  }
  auto s = core::lower(*loaded.plan, *mesh);
  if (!s) return core::Status::error(name + ": " + s.message());
  return Candidate{name, *loaded.plan, *mesh, std::move(*s)};
}

// Through the input gate every reader uses (512 MiB cap), then the JSON nesting bound.
core::Result<std::string> read_text(const std::string& path) {
  auto text = core::read_input(path);
  if (!text) return text.status();
  if (auto st = core::check_json_nesting(*text, path); !st) return st;
  return text;
}

// The template plan with the K-th enumerated layout's mesh, parallelism and training fields.
core::Result<std::vector<Candidate>> from_enumerate(const BenchOptions& o) {
  auto e = read_text(o.from_enumerate);
  if (!e) return e.status();
  auto t = read_text(o.templ);
  if (!t) return t.status();
  nlohmann::json en = nlohmann::json::parse(*e, nullptr, false), tp = nlohmann::json::parse(*t, nullptr, false);
  if (en.is_discarded() || !en.is_object() || en.value("format", "") != "planck-enumerate/1" ||
      !en["layouts"].is_array()) {
    return core::Status::error(o.from_enumerate + ": not a planck-enumerate/1 JSON document (planck enumerate --format json)");
  }
  if (tp.is_discarded() || !tp.is_object()) return core::Status::error(o.templ + ": not a JSON plan");
  std::vector<Candidate> out;
  for (std::size_t k = 0; k < en["layouts"].size() && static_cast<std::int64_t>(k) < o.top; ++k) {
    const auto& row = en["layouts"][k];
    nlohmann::json plan = tp;
    plan["mesh"] = row["mesh"];
    plan["parallelism"] = row["parallelism"];
    for (const auto& [field, value] : row["training"].items()) plan["training"][field] = value;
    const std::string name = o.from_enumerate + "#" + std::to_string(k + 1);
    plan["name"] = name;
    auto c = lower_text(name, plan.dump());
    if (!c) return c.status();
    out.push_back(std::move(*c));
  }
  if (out.empty()) return core::Status::error(o.from_enumerate + ": no layouts");
  return out;
}

core::Result<std::vector<Candidate>> candidates(const BenchOptions& o) {
  if (!o.from_enumerate.empty()) return from_enumerate(o);
  std::vector<Candidate> out;
  for (const auto& p : o.plans) {
    auto text = read_text(p);
    if (!text) return text.status();
    auto c = lower_text(p, *text);
    if (!c) return c.status();
    out.push_back(std::move(*c));
  }
  return out;
}

int run_bench(const BenchOptions& o) {
  const bool root = exec::launcher_rank() == 0;
  auto say = [&](const std::string& m) {
    if (root) print_error(m);
  };
  if (o.plans.empty() == o.from_enumerate.empty() || o.from_enumerate.empty() != o.templ.empty()) {
    say("bench: give PLAN files, or --from-enumerate FILE with --plan TEMPLATE");
    return kExitCannotRun;
  }
  auto cands = candidates(o);
  if (!cands) {
    say(cands.message());
    return kExitCannotRun;
  }
  const std::int64_t world = cands->front().mesh.world();
  for (const auto& c : *cands) {
    if (c.mesh.world() != world) {
      say("bench: " + c.name + " has " + std::to_string(c.mesh.world()) + " ranks, " + cands->front().name + " has " +
          std::to_string(world) + ": layouts must share one world");
      return kExitCannotRun;
    }
  }
  std::optional<sim::Topology> topology;
  if (!o.topology.empty()) {
    auto t = sim::load_topology(o.topology);
    if (!t) {
      say("--topology: " + t.message());
      return kExitCannotRun;
    }
    topology = std::move(*t);
  }
  auto launched = exec::launch(o.launcher.launch_options());
  if (!launched) {
    say(launched.message());
    return kExitCannotRun;
  }
  exec::Launch& L = *launched;
  exec::Communicator& w = *L.world;
  if (w.size() != world) {
    say("the launcher started " + std::to_string(w.size()) + " ranks but the layouts have " + std::to_string(world) +
        "; run mpirun -np " + std::to_string(world));
    exec::shutdown(L);
    return kExitCannotRun;
  }
  // One scale factor for every layout, so their times compare: the one that fits them all.
  double factor = 1;
  for (const auto& c : *cands) factor = std::min(factor, exec::scale_factor(c.schedule, o.max_bytes));

  const auto watchdog = exit_on_hang(w.rank(), w.size(), o.launcher.timeout_s);
  exec::BenchReport bench;
  bench.backend = L.backend;
  bench.world = world;
  bench.warmup = o.warmup;
  bench.iters = o.iters;
  bench.max_bytes = o.max_bytes;
  bench.scale_factor = factor;
  bench.calibrated = topology.has_value();
  bench.prediction = topology ? "topology " + o.topology : "preset " + prediction_gpu(cands->front().plan, L.backend).name;
  for (const auto& c : *cands) {
    exec::RunOptions ro;
    ro.warmup = o.warmup;
    ro.iters = o.iters;
    ro.max_bytes = o.max_bytes;
    ro.factor = factor;
    ro.traffic = L.traffic.get();
    ro.traffic_unavailable = L.traffic_unavailable;
    ro.wire_unavailable = "not measured by bench (planck exec measures it)";
    ro.watchdog = watchdog.get();
    ro.predict = make_predictor(c.plan, c.mesh, L.backend, topology ? &*topology : nullptr);
    exec::BenchLayout layout;
    layout.name = c.name;
    layout.report.backend = L.backend;
    layout.report.plan = c.name;
    layout.report.prediction_basis = topology ? "topology" : "preset";
    layout.report.gpus_per_node = c.plan.cluster.gpus_per_node;
    if (core::Status st = exec::run_plan(w, c.mesh, c.schedule, ro, layout.report); !st) {
      w.abort("rank " + std::to_string(w.rank()) + ": " + c.name + ": " + st.message());
      exec::shutdown(L);
      return kExitCannotRun;
    }
    bench.layouts.push_back(std::move(layout));
  }
  exec::rank_layouts(bench);
  int code = bench.ok ? kExitOk : kExitFindings;
  if (w.rank() == 0 && !write_document_and_table(o.output, exec::bench_json(bench), exec::bench_table(bench))) {
    code = kExitCannotRun;
  }
  exec::shutdown(L);
  return code;
}

void setup_bench(CLI::App& app, Action& action) {
  auto o = std::make_shared<BenchOptions>();
  app.description(
      "Benchmark layout alternatives for real: run each candidate layout's collective schedule on the same "
      "allocation (mpirun -np N planck bench A.json B.json C.json), one after another with the same warm-up, "
      "iterations and scale factor (the largest call of any layout capped at --max-bytes), each checked as planck "
      "exec checks it (membership, data, per-peer traffic). A layout's step time is the sum over its collectives "
      "of one call's time x calls per step, predicted and measured. Prints the ops paired across layouts by role, "
      "op, phase and description, the layouts ranked by measured step time, and Kendall's tau between the "
      "predicted and the measured order. --from-enumerate FILE --plan TEMPLATE --top K takes the first K layouts "
      "of a planck-enumerate/1 JSON (mesh, parallelism, training fields) over the template plan's model, training "
      "and cluster. All layouts must have one world size.\n"
      "Output: planck-bench/1 JSON to -o and a table on stdout (stderr when the JSON goes to stdout). Predicted "
      "times are the preset's unless --topology gives a calibrated profile. Details: docs/exec.md.\n"
      "Exit 0 when every layout's checks passed, 1 when one failed, 2 on bad input, a missing backend or a "
      "launcher of the wrong size.");
  app.add_option("plans", o->plans, "plan files (planck/1 JSON), one world size");
  app.add_option("--from-enumerate", o->from_enumerate, "planck-enumerate/1 JSON (planck enumerate --format json)");
  app.add_option("--plan", o->templ, "with --from-enumerate: the plan giving model, training and cluster");
  app.add_option("--top", o->top, "with --from-enumerate: the first K layouts")->check(CLI::Range(1, 1000))->default_str("3");
  add_launcher_flags(app, o->launcher);
  app.add_option("--warmup", o->warmup, "untimed calls per collective")->check(CLI::Range(0, 1000))->default_str("2");
  app.add_option("--iters", o->iters, "timed calls per collective")->check(CLI::Range(1, 100000))->default_str("5");
  app.add_option("--max-bytes", o->max_bytes,
                 "largest buffer of any call of any layout (bytes; suffixes KiB, MiB, GiB or K, M, G = powers of 1024)")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40))
      ->default_str("64MiB");
  app.add_option("--topology", o->topology, "planck-topology/1 profile (from planck calibrate) for the predicted times");
  app.add_option("-o,--output", o->output, "planck-bench/1 JSON report ('-' = stdout), written atomically by rank 0")
      ->default_str("-");
  action = [o] { return run_bench(*o); };
}

}  // namespace

PLANCK_COMMAND(bench, "run several layouts' schedules on one allocation and rank them by measured time (under mpirun)",
               setup_bench);

}  // namespace planck::cli
