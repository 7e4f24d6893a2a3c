// The step's pipeline (sim/step_pipeline.h) and overlap rules (sim/overlap.h): torchtitan's stage
// split, the closed form against the timeline on a sweep, and each overlap rule's formula.

#include <doctest/doctest.h>

#include <cmath>
#include <numeric>

#include "sim/overlap.h"
#include "sim/step_pipeline.h"

namespace {

using planck::core::PipelineSchedule;
using planck::sim::StageCosts;

}  // namespace

// Megatron-LM splits evenly when pp x v divides L; otherwise torchtitan's
// generate_llm_fqn_per_model_part: L + 2 units (embedding and head count one layer
// each) spread evenly, the first (L+2) mod S stages one more, first and last give one up.
// Llama-3-405B's 126 layers over 16 stages: 7, 8 x 14, 7, the split the Llama 3 paper describes
// (§3.3.2: one layer fewer on the first and the last stage).
TEST_CASE("step_pipeline_stage_layers_follow_torchtitan") {
  const auto l405 = planck::sim::stage_layers(126, 16);
  REQUIRE(l405.size() == 16);
  CHECK(l405.front() == 7);
  CHECK(l405.back() == 7);
  for (std::size_t i = 1; i + 1 < l405.size(); ++i) CHECK(l405[i] == 8);
  // 27 layers over 4 stages: 29 units, 7 each and one extra on stage 0: 7, 7, 7, 6.
  CHECK(planck::sim::stage_layers(27, 4) == std::vector<std::int64_t>{7, 7, 7, 6});
  // 30 layers over 8 stages: 32 units, 4 each: 3, 4 x 6, 3.
  CHECK(planck::sim::stage_layers(30, 8) == std::vector<std::int64_t>{3, 4, 4, 4, 4, 4, 4, 3});
  // 32 layers over 8 stages divide: Megatron's even split, 4 each.
  CHECK(planck::sim::stage_layers(32, 8) == std::vector<std::int64_t>(8, 4));
  for (std::int64_t layers : {1, 2, 7, 80, 126}) {
    for (std::int64_t stages : {1, 2, 3, 8, 16, 64}) {
      const auto s = planck::sim::stage_layers(layers, stages);
      CAPTURE(layers);
      CAPTURE(stages);
      CHECK(std::accumulate(s.begin(), s.end(), std::int64_t{0}) == layers);
    }
  }
}

// The closed form enumerate uses for m >= 2 pp: within 6% of the timeline over a sweep of
// schedules, (pp, v, m), equal stages and a heavy last stage (the head), with and without p2p.
TEST_CASE("step_pipeline_closed_form_tracks_the_timeline") {
  using PS = PipelineSchedule;
  for (PS s : {PS::kGpipe, PS::k1F1B, PS::kInterleaved1F1B, PS::kInterleavedZb, PS::kZbv, PS::kDualPipeV}) {
    const bool split = s == PS::kInterleavedZb || s == PS::kZbv || s == PS::kDualPipeV;
    for (std::int64_t p : {2, 3, 4, 8, 16}) {
      for (std::int64_t v : {1, 2, 4}) {
        if ((s == PS::kZbv || s == PS::kDualPipeV) && v != 2) continue;
        if ((s == PS::kGpipe || s == PS::k1F1B) && v != 1) continue;
        for (std::int64_t m : {2 * p, 4 * p, 8 * p}) {
          for (int heavy = 0; heavy < 2; ++heavy) {
            for (double p2p : {0.0, 0.05}) {
              StageCosts c;
              c.schedule = s;
              c.pp = p;
              c.virtual_stages = v;
              c.micro_batches = m;
              c.layers = 126;
              c.layer_f = 1;
              c.layer_b = 2;
              c.layer_w = split ? 1 : 0;
              if (heavy) c.last_f = 2.5, c.last_b = 5, c.last_w = split ? 2.5 : 0, c.first_f = 0.1;
              c.p2p_s = p2p;
              const auto in = planck::sim::pipeline_input(c);
              auto tl = planck::sim::simulate_pipeline(in);
              if (!tl) continue;  // a shape the schedule refuses
              const double cf = planck::sim::closed_form_makespan(in);
              CAPTURE(planck::core::to_string(s));
              CAPTURE(p);
              CAPTURE(v);
              CAPTURE(m);
              CAPTURE(heavy);
              CHECK(std::abs(cf - tl->makespan_s) <= 0.06 * tl->makespan_s);
            }
          }
        }
      }
    }
  }
}

// 1F1B with equal stages through pipeline_step: bubble (p-1)/m of the busiest rank's work
// (Narayanan et al. SC'21 §2.2.1), from the timeline and from the closed form alike.
TEST_CASE("step_pipeline_bubble_is_narayanans_for_equal_stages") {
  StageCosts c;
  c.pp = 4;
  c.micro_batches = 8;
  c.layers = 14;  // 16 units over 4 stages (14 does not divide): 3, 4, 4, 3 plus embedding and head
  c.layer_f = 1;
  c.layer_b = 2;
  c.last_f = 1;  // the head costs one layer, as the split assumes
  c.last_b = 2;
  c.first_f = 1;
  c.first_b = 2;
  for (bool timeline : {true, false}) {
    c.micro_batches = timeline ? 8 : 16;
    auto step = planck::sim::pipeline_step(c, timeline);
    REQUIRE(step.is_ok());
    const double m = static_cast<double>(c.micro_batches);
    CHECK(step->busiest_s == doctest::Approx(m * 4 * 3));
    CHECK(step->bubble_fraction == doctest::Approx(3.0 / m));
  }
}

// exposed = first + max(0, comm - first - compute) (docs/simulator.md "Overlap").
TEST_CASE("overlap_rule_formula") {
  CHECK(planck::sim::exposed_after_overlap(10, 1, 4) == doctest::Approx(1 + 5));
  CHECK(planck::sim::exposed_after_overlap(10, 1, 20) == doctest::Approx(1));
  CHECK(planck::sim::exposed_after_overlap(3, 5, 0) == doctest::Approx(3));  // first capped at comm
  CHECK(planck::sim::exposed_after_overlap(0, 0, 4) == doctest::Approx(0));
}

// Each rule on hand-made slots: TP exposed (async: first chunk of tp plus what the GEMM cannot
// cover), ring attention under (cp-1)/cp of the attention, FSDP per-micro-batch gathers under the
// rank's forward with the largest call exposed, p2p averaged per hop, vocab collectives on their
// stage only, optimizer-phase gathers after the step.
TEST_CASE("overlap_rules_place_each_collective") {
  using planck::core::Phase;
  using planck::core::ScheduledCollective;
  auto entry = [](const char* role, Phase ph, std::int64_t calls, std::int64_t mbs,
                  planck::core::StageScope st = planck::core::StageScope::kEvery) {
    ScheduledCollective e;
    e.role = role;
    e.phase = ph;
    e.calls_per_step = calls;
    e.micro_batches = mbs;
    e.stages = st;
    return e;
  };
  // 2 micro-batches, 4 layers on the rank.
  const ScheduledCollective tp = entry("tp", Phase::kForward, 16, 2);
  const ScheduledCollective cp = entry("cp", Phase::kForward, 8, 2);
  const ScheduledCollective ag = entry("fsdp", Phase::kForward, 10, 2);
  const ScheduledCollective rs = entry("fsdp", Phase::kBackward, 5, 1);
  const ScheduledCollective emb = entry("tp", Phase::kForward, 2, 2, planck::core::StageScope::kFirst);
  ScheduledCollective opt = entry("fsdp", Phase::kOptimizer, 1, 1);
  opt.op = planck::core::CollOp::kAllGather;
  ScheduledCollective p2p = entry("pp", Phase::kForward, 2, 2);
  p2p.op = planck::core::CollOp::kSendRecv;
  std::vector<planck::sim::TimedSlot> slots = {{&tp, 8.0}, {&cp, 4.0}, {&ag, 10.0}, {&rs, 5.0},
                                               {&emb, 2.0}, {&opt, 3.0}, {&p2p, 1.0}};
  planck::sim::OverlapCompute oc;
  oc.layers = 4;
  oc.micro_batches = 2;
  oc.layer_f_gemm = 0.5;
  oc.layer_f_attention = 0.4;
  oc.rank_f = 3;
  oc.rank_b = 1;
  oc.tp = 4;
  oc.cp = 2;
  auto ex = planck::sim::apply_overlap(slots, oc);
  // tp: 8 s / (2 mb x 4 layers) = 1 per layer, exposed; cp: 0.5 per layer under 0.4 x 1/2.
  CHECK(ex.layer_f == doctest::Approx(1 + (0.5 - 0.2)));
  CHECK_FALSE(slots[0].overlapped);
  CHECK(slots[1].overlapped);
  // fsdp gathers: 5 s per micro-batch, largest call 1 s, under 3 s of forward: 1 + (5 - 1 - 3).
  CHECK(ex.rank_f == doctest::Approx(2));
  // once-per-step reduce-scatter: 5 s, largest call 1 s, under 1 s of backward: 1 + 3; + optimizer 3.
  CHECK(ex.step_s == doctest::Approx(4 + 3));
  CHECK(ex.first_f == doctest::Approx(1));
  CHECK(ex.last_f == doctest::Approx(0));
  CHECK(ex.p2p_s == doctest::Approx(0.25));  // (1 + 0 backward) / (2 x 2 calls)
  oc.async_tp = true;
  ex = planck::sim::apply_overlap(slots, oc);
  // async TP: 1/4 of the 1 s per layer first, the rest under 0.5 s of GEMM: 0.25 + 0.25.
  CHECK(ex.layer_f == doctest::Approx(0.5 + (0.5 - 0.2)));
  CHECK(slots[0].overlapped);
  // Megatron --overlap-param-gather: the optimizer-phase gather (3 s, one call) runs under the
  // next step's first forward (3 s) but its first bucket is waited for: all 3 s stay exposed.
  oc.overlap_param_gather = true;
  ex = planck::sim::apply_overlap(slots, oc);
  CHECK(slots[5].overlapped);
  CHECK(ex.step_s == doctest::Approx(4 + 3));
  // Split into 6 buckets of 0.5 s: the first exposed, the other 2.5 s under the 3 s forward.
  ScheduledCollective opt6 = opt;
  opt6.calls_per_step = 6;
  slots[5].entry = &opt6;
  ex = planck::sim::apply_overlap(slots, oc);
  CHECK(ex.step_s == doctest::Approx(4 + 0.5));
  // A tp all-gather in the optimizer phase is no parameter gather: it stays after the step.
  ScheduledCollective tp_opt = entry("tp", Phase::kOptimizer, 6, 1);
  tp_opt.op = planck::core::CollOp::kAllGather;
  slots[5].entry = &tp_opt;
  ex = planck::sim::apply_overlap(slots, oc);
  CHECK(ex.step_s == doctest::Approx(4 + 3));
}
