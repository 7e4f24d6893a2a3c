// Step times against published training runs, leave-one-source-out (tests/data/published/:
// validation.csv made by scripts/published_cases.py from runs.csv and runs_new.csv, sources in
// SOURCES.md and SOURCES_new.md). Each source's rows are predicted with GEMM efficiency ceilings
// fitted on the other sources only (sim_published_loso.h), so no row is scored by a curve that saw
// its own publication. The test prints every row and each source's error, and checks the figures
// docs/simulator.md states ("Validation against published runs").

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/uncertainty.h"
#include "sim_published_loso.h"

namespace {

namespace p = planck::sim::published;

// Simulated once for both test cases (25 ceilings x every row).
const std::vector<p::Case>& loso_cases() {
  static const std::vector<p::Case> cases = p::loso_predictions(p::read_cases());
  return cases;
}

}  // namespace

TEST_CASE("sim_published_step_times") {
  const std::vector<p::Case>& cases = loso_cases();
  REQUIRE(cases.size() >= 80);
  std::map<std::string, std::pair<double, int>> by_source, by_stack;
  double sum = 0;
  std::printf("%-18s %-52s %10s %10s %8s\n", "source", "case", "published", "predicted", "error");
  for (const p::Case& c : cases) {
    const double err = c.loso_s / c.published_s - 1;
    std::printf("%-18s %-52s %10.3f %10.3f %+7.1f%%\n", c.source.c_str(), c.id.c_str(), c.published_s, c.loso_s,
                100 * err);
    for (auto* m : {&by_source, &by_stack}) {
      auto& [s, n] = (*m)[m == &by_source ? c.source : c.stack];
      s += std::fabs(err);
      ++n;
    }
    sum += std::fabs(err);
  }
  double worst = 0, source_mean = 0;
  std::string worst_source;
  for (const auto& [k, v] : by_source) {
    const double e = v.first / v.second;
    std::printf("held-out source %-20s mean |error| %5.1f%% (%d runs)\n", k.c_str(), 100 * e, v.second);
    source_mean += e / static_cast<double>(by_source.size());
    if (e > worst) worst = e, worst_source = k;
  }
  for (const auto& [k, v] : by_stack) std::printf("stack %-20s mean |error| %5.1f%% (%d runs)\n", k.c_str(), 100 * v.first / v.second, v.second);
  // The constants fitted on every source (what the presets and sim/stack_cost.cc hold).
  std::map<std::string, std::vector<const p::Case*>> families;
  for (const p::Case& c : cases) families[c.family].push_back(&c);
  for (const auto& [f, v] : families) std::printf("fitted on every source: %-14s %.3f\n", f.c_str(), p::fit_ceiling(v, ""));
  const double run_mean = sum / static_cast<double>(cases.size());
  std::printf("leave-one-source-out: %zu runs, %zu sources; mean |error| over runs %.1f%%, over sources %.1f%%; "
              "worst source %s %.1f%%\n",
              cases.size(), by_source.size(), 100 * run_mean, 100 * source_mean, worst_source.c_str(), 100 * worst);
  // The figures stated in docs/simulator.md, each with a margin of about one point so that a
  // change elsewhere that moves a prediction slightly does not fail here, while a change that
  // makes the held-out sources worse does. They are what planck reaches today, not the issue's
  // targets (10% mean, 20% worst): docs/simulator.md says how far it is from them.
  CHECK(by_source.size() >= 8);
  CHECK(run_mean <= p::kStatedRunMean + 0.01);
  CHECK(source_mean <= p::kStatedSourceMean + 0.01);
  CHECK(worst <= p::kStatedWorstSource + 0.01);
}

// Stated uncertainty (sim/uncertainty.h). The interval of a stack is the 5th-95th percentile band
// of published / predicted over its runs predicted leave-one-source-out, and over the runs no fit
// reads (p::unfitted_cases(): heldout/, the Blackwell MLPerf rows) as the shipped presets predict
// them. Its coverage is measured
// on held-out sources: each source's runs are judged by the band of the *other* sources' runs of
// their stack (of every stack when the others ran it fewer than kMinBandRuns times), so no run is
// judged by a band its own
// publication shaped. The table sim/uncertainty.cc holds must be this test's bands over all
// sources (printed here as C++ to paste).
TEST_CASE("sim_published_step_time_intervals") {
  std::vector<p::Case> cases = loso_cases();
  const std::vector<p::Case> unfitted = p::unfitted_cases();
  cases.insert(cases.end(), unfitted.begin(), unfitted.end());
  std::set<std::string> stacks, sources;
  for (const p::Case& c : cases) {
    if (!c.stack.empty()) stacks.insert(c.stack);
    sources.insert(c.source);
  }
  std::printf("constexpr StepRatioBand kBands[] = {\n");
  std::vector<std::string> names = {"any"};
  names.insert(names.end(), stacks.begin(), stacks.end());
  for (const std::string& s : names) {
    p::Band b = p::ratio_band(cases, s);
    const bool own = s == "any" || b.runs >= p::kMinBandRuns;
    if (own) std::printf("    {\"%s\", %.3f, %.3f, %d, %d},\n", s.c_str(), b.low, b.high, b.runs, b.sources);
    if (!own) b = p::ratio_band(cases, "any");
    planck::core::Training tr;
    if (s != "any") {
      tr.stack = *planck::core::parse_stack(s);
      tr.stack_given = true;
    }
    const planck::sim::StepRatioBand& held = planck::sim::step_ratio_band(tr);
    CAPTURE(s);
    CHECK(std::string(held.stack) == (own ? s : "any"));
    CHECK(held.low == doctest::Approx(b.low).epsilon(0.002));
    CHECK(held.high == doctest::Approx(b.high).epsilon(0.002));
  }
  std::printf("};\n");
  int covered = 0;
  double source_cover = 0;
  for (const std::string& src : sources) {
    int in = 0, n = 0;
    for (const p::Case& c : cases) {
      if (c.source != src) continue;
      p::Band b = p::ratio_band(cases, c.stack, src);
      if (b.runs < p::kMinBandRuns) b = p::ratio_band(cases, "any", src);
      const double ratio = c.published_s / c.loso_s;
      in += ratio >= b.low && ratio <= b.high;
      ++n;
    }
    std::printf("interval coverage, held-out source %-20s %3d of %3d\n", src.c_str(), in, n);
    covered += in;
    source_cover += static_cast<double>(in) / n / static_cast<double>(sources.size());
  }
  const double coverage = static_cast<double>(covered) / static_cast<double>(cases.size());
  std::printf("interval coverage on held-out sources: %.1f%% of runs, %.1f%% mean over sources\n", 100 * coverage,
              100 * source_cover);
  CHECK(coverage >= p::kStatedCoverage - 0.01);
}

TEST_CASE("sim_published_blackwell_dense_steps_out_of_sample") {
  // Blackwell's dense curve is H100's fit scaled by the MAMF ratio (core/plan/presets.cc), fitted
  // on no Blackwell run: MLPerf Training v5.1's measured steps on HGX / DGX B200 and B300 (Llama
  // 3.1 8B and 405B, NeMo's FP8 recipe; validation_blackwell.csv, made by
  // scripts/published_cases.py) are each predicted with the shipped presets. Measured 2026-11-27:
  // 13 runs of 4 submitters (Dell, Oracle, University of Florida, Verda), mean |error| 10.5%, all
  // fast (6.7%, signed -5.5%, while Megatron's attention was priced as FlashAttention-2 rather
  // than the cuDNN kernel Transformer Engine runs: the slower attention hid a fast Blackwell GEMM
  // curve; docs/simulator.md "Validation against published runs"); held there, with a point of
  // margin, so a change that loses accuracy fails.
  const std::vector<p::Row> rows = p::read_published("validation_blackwell.csv");
  REQUIRE(rows.size() >= 10);
  double abs_sum = 0, signed_sum = 0;
  for (const p::Row& r : rows) {
    const double published = std::stod(r.at("step_s")), predicted = p::shipped_step(r);
    const double err = (predicted - published) / published;
    std::printf("%-72s %-5s %9.4f %9.4f %+6.1f%%\n", r.at("id").c_str(), r.at("gpu").c_str(), published, predicted,
                100 * err);
    abs_sum += std::fabs(err);
    signed_sum += err;
  }
  const double n = static_cast<double>(rows.size());
  std::printf("Blackwell dense, out of sample: %zu runs, mean |error| %.1f%%, mean signed %+.1f%%\n", rows.size(),
              100 * abs_sum / n, 100 * signed_sum / n);
  CHECK(abs_sum / n <= 0.105 + 0.01);
}
