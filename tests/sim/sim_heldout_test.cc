// Published runs planck's constants never saw (tests/data/published/heldout, audit 4): five
// sources outside the fitted sets, each run a plan written from its source's stated layout and a
// step time the source measured. No constant is fitted or tuned on them; the test says the error,
// per source and over the runs, and how many measurements fall inside the interval simulate
// states. That interval's bands read these runs' residuals as they stand (sim/uncertainty.h: an
// unfitted run's error is out of sample already); sim_published_step_time_intervals judges each
// source by the band of the others alone.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "sim/simulate.h"
#include "sim_published_loso.h"
#include "sim_test_util.h"

namespace t = planck::sim::test;

TEST_CASE("sim_heldout_published_runs_out_of_sample") {
  const auto rows = t::read_csv("published/heldout/runs.csv");
  REQUIRE(rows.size() >= 25);
  std::map<std::string, std::pair<double, int>> by_source;
  double total = 0, signed_total = 0;
  int inside = 0, fast = 0;
  std::printf("%-52s %9s %9s %8s %s\n", "run", "published", "predicted", "error", "in interval");
  for (const auto& r : rows) {
    const planck::sim::published::HeldoutRun run = planck::sim::published::simulate_heldout(r.at("id"));
    const planck::sim::SimResult& sim = run.sim;
    const double measured = std::stod(r.at("measured_step_s")), predicted = sim.step.step_time_s;
    const double err = (predicted - measured) / measured;
    const bool in = measured >= sim.step.step_time_low_s && measured <= sim.step.step_time_high_s;
    std::printf("%-52s %9.3f %9.3f %+7.1f%% %s\n", r.at("id").substr(0, 52).c_str(), measured, predicted, 100 * err,
                in ? "yes" : "no");
    auto& acc = by_source[r.at("source")];
    acc.first += std::fabs(err);
    ++acc.second;
    total += std::fabs(err);
    signed_total += err;
    inside += in;
    fast += err < 0;
  }
  const double n = static_cast<double>(rows.size());
  double over_sources = 0;
  for (const auto& [source, acc] : by_source) {
    std::printf("%-28s %2d runs: mean |error| %5.1f%%\n", source.c_str(), acc.second, 100 * acc.first / acc.second);
    over_sources += acc.first / acc.second;
  }
  over_sources /= static_cast<double>(by_source.size());
  std::printf("held out: mean |error| %.1f%% over %zu runs (signed %+.1f%%, %d too fast), %.1f%% over %zu sources; "
              "%d of %zu inside the stated interval\n",
              100 * total / n, rows.size(), 100 * signed_total / n, fast, 100 * over_sources, by_source.size(), inside,
              rows.size());
  CHECK(by_source.size() >= 5);
  // Measured when this set was added (docs/simulator.md "Out of sample"): 10.3% over the 37 runs,
  // 14.6% over the 5 sources, 30 too fast; 22 of 37 inside the interval while its bands read the
  // fitted sets alone, 31 of 37 since they read these runs too (28 of 37 when each source is
  // judged by the others' band). Held so a change that loses accuracy on runs no fit saw fails
  // here; a change that gains is welcome to lower them.
  CHECK(total / n <= 0.105);
  CHECK(over_sources <= 0.150);
  CHECK(inside >= 31);
}
