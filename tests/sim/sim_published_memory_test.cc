// Peak memory per GPU against published runs, leave-one-source-out (tests/data/published/
// memory_validation.csv, written by scripts/memory_cases.py from the step-time sources' memory
// columns: torchtitan's benchmark tables, Trainy's H200 report, TorchAO's float8/MX table, nanotron's
// best-config sweep). The one fitted constant is the allocator's fragmentation share
// (sim/memory_reserved.h kFragmentation): for each source it is refitted on the other sources'
// peak-reserved rows and the source is predicted with it, so no published figure is scored by a
// constant its own publication shaped. The test prints every row and each source's error and
// checks the figures docs/simulator.md states ("Memory as the allocator sees it").

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/memory.h"
#include "sim/memory_reserved.h"
#include "sim_published_loso.h"
#include "sim_test_util.h"

namespace {

namespace p = planck::sim::published;
namespace t = planck::sim::test;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// Measured 2026-11-28 (docs/simulator.md "Memory as the allocator sees it"); checked with about a
// point of margin.
constexpr double kStatedReservedRunMean = 0.080, kStatedReservedSourceMean = 0.069, kStatedWorstSource = 0.112;

std::int64_t n(const p::Row& r, const char* key) { return std::stoll(r.at(key)); }

std::string plan_json(const p::Row& r) {
  const std::int64_t gpus = n(r, "gpus"), gpn = std::min<std::int64_t>(n(r, "gpus_per_node"), gpus);
  const nlohmann::json gpu = r.at("gpu");  // a preset (mi300x since 2026-11-27)
  const std::int64_t pp = n(r, "pp"), cp = n(r, "cp"), vpp = n(r, "vpp");
  nlohmann::json par = {{"data_parallel", r.at("data_parallel")},
                        {"sequence_parallel", r.at("sequence_parallel") == "1"},
                        {"async_tp", r.at("async_tp") == "1"}};
  if (cp > 1 && r.at("data_parallel") == "fsdp") par["fsdp_dims"] = {"dp", "cp"};  // torchtitan's dp_shard_cp
  if (pp > 1) {
    par["pipeline_schedule"] = vpp > 1 ? "interleaved_1f1b" : "1f1b";
    par["virtual_stages"] = vpp;
  }
  nlohmann::json j = {
      {"format", "planck/1"},
      {"name", r.at("id")},
      {"cluster", {{"nodes", gpus / gpn}, {"gpus_per_node", gpn}, {"gpu", gpu}}},
      {"mesh", {{"dims", {"pp", "dp", "cp", "tp"}}, {"shape", {pp, n(r, "dp"), cp, n(r, "tp")}}}},
      {"parallelism", par},
      {"model", p::model_json(r)},
      {"training",
       {{"global_batch", n(r, "gbs")},
        {"micro_batch", n(r, "mbs")},
        {"seq_len", n(r, "seq_len")},
        {"activation_checkpointing", r.at("recompute")},
        {"fp8", r.at("fp8")},
        {"stack", r.at("stack")},
        {"cross_entropy", r.at("cross_entropy")}}}};
  return j.dump();
}

struct MemCase {
  std::string id, source, kind;
  double published = 0;  // GiB
  planck::sim::Memory m;
};

const std::vector<MemCase>& cases() {
  static const std::vector<MemCase> all = [] {
    std::vector<MemCase> out;
    for (const p::Row& r : p::read_published("memory_validation.csv")) {
      auto plan = t::plan_from(plan_json(r));
      auto mesh = t::mesh_of(plan);
      auto s = t::lower_ok(plan, mesh);
      out.push_back({r.at("id"), r.at("source"), r.at("memory_kind"), std::stod(r.at("memory_gib")),
                     planck::sim::memory(plan, mesh, s)});
    }
    return out;
  }();
  return all;
}

double reserved_gib(const MemCase& c, double f) { return static_cast<double>(planck::sim::reserved_at(c.m, f)) / kGiB; }

// The fragmentation share minimising the mean over sources of their mean |relative error| on the
// peak-reserved rows, skipping `held_out`.
double fit_fragmentation(const std::string& held_out) {
  double best = 0, best_err = 1e300;
  for (double f = 0; f <= 0.5 + 1e-9; f += 0.001) {
    std::map<std::string, std::pair<double, int>> per;
    for (const MemCase& c : cases()) {
      if (c.kind != "reserved" || c.source == held_out) continue;
      auto& [s, k] = per[c.source];
      s += std::fabs(reserved_gib(c, f) / c.published - 1);
      ++k;
    }
    double err = 0;
    for (const auto& [src, v] : per) err += v.first / v.second / static_cast<double>(per.size());
    if (err < best_err) best_err = err, best = f;
  }
  return best;
}

}  // namespace

TEST_CASE("sim_published_peak_memory") {
  REQUIRE(cases().size() >= 50);
  std::map<std::string, double> fold;
  std::map<std::string, std::pair<double, int>> by_source, alloc_by_source;
  double sum = 0;
  int runs = 0;
  std::printf("%-18s %-56s %9s %9s %9s %8s %8s\n", "source", "case", "published", "allocated", "reserved", "error",
              "alloc err");
  for (const MemCase& c : cases()) {
    if (!fold.count(c.source)) fold[c.source] = fit_fragmentation(c.source);
    const double res = reserved_gib(c, fold[c.source]);
    const double alloc = static_cast<double>(c.m.peak_allocated) / kGiB;
    const double err = res / c.published - 1, aerr = alloc / c.published - 1;
    std::printf("%-18s %-56s %9.2f %9.2f %9.2f %+7.1f%% %+7.1f%%  %s\n", c.source.c_str(), c.id.c_str(), c.published,
                alloc, res, 100 * err, 100 * aerr, c.kind.c_str());
    auto& [s, k] = by_source[c.source];
    s += std::fabs(err);
    ++k;
    auto& [as, ak] = alloc_by_source[c.source];
    as += std::fabs(aerr);
    ++ak;
    if (c.kind == "reserved") sum += std::fabs(err), ++runs;
  }
  double source_mean = 0, worst = 0;
  int sources = 0;
  std::string worst_source;
  for (const auto& [src, v] : by_source) {
    const double e = v.first / v.second, ae = alloc_by_source[src].first / v.second;
    std::printf("held-out source %-18s fragmentation %.3f, mean |error| reserved %5.1f%%, allocated %5.1f%% (%d runs)\n",
                src.c_str(), fold[src], 100 * e, 100 * ae, v.second);
    if (src == "nanotron") continue;  // its figure may be the allocated peak: reported, not scored
    source_mean += e;
    ++sources;
    if (e > worst) worst = e, worst_source = src;
  }
  source_mean /= std::max(1, sources);
  const double run_mean = sum / std::max(1, runs);
  std::printf("fitted on every source: fragmentation %.3f (sim/memory_reserved.h holds %.3f)\n", fit_fragmentation(""),
              planck::sim::kFragmentation);
  std::printf("peak reserved, leave-one-source-out: %d runs, %d sources; mean |error| over runs %.1f%%, over sources "
              "%.1f%%; worst source %s %.1f%%\n",
              runs, sources, 100 * run_mean, 100 * source_mean, worst_source.c_str(), 100 * worst);
  CHECK(sources >= 3);
  CHECK(planck::sim::kFragmentation == doctest::Approx(fit_fragmentation("")).epsilon(0.002));
  CHECK(run_mean <= kStatedReservedRunMean + 0.01);
  CHECK(source_mean <= kStatedReservedSourceMean + 0.01);
  CHECK(worst <= kStatedWorstSource + 0.01);
}
