#include "cli/calibrate_compute.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <tuple>
#include <vector>

#include "cli/command.h"
#include "cli/plan_input.h"
#include "core/mesh/roles.h"
#include "exec/gemm_timer.h"
#include "sim/compute.h"
#include "sim/topology.h"

namespace planck::cli {
namespace {

// Every GEMM shape one layer (dense and MoE) and the head run, forward and both backward
// shapes, rounded to whole elements and without repeats.
std::vector<exec::GemmShape> plan_shapes(const core::Plan& plan, const core::Mesh& mesh) {
  const core::Degrees d = core::degrees(mesh);
  core::Schedule facts;
  const core::Training tr = plan.training.value_or(core::Training{});
  facts.micro_batch = tr.micro_batch;
  facts.seq_len = tr.seq_len.value_or(8192);
  const sim::ComputeShape shape = sim::compute_shape(plan, d, facts);
  const core::ModelSpec& m = *plan.model;
  std::vector<sim::Gemm> gemms = sim::layer_gemms(m, shape, false);
  if (m.is_moe()) {
    const auto moe = sim::layer_gemms(m, shape, true);
    gemms.insert(gemms.end(), moe.begin(), moe.end());
  }
  gemms.push_back({shape.tokens(), static_cast<double>(m.vocab) / static_cast<double>(d.tp),
                   static_cast<double>(m.hidden)});
  std::vector<exec::GemmShape> out;
  auto add = [&](double a, double b, double c) {
    exec::GemmShape s{std::max(1LL, std::llround(a)), std::max(1LL, std::llround(b)), std::max(1LL, std::llround(c))};
    for (const auto& o : out) {
      if (std::tie(o.m, o.n, o.k) == std::tie(s.m, s.n, s.k)) return;
    }
    out.push_back(s);
  };
  for (const auto& g : gemms) {
    add(g.m, g.n, g.k);
    add(g.m, g.k, g.n);
    add(g.k, g.n, g.m);
  }
  return out;
}

}  // namespace

int run_calibrate_compute(const std::string& plan_path, const std::string& output, int warmup, int iters) {
  auto input = load_plan_input(plan_path);
  if (!input) return kExitCannotRun;
  if (!input->plan.model) {
    print_error(plan_path + ": calibrate --compute needs the plan's model (its GEMM shapes)");
    return kExitCannotRun;
  }
  sim::Topology profile;
  if (output != "-" && std::filesystem::exists(output)) {
    auto t = sim::load_topology(output);
    if (!t) {
      print_error("-o " + t.message());
      return kExitCannotRun;
    }
    profile = std::move(*t);
  }
  const auto shapes = plan_shapes(input->plan, input->mesh);
  auto timed = exec::time_gemms(shapes, warmup, iters);
  if (!timed) {
    print_error("calibrate --compute: " + timed.message());
    return kExitCannotRun;
  }
  // One scale for the preset's curve: predicted over measured, summed over the shapes (the
  // long GEMMs weigh most, as they do in a step).
  sim::ComputeProfile c;
  double predicted = 0, measured = 0;
  std::string table = "# planck calibrate --compute " + plan_path + " on " + timed->device +
                      "\n#        m        n        k   measured(us)  preset(us)\n";
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const auto& s = shapes[i];
    const double p = sim::gemm_seconds(input->plan.cluster.gpu, static_cast<double>(s.m), static_cast<double>(s.n),
                                       static_cast<double>(s.k), core::DType::kBf16);
    predicted += p;
    measured += timed->seconds[i];
    c.points.push_back({static_cast<double>(s.m), static_cast<double>(s.n), static_cast<double>(s.k), timed->seconds[i]});
    char line[160];
    std::snprintf(line, sizeof line, "  %8lld %8lld %8lld %14.2f %11.2f\n", s.m, s.n, s.k, timed->seconds[i] * 1e6, p * 1e6);
    table += line;
  }
  c.gemm_scale = measured > 0 ? predicted / measured : 1.0;
  c.gpu = timed->device;
  c.method = "planck calibrate --compute " + plan_path + ": cuBLAS bf16 GEMMs, mean of " + std::to_string(iters) +
             " after " + std::to_string(warmup) + " warm-up; gemm_scale = sum(preset " +
             input->plan.cluster.gpu.name + ") / sum(measured)";
  profile.compute = c;
  return write_document_and_table(output, sim::topology_to_json(profile), table) ? kExitOk : kExitCannotRun;
}

}  // namespace planck::cli
