// planck bench's ranking: Kendall's tau-a computed by hand (Kendall 1938: concordant minus
// discordant pairs over n(n-1)/2), the measured order, and step times summed from a report.

#include <doctest/doctest.h>

#include "exec/bench.h"

using planck::exec::kendall_tau;
using planck::exec::order_of;

TEST_CASE("bench_kendall_tau_by_hand") {
  CHECK(*kendall_tau({1, 2, 3}, {10, 20, 30}) == doctest::Approx(1.0));
  CHECK(*kendall_tau({1, 2, 3}, {30, 20, 10}) == doctest::Approx(-1.0));
  // Pairs (1,2) (1,3) concordant, (2,3) discordant: (2 - 1) / 3.
  CHECK(*kendall_tau({1, 2, 3}, {1, 3, 2}) == doctest::Approx(1.0 / 3));
  // 4 items, one swap of neighbours: 5 concordant, 1 discordant of 6.
  CHECK(*kendall_tau({1, 2, 3, 4}, {1, 2, 4, 3}) == doctest::Approx(4.0 / 6));
  // A tie in one list counts as neither: (1,2) tied, (1,3) and (2,3) concordant: 2 / 3.
  CHECK(*kendall_tau({1, 1, 2}, {1, 2, 3}) == doctest::Approx(2.0 / 3));
  CHECK_FALSE(kendall_tau({1}, {1}).has_value());
}

TEST_CASE("bench_order_is_fastest_first_and_stable") {
  CHECK(order_of({0.3, 0.1, 0.2}) == std::vector<std::size_t>{1, 2, 0});
  CHECK(order_of({0.2, 0.1, 0.2}) == std::vector<std::size_t>{1, 0, 2});
}

TEST_CASE("bench_step_time_is_calls_times_one_call") {
  planck::exec::ExecReport r;
  planck::exec::OpResult a, b;
  a.calls_per_step = 3;
  a.predicted_time_s = 0.5;
  a.measured_time_s.median = 1.0;
  b.calls_per_step = 2;
  b.predicted_time_s = 0.25;
  b.measured_time_s.median = 4.0;
  r.ops = {a, b};
  CHECK(*planck::exec::step_seconds(r, true) == doctest::Approx(3 * 0.5 + 2 * 0.25));
  CHECK(*planck::exec::step_seconds(r, false) == doctest::Approx(3 * 1.0 + 2 * 4.0));
  r.ops[1].predicted_time_s.reset();
  CHECK_FALSE(planck::exec::step_seconds(r, true).has_value());
}
