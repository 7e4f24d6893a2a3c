// Partial full recompute (training.recompute_every: torchtitan's layer SAC;
// recompute_num_layers: Megatron's block method): the recomputed layers keep only their input,
// the others everything; only they run their forward, and its TP collectives, again.

#include <doctest/doctest.h>

#include <string>

#include "core/plan/presets.h"
#include "sim/enumerate.h"
#include "sim/memory.h"
#include "sim/sim_checks.h"
#include "sim/simulate.h"
#include "sim_test_util.h"

namespace {

namespace t = planck::sim::test;

// Llama-3-8B on one GPU, seq 1024, one micro-batch: `training` is spliced into the plan.
std::string llama8b(const std::string& training, std::int64_t tp = 1, std::int64_t k = 1) {
  return R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": )" + std::to_string(tp) +
         R"(, "gpu": "h100-sxm"}, "mesh": {"dims": ["tp"], "shape": [)" + std::to_string(tp) +
         R"(]}, "parallelism": {"sequence_parallel": )" + (tp > 1 ? "true" : "false") +
         R"(}, "model": "llama3-8b", "training": {"seq_len": 1024, "grad_accumulation": )" + std::to_string(k) + ", " +
         training + "}}";
}

double activations(const std::string& json) {
  auto plan = t::plan_from(json);
  auto mesh = t::mesh_of(plan);
  return static_cast<double>(planck::sim::memory(plan, mesh, t::lower_ok(plan, mesh)).activations);
}

}  // namespace

TEST_CASE("sim_partial_recompute_activations_mix_the_kept_and_recomputed_layers") {
  // Per layer and micro-batch (docs/sources/simulator.md §3.2, Korthikanti et al. Table 2):
  // Llama-3-8B keeps sbh(12 + 4g) + 6sbf = 34 sbh bytes without recompute, 2 sbh (its input)
  // when recomputed; the last stage adds Megatron's 4 s b (h + V) logits, and a recomputed
  // layer's activations are rebuilt once for its backward (34 - 2 sbh).
  const double s = 1024, h = 4096, vocab = 128256;
  const double kept = 34 * s * h, input = 2 * s * h, logits = 4 * s * (h + vocab), rebuilt = kept - input;
  CHECK(activations(llama8b(R"("activation_checkpointing": "none")")) == doctest::Approx(32 * kept + logits));
  CHECK(activations(llama8b(R"("activation_checkpointing": "full")")) ==
        doctest::Approx(32 * input + logits + rebuilt));
  // torchtitan selective_ac_option "3": blocks 3, 6, ..., 30 of 32.
  CHECK(activations(llama8b(R"("activation_checkpointing": "full", "recompute_every": 3)")) ==
        doctest::Approx(10 * input + 22 * kept + logits + rebuilt));
  // Megatron --recompute-method block --recompute-num-layers 5 on one 32-layer chunk.
  CHECK(activations(llama8b(R"("activation_checkpointing": "full", "recompute_num_layers": 5)")) ==
        doctest::Approx(5 * input + 27 * kept + logits + rebuilt));
  // Every 64th of 32 blocks: none is wrapped, nothing is rebuilt.
  CHECK(activations(llama8b(R"("activation_checkpointing": "full", "recompute_every": 64)")) ==
        doctest::Approx(32 * kept + logits));
}

TEST_CASE("sim_partial_recompute_reruns_only_its_layers_forward") {
  auto run = [](const std::string& training) {
    auto plan = t::plan_from(llama8b(training, 1, 2));
    auto mesh = t::mesh_of(plan);
    auto r = planck::sim::simulate(plan, mesh);
    REQUIRE(r.is_ok());
    return r->compute;
  };
  // Full recompute re-runs each layer's forward once in its backward (Megatron
  // recompute_granularity full; torch.utils.checkpoint): 2 micro-batches x the layers' forward.
  const auto full = run(R"("activation_checkpointing": "full")");
  CHECK(full.recompute_s == doctest::Approx(2 * full.layers_forward_s));
  CHECK(full.recomputed_layers == 32);
  const auto quarter = run(R"("activation_checkpointing": "full", "recompute_every": 4)");
  CHECK(quarter.recompute_s == doctest::Approx(2 * quarter.layers_forward_s * 8 / 32));
  CHECK(quarter.rank_layers == 32);
  CHECK(quarter.recomputed_layers == 8);  // blocks 4, 8, ..., 32
  CHECK(run(R"("activation_checkpointing": "selective")").recomputed_layers == 0);
  CHECK(run(R"("activation_checkpointing": "full", "recompute_every": 33)").recompute_s == 0);
}

TEST_CASE("sim_partial_recompute_repeats_only_its_layers_tp_collectives") {
  // Sequence parallel (Korthikanti §4.2.2): a layer's forward runs 2 all-gathers and 2
  // reduce-scatters; its backward 4 all-gathers (grads + the input re-gather for weight grads) and
  // 2 reduce-scatters, plus the recomputed forward's 2 + 2 on each recomputed layer.
  auto calls = [](const std::string& training, planck::core::CollOp op) {
    auto plan = t::plan_from(llama8b(training, 2, 3));
    auto mesh = t::mesh_of(plan);
    const auto s = t::lower_ok(plan, mesh);
    for (const auto& c : s.collectives) {
      if (c.role == "tp" && c.op == op && c.phase == planck::core::Phase::kBackward) return c.calls_per_step;
    }
    return std::int64_t{-1};
  };
  using planck::core::CollOp;
  for (const auto& row :
       {std::pair{R"("activation_checkpointing": "none")", 0}, std::pair{R"("activation_checkpointing": "full")", 32},
        std::pair{R"("activation_checkpointing": "full", "recompute_every": 3)", 10},
        std::pair{R"("activation_checkpointing": "full", "recompute_num_layers": 7)", 7}}) {
    const std::string training = row.first;  // clang 14: no structured binding in CAPTURE
    const int recomputed = row.second;
    CAPTURE(training);
    CHECK(calls(training, CollOp::kAllGather) == (4 * 32 + 2 * recomputed) * 3);
    CHECK(calls(training, CollOp::kReduceScatter) == (2 * 32 + 2 * recomputed) * 3);
  }
}

TEST_CASE("sim_enumerate_recomputes_only_as_many_layers_as_memory_needs") {
  // Llama-3-70B on 32 H100s at seq 8192: layouts whose activations do not fit without recompute
  // get the fewest recomputed layers that fit under memory-tight's 90%: one more kept layer
  // (every N+1-th, or N-1 per chunk) would not.
  for (auto fw : {planck::sim::Framework::kAny, planck::sim::Framework::kMegatron}) {
    auto req = planck::sim::test::h100_request("llama3-70b", 32, 64, 8192);
    req.framework = fw;
    auto r = planck::sim::enumerate(req);
    REQUIRE(r.is_ok());
    int partial = 0;
    for (const auto& l : r->layouts) {
      if (l.tight || (l.recompute_every == 0 && l.recompute_num_layers == 0)) continue;
      ++partial;
      CHECK(l.checkpointing == planck::core::Checkpointing::kFull);
      CHECK((fw == planck::sim::Framework::kMegatron ? l.recompute_num_layers : l.recompute_every) > 0);
      std::string dims, shape;
      for (std::size_t i = 0; i < l.dims.size(); ++i) {
        dims += (i ? ", \"" : "\"") + l.dims[i] + "\"";
        shape += (i ? ", " : "") + std::to_string(l.shape[i]);
      }
      const bool chunked = l.pipeline_schedule == planck::core::PipelineSchedule::kInterleaved1F1B ||
                           l.pipeline_schedule == planck::core::PipelineSchedule::kInterleavedZb;
      const std::string interleaved = chunked ? ", \"virtual_stages\": " + std::to_string(l.virtual_stages) : "";
      auto plan_with = [&](std::int64_t every, std::int64_t per_chunk) {
        std::string training = R"("activation_checkpointing": "full")";
        if (every > 0) training += R"(, "recompute_every": )" + std::to_string(every);
        if (per_chunk > 0) training += R"(, "recompute_num_layers": )" + std::to_string(per_chunk);
        return t::plan_from(
            R"({"format": "planck/1", "cluster": {"nodes": 4, "gpus_per_node": 8, "gpu": "h100-sxm"},
          "mesh": {"dims": [)" +
            dims + R"(], "shape": [)" + shape + R"(]}, "parallelism": {"data_parallel": ")" +
            planck::core::to_string(l.data_parallel) + R"(", "reshard_after_forward": )" +
            (l.reshard_after_forward ? "true" : "false") + R"(, "sequence_parallel": )" +
            (l.sequence_parallel ? "true" : "false") + R"(, "pipeline_schedule": ")" +
            planck::core::to_string(l.pipeline_schedule) + "\"" + interleaved + R"(}, "model": "llama3-70b",
          "training": {"seq_len": 8192, "global_batch": 64, "micro_batch": )" +
            std::to_string(l.micro_batch) + R"(, "grad_accumulation": )" + std::to_string(l.micro_batches) +
            R"(, "grad_sync": ")" + planck::core::to_string(l.grad_sync) + "\", " + training + "}}");
      };
      auto peak_share = [&](std::int64_t every, std::int64_t per_chunk) {
        auto plan = plan_with(every, per_chunk);
        auto mesh = t::mesh_of(plan);
        const auto m = planck::sim::memory(plan, mesh, t::lower_ok(plan, mesh));
        return static_cast<double>(m.peak) / static_cast<double>(m.capacity);
      };
      CAPTURE(l.shape);
      CHECK(peak_share(l.recompute_every, l.recompute_num_layers) <= planck::sim::kMemoryTightFraction);
      CHECK(peak_share(l.recompute_every, l.recompute_num_layers) ==
            doctest::Approx(static_cast<double>(l.memory_peak) / static_cast<double>(req.gpu.memory_bytes)));
      if (l.recompute_every > 0) CHECK(peak_share(l.recompute_every + 1, 0) > planck::sim::kMemoryTightFraction);
      if (l.recompute_num_layers > 1)
        CHECK(peak_share(0, l.recompute_num_layers - 1) > planck::sim::kMemoryTightFraction);
    }
    MESSAGE(std::string(planck::sim::to_string(fw)) << ": " << partial << " layouts recompute only some layers");
    CHECK(partial > 0);
  }
}

TEST_CASE("sim_enumerate_torchtitan_recomputes_every_layer") {
  // torchtitan removed layer SAC (selective_ac_option = N) in 114151ad4 (2026-03-23): with
  // --framework torchtitan a layout that needs full recompute recomputes every layer.
  auto req = planck::sim::test::h100_request("llama3-70b", 32, 64, 8192);
  req.framework = planck::sim::Framework::kTorchtitan;
  auto r = planck::sim::enumerate(req);
  REQUIRE(r.is_ok());
  int full = 0;
  for (const auto& l : r->layouts) {
    CHECK(l.recompute_every == 0);
    CHECK(l.recompute_num_layers == 0);
    if (l.checkpointing == planck::core::Checkpointing::kFull) ++full;
  }
  CHECK(full > 0);
}
