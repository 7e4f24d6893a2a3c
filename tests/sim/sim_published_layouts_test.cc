// Issue 15 / 16's yardstick: the layouts practitioners published for a model and cluster, where
// planck's enumerate ranks them against its best (docs/simulator.md "Published layouts against
// planck's best"). Layouts come from the papers cited per case, never from planck's output.

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "core/plan/presets.h"
#include "sim/enumerate.h"
#include "sim/simulate.h"
#include "sim_test_util.h"

namespace {

using planck::sim::Layout;

std::int64_t degree(const Layout& l, const std::string& dim) {
  for (std::size_t i = 0; i < l.dims.size(); ++i) {
    if (l.dims[i] == dim) return l.shape[i];
  }
  return 1;
}

planck::sim::EnumerateRequest request(std::int64_t world, const char* model, const char* gpu, std::int64_t batch,
                                      std::int64_t seq) {
  planck::sim::EnumerateRequest r;
  r.world = world;
  r.gpus_per_node = 8;
  r.model = *planck::core::model_preset(model);
  r.gpu = *planck::core::gpu_preset(gpu);
  r.global_batch = batch;
  r.seq_len = seq;
  r.search_micro_batch = true;  // as `planck enumerate` without --micro-batch
  return r;
}

// tokens/s of the best layout matching `published`, over the best of all.
double ratio_to_best(const planck::sim::EnumerateResult& r, const std::function<bool(const Layout&)>& published) {
  REQUIRE(!r.layouts.empty());
  for (const auto& l : r.layouts) {
    if (published(l)) return l.tokens_per_s / r.layouts.front().tokens_per_s;
  }
  return 0;
}

}  // namespace

TEST_CASE("published_layouts_deepseek_v3_within_10_percent_of_the_best") {
  // DeepSeek-V3 technical report (arXiv:2412.19437) §3.2 / §4.2: 2048 H800, pp 16, ep 64, no TP,
  // 15,360 sequences of 4,096 per step.
  auto r = planck::sim::enumerate(request(2048, "deepseek-v3", "h800", 15360, 4096));
  REQUIRE(r.is_ok());
  for (const auto& l : r->layouts) CHECK(l.tokens_per_step == doctest::Approx(15360.0 * 4096));
  const double ratio = ratio_to_best(*r, [](const Layout& l) {
    return degree(l, "pp") == 16 && degree(l, "ep") == 64 && degree(l, "tp") == 1 && degree(l, "cp") == 1;
  });
  MESSAGE("DeepSeek-V3 published layout at " << ratio << " of planck's best");
  CHECK(ratio >= 1 / 1.1);
}

TEST_CASE("published_layouts_llama3_70b_tp8_fsdp_within_10_percent_of_the_best") {
  // torchtitan's Llama 3 70B runs (benchmarks/llama3_h100_202412_torchtitan.md, and
  // asyncTP_llama3_h100_2025-06_torchtitan.md): tp 8 with FSDP over the other 32 ranks of 256
  // H100s, no pipeline, seq 8,192; here 1,024 sequences per step.
  for (auto fw : {planck::sim::Framework::kAny, planck::sim::Framework::kMegatron}) {
    auto req = request(256, "llama3-70b", "h100-sxm", 1024, 8192);
    req.framework = fw;
    auto r = planck::sim::enumerate(req);
    REQUIRE(r.is_ok());
    const double ratio = ratio_to_best(
        *r, [](const Layout& l) { return degree(l, "tp") == 8 && degree(l, "pp") == 1 && degree(l, "cp") == 1; });
    MESSAGE(std::string(planck::sim::to_string(fw)) << ": tp 8 + FSDP at " << ratio << " of planck's best");
    CHECK(ratio >= 1 / 1.1);
  }
}

TEST_CASE("published_layouts_llama3_405b_tp8_pp16_within_10_percent_of_the_best") {
  // Llama 3 (arXiv:2407.21783) Table 4: tp 8, pp 16, cp 1 on 8,192 and on 16,384 H100s, 2,048
  // sequences of 8,192 per step. With every option planck models (the default), Meta's layout
  // fits by recomputing a share of its layers (torchtitan's layer SAC) and is within 10%.
  for (std::int64_t world : {8192, 16384}) {
    auto r = planck::sim::enumerate(request(world, "llama3-405b", "h100-sxm", 2048, 8192));
    REQUIRE(r.is_ok());
    const double ratio = ratio_to_best(
        *r, [](const Layout& l) { return degree(l, "tp") == 8 && degree(l, "pp") == 16 && degree(l, "cp") == 1; });
    MESSAGE(world << " GPUs: Meta's tp 8 pp 16 cp 1 at " << ratio << " of planck's best");
    CHECK(ratio >= 1 / 1.1);
  }
}

TEST_CASE("published_layouts_llama3_405b_best_keeps_metas_tp_and_pp") {
  // The same run with what Megatron-Core runs: planck's best keeps Meta's tp 8 x pp 16 (adding
  // cp where Meta had dp). Megatron recomputes whole layers per pipeline chunk (block method),
  // and at v 8 a chunk is one layer, so Meta's cp 1 layout recomputes half its layers at v 4
  // (docs/simulator.md): the ratio is printed, not asserted.
  auto req = request(8192, "llama3-405b", "h100-sxm", 2048, 8192);
  req.framework = planck::sim::Framework::kMegatron;
  auto r = planck::sim::enumerate(req);
  REQUIRE(r.is_ok());
  const Layout& best = r->layouts.front();
  CHECK(degree(best, "tp") == 8);
  CHECK(degree(best, "pp") == 16);
  const double ratio = ratio_to_best(
      *r, [](const Layout& l) { return degree(l, "tp") == 8 && degree(l, "pp") == 16 && degree(l, "cp") == 1; });
  MESSAGE("Meta's tp 8 pp 16 cp 1 at " << ratio << " of planck's best");
  CHECK(ratio > 0);
}

TEST_CASE("published_llama3_405b_table4_tflops_within_15_percent") {
  // Llama 3 (arXiv:2407.21783) Table 4: BF16 TFLOP/s per GPU of Meta's 405B runs, tp 8 x pp 16
  // (cp 1 at 8,192 tokens: 430 on 8,192 GPUs, 400 on 16,384; cp 16 at 131,072 tokens on 16,384:
  // 380), micro-batch 1, interleaved pipeline; planck prices it with zero1, sequence parallel,
  // interleaved_zb v 8 and every 4th layer recomputed (Meta's layout does not fit 80 GB without
  // recompute in planck's memory model; docs/simulator.md "Published layouts against planck's best").
  // Meta's runs are its own stack, not Megatron-Core's (whose Transformer Engine attention planck
  // prices as cuDNN's, the default for a plan without a stack); the paper names no attention
  // kernel, so the plan states FlashAttention-2, the kernel planck prices for every other stack.
  struct Run {
    std::int64_t gpus, cp, seq, batch;
    double published;
  };
  for (const Run& run : {Run{8192, 1, 8192, 2048, 430}, Run{16384, 1, 8192, 2048, 400}, Run{16384, 16, 131072, 128, 380}}) {
    const std::int64_t dp = run.gpus / (16 * 8 * run.cp);
    const std::string json = R"({"format": "planck/1", "cluster": {"nodes": )" + std::to_string(run.gpus / 8) +
                             R"(, "gpus_per_node": 8, "gpu": "h100-sxm"},
      "mesh": {"dims": ["pp", "dp", "cp", "tp"], "shape": [16, )" + std::to_string(dp) + ", " + std::to_string(run.cp) +
                             R"(, 8]},
      "parallelism": {"data_parallel": "zero1", "sequence_parallel": true, "pipeline_schedule": "interleaved_zb",
                      "virtual_stages": 8},
      "model": "llama3-405b",
      "training": {"global_batch": )" + std::to_string(run.batch) + R"(, "micro_batch": 1, "seq_len": )" +
                             std::to_string(run.seq) +
                             R"(, "activation_checkpointing": "full", "recompute_every": 4, "attention_kernel": "fa2"}})";
    auto plan = planck::sim::test::plan_from(json);
    auto mesh = planck::sim::test::mesh_of(plan);
    auto sim = planck::sim::simulate(plan, mesh);
    REQUIRE(sim.is_ok());
    MESSAGE(run.gpus << " GPUs, cp " << run.cp << ": " << sim->tflops_per_gpu << " TFLOP/s against Meta's " << run.published);
    CHECK(std::fabs(sim->tflops_per_gpu / run.published - 1) <= 0.15);
  }
}
