// Pipeline timelines against the closed forms published for each schedule, on a sweep of awkward
// (pp, virtual_stages, micro-batches), and one unequal-stage 1F1B timeline worked out by hand.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "sim/pipeline.h"

namespace {

using planck::core::PipelineSchedule;
using planck::sim::PipelineInput;
using planck::sim::PipelineTimeline;
using planck::sim::StageTimes;

PipelineInput equal(PipelineSchedule s, std::int64_t p, std::int64_t v, std::int64_t m, double f, double b,
                    double w = 0) {
  PipelineInput in;
  in.schedule = s;
  in.pp = p;
  in.virtual_stages = v;
  in.micro_batches = m;
  in.stages.assign(static_cast<std::size_t>(p * v), StageTimes{f, b, w, 1});
  return in;
}

PipelineTimeline run(const PipelineInput& in) {
  auto tl = planck::sim::simulate_pipeline(in);
  REQUIRE_MESSAGE(tl.is_ok(), tl.status().message());
  return *tl;
}

}  // namespace

// GPipe and 1F1B with equal stages: makespan (m + p - 1)(tf + tb); the bubble is (p-1)(tf+tb)
// against m(tf+tb) of work, i.e. (p-1)/(m+p-1) of the makespan on every rank (Narayanan et al.,
// "Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM", SC'21,
// §2.2.1). 1F1B keeps at most p - r micro-batches in flight on rank r (warm-up p-r-1, plus one),
// GPipe all m.
TEST_CASE("pipeline_gpipe_and_1f1b_equal_stages_match_narayanan") {
  const double f = 1.0, b = 2.0;
  for (auto sched : {PipelineSchedule::kGpipe, PipelineSchedule::k1F1B}) {
    for (std::int64_t p : {1, 2, 3, 4, 7, 8}) {
      for (std::int64_t m : {1, 2, 3, 5, 8, 16}) {
        INFO("p=" << p << " m=" << m << " schedule=" << planck::core::to_string(sched));
        const auto tl = run(equal(sched, p, 1, m, f, b));
        const double pm = static_cast<double>(p), mm = static_cast<double>(m);
        CHECK(tl.makespan_s == doctest::Approx((mm + pm - 1) * (f + b)));
        CHECK(tl.bubble_fraction == doctest::Approx((pm - 1) / (mm + pm - 1)));
        CHECK(tl.makespan_s == doctest::Approx(planck::sim::equal_stage_makespan(sched, p, 1, m, f, b, 0)));
        for (std::int64_t r = 0; r < p; ++r) {
          const std::int64_t want = sched == PipelineSchedule::kGpipe ? m : std::min(m, p - r);
          CHECK(tl.peak_in_flight[r] == want);
        }
      }
    }
  }
}

// Interleaved 1F1B with v chunks per rank, chunk times f and b (a rank's full slice takes
// tf = v f): bubble (1/v)(p-1)(tf+tb) = (p-1)(f+b), so makespan m v (f+b) + (p-1)(f+b)
// (Narayanan et al. SC'21 §2.2.2). Megatron requires m to be a multiple of p for this order.
TEST_CASE("pipeline_interleaved_1f1b_equal_stages_match_narayanan") {
  const double f = 1.0, b = 2.0;
  for (std::int64_t p : {2, 3, 4, 8}) {
    for (std::int64_t v : {2, 3, 4}) {
      for (std::int64_t k : {1, 2, 3}) {
        const std::int64_t m = k * p;
        INFO("p=" << p << " v=" << v << " m=" << m);
        const auto tl = run(equal(PipelineSchedule::kInterleaved1F1B, p, v, m, f, b));
        const double want = static_cast<double>(m * v) * (f + b) + static_cast<double>(p - 1) * (f + b);
        CHECK(tl.makespan_s == doctest::Approx(want));
        CHECK(tl.makespan_s ==
              doctest::Approx(planck::sim::equal_stage_makespan(PipelineSchedule::kInterleaved1F1B, p, v, m, f, b, 0)));
        // Rank r warms up (v-1) p + 2(p-1-r) chunk forwards, then holds one more (Megatron
        // get_num_warmup_microbatches; torch _get_warmup_ops), capped at all m v.
        for (std::int64_t r = 0; r < p; ++r) {
          CHECK(tl.peak_in_flight[r] == std::min(m * v, (v - 1) * p + 2 * (p - 1 - r) + 1));
        }
      }
    }
  }
}

// ZB-H1 (torch ScheduleInterleavedZeroBubble with one stage per rank): with the backward split
// into B (input gradient) and W (weight gradient), the bubble shrinks to (p-1)(T_F + T_B - T_W)
// (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, §3.1, ZB-H1).
TEST_CASE("pipeline_zb_h1_matches_qi_et_al") {
  for (std::int64_t p : {2, 3, 4, 8}) {
    for (std::int64_t m : {p, 2 * p, 3 * p}) {
      INFO("p=" << p << " m=" << m);
      const double f = 1.0, b = 1.0, w = 1.0;
      const auto tl = run(equal(PipelineSchedule::kInterleavedZb, p, 1, m, f, b, w));
      const double want = static_cast<double>(m) * (f + b + w) + static_cast<double>(p - 1) * (f + b - w);
      CHECK(tl.makespan_s == doctest::Approx(want));
      CHECK(tl.makespan_s ==
            doctest::Approx(planck::sim::equal_stage_makespan(PipelineSchedule::kInterleavedZb, p, 1, m, f, b, w)));
    }
  }
}

// 1F1B, p = 2, m = 2, stage 0 (embedding) F 1 B 2, stage 1 (loss) F 2 B 4, p2p 0 then 0.5.
// By hand, p2p 0: rank 0 F0 [0,1] F1 [1,2]; rank 1 F0 [1,3] B0 [3,7] F1 [7,9] B1 [9,13];
// rank 0 B0 [7,9] B1 [13,15]. Makespan 15, busy 6 and 12, idle 9/15 and 3/15, mean 0.4.
// p2p 0.5: rank 1 F0 [1.5,3.5] B0 [3.5,7.5] F1 [7.5,9.5] B1 [9.5,13.5]; rank 0 B0 [8,10],
// B1 [14,16]: makespan 16.
TEST_CASE("pipeline_1f1b_unequal_stages_by_hand") {
  PipelineInput in;
  in.schedule = PipelineSchedule::k1F1B;
  in.pp = 2;
  in.micro_batches = 2;
  in.stages = {StageTimes{1, 2, 0, 1}, StageTimes{2, 4, 0, 3}};
  auto tl = run(in);
  CHECK(tl.makespan_s == doctest::Approx(15));
  CHECK(tl.busy_s[0] == doctest::Approx(6));
  CHECK(tl.busy_s[1] == doctest::Approx(12));
  CHECK(tl.bubble_fraction == doctest::Approx(0.4));
  CHECK(tl.peak_in_flight[0] == 2);
  CHECK(tl.peak_in_flight[1] == 1);
  CHECK(tl.peak_activation[1] == doctest::Approx(3));
  in.p2p_s = 0.5;
  CHECK(run(in).makespan_s == doctest::Approx(16));
}

// Shape errors name the values and the fix.
TEST_CASE("pipeline_rejects_bad_shapes_by_name") {
  auto msg = [](const PipelineInput& in) {
    auto tl = planck::sim::simulate_pipeline(in);
    REQUIRE_FALSE(tl.is_ok());
    return tl.status().message();
  };
  auto wrong_count = equal(PipelineSchedule::k1F1B, 4, 1, 8, 1, 2);
  wrong_count.stages.pop_back();
  CHECK(msg(wrong_count).find("3 stage times given for pp 4 x virtual_stages 1 = 4") != std::string::npos);
  CHECK(msg(equal(PipelineSchedule::kZbv, 4, 3, 8, 1, 1, 1)).find("exactly 2 virtual stages per rank, not 3") !=
        std::string::npos);
  CHECK(msg(equal(PipelineSchedule::kDualPipeV, 4, 2, 7, 1, 1, 1)).find("micro_batches >= 2 x pp = 8, got 7") !=
        std::string::npos);
  CHECK(msg(equal(PipelineSchedule::kInterleaved1F1B, 4, 2, 9, 1, 2)).find("multiple of the number of rounds") !=
        std::string::npos);
  CHECK(msg(equal(PipelineSchedule::k1F1B, 4, 2, 8, 1, 2)).find("use interleaved_1f1b") != std::string::npos);
}

// ZBV and DualPipeV place stage r and 2p-1-r on rank r (the "V"). Every rank runs its two
// stages' m forwards, input and weight gradients: busy 2 m (f+b+w) on each rank. ZBV keeps p
// micro-batches of a full rank slice in flight, like 1F1B's first stage (Qi et al. ICLR'24 §6),
// i.e. 2p half-slice chunks; both stay below interleaved 1F1B with two chunks, whose bubble is
// (p-1)(f+b+w) per the closed form above.
TEST_CASE("pipeline_v_schedules_busy_memory_and_bound") {
  const double f = 1.0, b = 1.0, w = 1.0;
  for (std::int64_t p : {2, 3, 4, 8}) {
    for (std::int64_t m : {2 * p, 2 * p + 3, 4 * p}) {
      INFO("p=" << p << " m=" << m);
      const double interleaved =
          static_cast<double>(2 * m) * (f + b + w) + static_cast<double>(p - 1) * (f + b + w);
      for (auto sched : {PipelineSchedule::kZbv, PipelineSchedule::kDualPipeV}) {
        const auto tl = run(equal(sched, p, 2, m, f, b, w));
        for (std::int64_t r = 0; r < p; ++r) CHECK(tl.busy_s[r] == doctest::Approx(2.0 * m * (f + b + w)));
        CHECK(tl.makespan_s < interleaved);
        if (sched == PipelineSchedule::kZbv) {
          for (std::int64_t r = 0; r < p; ++r) CHECK(tl.peak_in_flight[r] == 2 * p);
        }
      }
    }
  }
}

// activation_peaks scans long pipelines (m > 3 pp, a multiple of pp) as 3 pp micro-batches. Its
// peaks must equal what each rank holds over the whole timeline, counted here from the actions
// the timeline ran (an F adds its stage's units; the B frees them, the W when W is split off),
// with unequal stages, for every schedule on a sweep of (pp, v, m).
TEST_CASE("pipeline_activation_peaks_match_the_full_timeline") {
  struct Case {
    PipelineSchedule s;
    std::int64_t v;
    bool split;
  };
  const Case cases[] = {{PipelineSchedule::k1F1B, 1, false},
                        {PipelineSchedule::kGpipe, 1, false},
                        {PipelineSchedule::kInterleaved1F1B, 2, false},
                        {PipelineSchedule::kInterleaved1F1B, 3, false},
                        {PipelineSchedule::kInterleavedZb, 1, true},
                        {PipelineSchedule::kInterleavedZb, 2, true},
                        {PipelineSchedule::kZbv, 2, true},
                        {PipelineSchedule::kDualPipeV, 2, true}};
  for (const Case& c : cases) {
    for (std::int64_t p : {2, 3, 4}) {
      for (std::int64_t k : {2, 4, 5, 7}) {
        const std::int64_t m = k * p;
        CAPTURE(planck::core::to_string(c.s));
        CAPTURE(c.v);
        CAPTURE(p);
        CAPTURE(m);
        PipelineInput in = equal(c.s, p, c.v, m, 1.0, 2.0, c.split ? 1.0 : 0.0);
        for (std::size_t i = 0; i < in.stages.size(); ++i)
          in.stages[i].activation_units = 1.0 + static_cast<double>(i % 3);
        const PipelineTimeline tl = run(in);
        std::vector<double> held(static_cast<std::size_t>(p), 0.0), peak(static_cast<std::size_t>(p), 0.0);
        for (const auto& a : tl.actions) {
          const double u = in.stages[static_cast<std::size_t>(a.stage)].activation_units;
          const auto r = static_cast<std::size_t>(a.rank);
          if (a.op == 'F')
            peak[r] = std::max(peak[r], held[r] += u);
          else if ((a.op == 'W') == c.split)
            held[r] -= u;
        }
        auto peaks = planck::sim::activation_peaks(in);
        REQUIRE(peaks.is_ok());
        for (std::size_t r = 0; r < peak.size(); ++r) {
          CAPTURE(r);
          CHECK(peaks->units[r] == doctest::Approx(peak[r]));
          CHECK(held[r] == doctest::Approx(0));  // everything freed by the end
        }
      }
    }
  }
}

// makespan_only (what enumerate and simulate's step price with) reuses the orders and the
// timelines of inputs seen before: every answer equals the full timeline's for the same input,
// including inputs that differ from a cached one only in one stage's times or the p2p time,
// and the by-hand 1F1B case above (15 s; 16 s with a 0.5 s hop) in between.
TEST_CASE("pipeline_makespan_only_equals_the_full_timeline_across_repeated_inputs") {
  std::vector<PipelineInput> inputs;
  for (auto s : {PipelineSchedule::k1F1B, PipelineSchedule::kInterleaved1F1B, PipelineSchedule::kInterleavedZb,
                 PipelineSchedule::kZbv}) {
    const std::int64_t v = s == PipelineSchedule::kZbv ? 2 : (s == PipelineSchedule::k1F1B ? 1 : 3);
    for (std::int64_t m : {4, 8}) inputs.push_back(equal(s, 4, v, m, 1.0, 2.0, s == PipelineSchedule::k1F1B ? 0 : 0.5));
  }
  PipelineInput hand;
  hand.schedule = PipelineSchedule::k1F1B;
  hand.pp = 2;
  hand.micro_batches = 2;
  hand.stages = {StageTimes{1, 2, 0, 1}, StageTimes{2, 4, 0, 3}};
  inputs.push_back(hand);
  hand.p2p_s = 0.5;
  inputs.push_back(hand);
  PipelineInput slower_stage = inputs.front();
  slower_stage.stages[2].forward_s = 3.0;
  inputs.push_back(slower_stage);
  for (int pass = 0; pass < 2; ++pass) {  // the second pass answers from the caches
    for (const PipelineInput& in : inputs) {
      PipelineInput quick = in;
      quick.makespan_only = true;
      const PipelineTimeline full = run(in), fast = run(quick);
      CAPTURE(planck::core::to_string(in.schedule));
      CAPTURE(in.micro_batches);
      CHECK(fast.makespan_s == doctest::Approx(full.makespan_s));
      CHECK(fast.bubble_fraction == doctest::Approx(full.bubble_fraction));
      CHECK(fast.actions.empty());
      CHECK_FALSE(full.actions.empty());
    }
  }
  PipelineInput quick = inputs[inputs.size() - 3];
  quick.makespan_only = true;
  CHECK(run(quick).makespan_s == doctest::Approx(15));
  quick.p2p_s = 0.5;
  CHECK(run(quick).makespan_s == doctest::Approx(16));
  // A stage slowed from 1 s to 3 s forward is priced slower than the equal-stage pipeline.
  PipelineInput base = inputs.front(), slow = inputs.back();
  base.makespan_only = slow.makespan_only = true;
  CHECK(run(slow).makespan_s > run(base).makespan_s);
}
