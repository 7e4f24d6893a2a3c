// Expert-parallel all-to-all overlap (docs/simulator.md "Expert-parallel overlap"): the share of
// paired chunk passes from each schedule's own step counts, worked out here by hand, and the
// exposed-time rule through simulate.
//   - Megatron-LM@d98e8a64 megatron/core/pipeline_parallel/combined_1f1b.py: without a pipeline
//     the first forward and the last backward run alone, micro-batches 2..m pair;
//   - schedules.py get_pp_rank_microbatches: interleaved warm-up (pp - rank - 1) x 2 +
//     (v - 1) x microbatch_group_size_per_vp_stage (default pp), + 1 with the overlap;
//   - deepseek-ai/DualPipe dualpipev.py step(): step 4 runs num_chunks - 2 num_ranks + rank + 1
//     iterations of two _forward_backward_chunk pairs, step 5 num_ranks - rank - 1 of one.

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/ep_overlap.h"
#include "sim/moe_band.h"
#include "sim/simulate.h"
#include "tests/sim/sim_test_util.h"

namespace t = planck::sim::test;
using planck::core::PipelineSchedule;
using planck::sim::ep_overlap_exposed_s;
using planck::sim::ep_overlap_share;

namespace {

planck::core::Plan with(PipelineSchedule s, std::optional<bool> overlap,
                        planck::core::Checkpointing ckpt = planck::core::Checkpointing::kNone) {
  planck::core::Plan p;
  p.parallelism.pipeline_schedule = s;
  p.parallelism.ep_overlap = overlap;
  p.training = planck::core::Training{};
  p.training->activation_checkpointing = ckpt;
  return p;
}

}  // namespace

TEST_CASE("ep_overlap_share_follows_each_schedules_steps") {
  // pp = 1, 8 micro-batches, asked for: 7 of 8 run paired.
  CHECK(*ep_overlap_share(with(PipelineSchedule::k1F1B, true), 1, 1, 8).share == doctest::Approx(7.0 / 8));
  // interleaved, pp 4, v 2, m 16: warm-up 3 x 2 + 1 x 4 + 1 = 11 of 32 chunk passes.
  CHECK(*ep_overlap_share(with(PipelineSchedule::kInterleaved1F1B, true), 4, 2, 16).share ==
        doctest::Approx((32.0 - 11) / 32));
  // dualpipev needs no flag; pp 16, m 120 (DeepSeek-V3: 15360 / 128): 2 x (120 - 32 + 1) + 15 = 193
  // pairs of 240 forward chunk passes.
  CHECK(*ep_overlap_share(with(PipelineSchedule::kDualPipeV, std::nullopt), 16, 2, 120).share ==
        doctest::Approx(193.0 / 240));
  // dualpipev, pp 4, m 8 (the fewest DualPipeV accepts): 2 x 1 + 3 = 5 pairs of 16.
  CHECK(*ep_overlap_share(with(PipelineSchedule::kDualPipeV, std::nullopt), 4, 2, 8).share ==
        doctest::Approx(5.0 / 16));
  // More warm-up than chunks: nothing pairs.
  CHECK(*ep_overlap_share(with(PipelineSchedule::kInterleaved1F1B, true), 8, 2, 4).share == 0.0);

  // Not asked: Megatron's flag is opt-in, and dualpipev can be turned off.
  for (auto s : {PipelineSchedule::k1F1B, PipelineSchedule::kInterleaved1F1B}) {
    const auto p = ep_overlap_share(with(s, std::nullopt), 4, 2, 16);
    CHECK_FALSE(p.share.has_value());
    CHECK(p.why_not.empty());
  }
  CHECK_FALSE(ep_overlap_share(with(PipelineSchedule::kDualPipeV, false), 4, 2, 16).share.has_value());
  // Asked, but the schedule never pairs a forward with another micro-batch's backward, Megatron's
  // refusal of an interleaved schedule without virtual stages, and of full recomputation.
  for (auto s : {PipelineSchedule::k1F1B, PipelineSchedule::kGpipe, PipelineSchedule::kZbv}) {
    const auto p = ep_overlap_share(with(s, true), 4, 1, 16);
    CHECK_FALSE(p.share.has_value());
    CHECK(p.why_not.find(planck::core::to_string(s)) != std::string::npos);
  }
  CHECK_FALSE(ep_overlap_share(with(PipelineSchedule::kInterleaved1F1B, true), 4, 1, 16).share.has_value());
  const auto full = ep_overlap_share(with(PipelineSchedule::kDualPipeV, std::nullopt, planck::core::Checkpointing::kFull),
                                     4, 2, 16);
  CHECK_FALSE(full.share.has_value());
  CHECK(full.why_not.find("full activation checkpointing") != std::string::npos);
}

TEST_CASE("ep_overlap_exposed_time_rule") {
  // Half the passes paired; A = 3 + 5 = 8 s against C = 2 + 4 = 6 s: 0.5 x 8 + 0.5 x (8 - 6) = 5.
  CHECK(ep_overlap_exposed_s(0.5, 3, 5, 2, 4) == doctest::Approx(5.0));
  // Compute covers the communication: only the unpaired share is exposed.
  CHECK(ep_overlap_exposed_s(0.75, 1, 1, 10, 20) == doctest::Approx(0.25 * 2));
  // Both directions share the links: (3 + 3) - (1 + 4) = 1 s of a fully paired pass.
  CHECK(ep_overlap_exposed_s(1.0, 3, 3, 1, 4) == doctest::Approx(1.0));
  CHECK(ep_overlap_exposed_s(0.0, 3, 3, 1, 4) == doctest::Approx(6.0));
}

namespace {

std::string overlap_plan(const std::string& dims, const std::string& shape, const std::string& parallelism,
                         const std::string& ckpt = "none") {
  return R"({"format": "planck/1", "cluster": {"nodes": 2, "gpus_per_node": 8, "gpu": "h800"},
    "mesh": {"dims": [)" + dims + R"(], "shape": [)" + shape + R"(]},
    "parallelism": {"data_parallel": "zero1")" + parallelism + R"(},
    "model": {"layers": 8, "hidden": 1024, "ffn_hidden": 4096, "heads": 8, "kv_heads": 8, "vocab": 1000,
              "experts": 16, "experts_per_token": 4, "moe_ffn_hidden": 512},
    "training": {"global_batch": 256, "seq_len": 1024, "activation_checkpointing": ")" + ckpt + R"("}})";
}

struct Run {
  double a2a = 0, step = 0, layers_f = 0, layers_b = 0;
  std::int64_t m = 0;
  bool overlapped = false;
  std::vector<std::string> notes;
};

Run run(const std::string& json) {
  auto p = t::plan_from(json);
  auto r = planck::sim::simulate(p, t::mesh_of(p));
  REQUIRE(r.is_ok());
  Run out;
  for (const auto& c : r->collectives) {
    if (c.entry.role != "ep" || c.entry.op != planck::core::CollOp::kAllToAll) continue;
    out.a2a += c.time_s;
    out.overlapped = out.overlapped || c.overlapped;
  }
  out.step = r->step.step_time_s;
  out.m = r->schedule.micro_batches;
  out.layers_f = r->compute.layers_forward_s;
  out.layers_b = r->compute.layers_backward_s;
  out.notes = r->notes;
  return out;
}

bool mentions(const std::vector<std::string>& notes, const std::string& text) {
  return std::any_of(notes.begin(), notes.end(), [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

}  // namespace

TEST_CASE("ep_overlap_in_simulate_without_a_pipeline") {
  // Megatron's combined 1F1B, pp = 1: 256 / (2 x 8) = 16 micro-batches, s = 15 / 16. Without a
  // pipeline the step is m x (layers + exposed), so turning the overlap on saves
  // A - [(1 - s) A + s max(0, A - m (C_f + C_b))], A the step's all-to-all seconds.
  const std::string dims = R"("dp_shard", "ep")";
  const Run off = run(overlap_plan(dims, "2, 8", ""));
  const Run on = run(overlap_plan(dims, "2, 8", R"(, "ep_overlap": true)"));
  REQUIRE(off.a2a > 0);
  REQUIRE(on.m == 16);
  CHECK_FALSE(off.overlapped);
  CHECK(on.overlapped);
  // The paired share times the overlap efficiency fitted to published MoE runs (sim/moe_band.h).
  const double s = 15.0 / 16 * planck::sim::kMoeEpOverlapEfficiency;
  const double compute = static_cast<double>(on.m) * (on.layers_f + on.layers_b);
  const double exposed = (1 - s) * on.a2a + s * std::max(0.0, on.a2a - compute);
  CHECK(off.step - on.step == doctest::Approx(on.a2a - exposed).epsilon(1e-9));
  CHECK(mentions(on.notes, "94% of chunk passes run paired (1f1b"));
}

TEST_CASE("ep_overlap_in_simulate_with_pipelines") {
  const std::string dims = R"("pp", "dp_shard", "ep")";
  // dualpipev has it by default (m = 256 / 8 = 32, s = (64 - 6 + 1) / 64 = 92%); false turns it off.
  const Run dual = run(overlap_plan(dims, "2, 1, 8", R"(, "pipeline_schedule": "dualpipev")"));
  const Run dual_off = run(overlap_plan(dims, "2, 1, 8", R"(, "pipeline_schedule": "dualpipev", "ep_overlap": false)"));
  CHECK(dual.overlapped);
  CHECK_FALSE(dual_off.overlapped);
  CHECK(dual.step < dual_off.step);
  CHECK(mentions(dual.notes, "92% of chunk passes run paired (dualpipev"));
  // Full recomputation: Megatron refuses the overlap; the step is the one without it.
  const Run full = run(overlap_plan(dims, "2, 1, 8", R"(, "pipeline_schedule": "dualpipev")", "full"));
  const Run full_off =
      run(overlap_plan(dims, "2, 1, 8", R"(, "pipeline_schedule": "dualpipev", "ep_overlap": false)", "full"));
  CHECK(full.step == doctest::Approx(full_off.step));
  CHECK(mentions(full.notes, "ep_overlap has no effect: full activation checkpointing"));
  // 1f1b with pp 2 pairs nothing: the same step as without, and a note says why.
  const Run plain = run(overlap_plan(dims, "2, 1, 8", ""));
  const Run asked = run(overlap_plan(dims, "2, 1, 8", R"(, "ep_overlap": true)"));
  CHECK(asked.step == doctest::Approx(plain.step));
  CHECK(mentions(asked.notes, "ep_overlap has no effect: pipeline schedule 1f1b"));
}
