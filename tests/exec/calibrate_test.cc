// The calibration fit recovers a known line, and the sweep runs on the threads backend.

#include <doctest/doctest.h>

#include "exec/calibrate.h"
#include "exec/threads/world.h"

using planck::core::CollOp;

TEST_CASE("exec_calibrate_fit_recovers_a_known_line") {
  // time = 20 us + 3 us x steps + wire / 2.5 GB/s, steps = 2(n-1) and wire = 2(n-1)/n x S
  // for a ring all-reduce (docs/sources/simulator.md §1.2), sampled at group sizes 2, 4, 8.
  std::vector<planck::exec::CalibrationSample> samples;
  for (std::int64_t n : {2, 4, 8}) {
    for (std::int64_t s = 4096; s <= (16 << 20); s *= 4) {
      const double steps = 2.0 * (n - 1);
      const double wire = 2.0 * (n - 1) / n * s;
      samples.push_back({CollOp::kAllReduce, n, s, 20e-6 + 3e-6 * steps + wire / 2.5e9});
    }
  }
  samples.push_back({CollOp::kAllGather, 8, 4096, 1.0});  // another op: ignored
  auto f = planck::exec::fit_line(samples, CollOp::kAllReduce);
  REQUIRE(f);
  CHECK(f->latency_s == doctest::Approx(20e-6).epsilon(1e-6));
  CHECK(f->step_latency_s == doctest::Approx(3e-6).epsilon(1e-6));
  CHECK(f->bandwidth_gbps == doctest::Approx(2.5).epsilon(1e-6));
  CHECK(f->rms_relative_error < 1e-9);
  CHECK(f->samples == 21);  // 7 sizes (4 KiB .. 16 MiB by 4x) x 3 group sizes
  CHECK(f->predict(CollOp::kAllReduce, 4, 1 << 20) == doctest::Approx(20e-6 + 18e-6 + 1.5 * (1 << 20) / 2.5e9));
}

TEST_CASE("exec_calibrate_fit_never_goes_negative") {
  // Pure bandwidth: a free fit could give a small negative latency; the fit must not.
  std::vector<planck::exec::CalibrationSample> samples;
  for (std::int64_t s = 1024; s <= (1 << 20); s *= 2) samples.push_back({CollOp::kSendRecv, 2, s, s / 1e9 * (s % 3 ? 1.01 : 0.99)});
  auto f = planck::exec::fit_line(samples, CollOp::kSendRecv);
  REQUIRE(f);
  CHECK(f->latency_s >= 0);
  CHECK(f->step_latency_s >= 0);
  CHECK(f->bandwidth_gbps == doctest::Approx(1.0).epsilon(0.02));
}

TEST_CASE("exec_calibrate_group_sizes") {
  CHECK(planck::exec::calibration_group_sizes(8) == std::vector<std::int64_t>{8, 4, 2});
  CHECK(planck::exec::calibration_group_sizes(6) == std::vector<std::int64_t>{6, 3});
  CHECK(planck::exec::calibration_group_sizes(7) == std::vector<std::int64_t>{7});
  CHECK(planck::exec::calibration_group_sizes(2) == std::vector<std::int64_t>{2});
}

TEST_CASE("exec_calibrate_sweep_on_threads") {
  std::vector<std::vector<planck::exec::CalibrationSample>> got(4);
  auto st = planck::exec::threads::run(4, [&](planck::exec::Communicator& c) -> planck::core::Status {
    planck::exec::CalibrateOptions o;
    o.min_bytes = 64;
    o.max_bytes = 4096;
    o.iters = 1;
    o.warmup = 0;
    auto s = planck::exec::calibration_sweep(c, o);
    if (!s) return s.status();
    got[c.rank()] = *s;
    return planck::core::Status::ok();
  });
  for (const auto& s : st) REQUIRE_MESSAGE(s.is_ok(), s.message());
  // Group sizes 4 and 2, six ops, sizes 64, 256, 1024, 4096.
  CHECK(got[0].size() == 2 * 6 * 4);
  CHECK(got[3].size() == got[0].size());
}
