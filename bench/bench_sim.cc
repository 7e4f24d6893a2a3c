// Simulator benchmarks: simulate one plan (target < 1 ms, flat in the world size) and enumerate
// every layout of 131,072 GPUs for llama3-405b (target < 1 s); enumerate --plan, where every
// verify rule runs on each layout, on the issue's realistic cases (measured, no target).
//
//   ./bench_sim --benchmark_filter=. --benchmark_min_time=0.5

#include <benchmark/benchmark.h>

#include <string>

#include "cli/verify_registry.h"
#include "core/mesh/plan_mesh.h"
#include "core/plan/plan_load.h"
#include "core/plan/presets.h"
#include "sim/enumerate.h"
#include "sim/simulate.h"

namespace {

// A 4-D Llama-3-405B layout (pp 16, hsdp r x s, cp 2, tp 8) on `nodes` x 8 H100s: the world
// grows with dp_replicate; every other dim is fixed.
std::string plan_json(std::int64_t nodes) {
  const std::int64_t world = nodes * 8;
  const std::int64_t replicate = world / (16 * 4 * 2 * 8);
  return R"({"format": "planck/1", "cluster": {"nodes": )" + std::to_string(nodes) +
         R"(, "gpus_per_node": 8, "gpu": "h100-sxm"},
    "mesh": {"dims": ["pp", "dp_replicate", "dp_shard", "cp", "tp"], "shape": [16, )" + std::to_string(replicate) +
         R"(, 4, 2, 8]},
    "parallelism": {"data_parallel": "hsdp", "sequence_parallel": true, "pipeline_schedule": "interleaved_1f1b",
                    "virtual_stages": 2},
    "model": "llama3-405b",
    "training": {"seq_len": 8192, "micro_batch": 1, "grad_accumulation": 16, "activation_checkpointing": "selective"}})";
}

void BM_Simulate(benchmark::State& state) {
  const std::int64_t nodes = state.range(0);
  auto loaded = planck::core::load_plan_text(plan_json(nodes), "bench.json");
  if (!loaded.plan) {
    state.SkipWithError("plan did not load");
    return;
  }
  auto mesh = planck::core::plan_mesh(*loaded.plan, nullptr);
  if (!mesh) {
    state.SkipWithError("mesh invalid");
    return;
  }
  for (auto _ : state) {
    auto r = planck::sim::simulate(*loaded.plan, *mesh);
    benchmark::DoNotOptimize(r);
  }
  state.counters["world"] = static_cast<double>(mesh->world());
}
// 1,024 to 2,097,152 GPUs (128 to 262,144 nodes).
BENCHMARK(BM_Simulate)->RangeMultiplier(8)->Range(128, 262144)->Unit(benchmark::kMicrosecond);

planck::sim::EnumerateRequest enumerate_request(const char* model, std::int64_t world) {
  planck::sim::EnumerateRequest req;
  req.world = world;
  req.gpus_per_node = 8;
  req.model = *planck::core::model_preset(model);
  req.gpu = *planck::core::gpu_preset("h100-sxm");
  req.search_micro_batch = true;  // as `planck enumerate` without --micro-batch
  return req;
}

void time_enumerate(benchmark::State& state, const planck::sim::EnumerateRequest& req) {
  std::int64_t valid = 0, considered = 0, rejected = 0;
  for (auto _ : state) {
    auto r = planck::sim::enumerate(req);
    valid = r->valid;
    considered = r->considered;
    rejected = r->rejected;
    benchmark::DoNotOptimize(r);
  }
  state.counters["considered"] = static_cast<double>(considered);
  state.counters["valid"] = static_cast<double>(valid);
  if (req.checks) state.counters["rejected"] = static_cast<double>(rejected);
}

void BM_Enumerate(benchmark::State& state, const char* model, std::int64_t world) {
  time_enumerate(state, enumerate_request(model, world));
}
BENCHMARK_CAPTURE(BM_Enumerate, llama3_405b_131072, "llama3-405b", 131072)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Enumerate, llama3_8b_1024, "llama3-8b", 1024)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Enumerate, mixtral_8x7b_4096, "mixtral-8x7b", 4096)->Unit(benchmark::kMillisecond);

// planck enumerate --plan TEMPLATE --model M --world N --gpus-per-node 8 --global-batch B
// --seq-len 8192 with a template that holds only Lingua's rank program (plans/lingua-8x4-*.json
// without their fsdp_dims), so the search finds exactly the layouts of the run without --plan
// and the difference is the cost of the checks: every rule of `planck verify` on each kept
// layout, and on the next schedule of a rejected one. `fixed` rejects nothing; `prefix` (the
// formula before Lingua d1fd421) rejects every layout with dp_replicate > 1 and != dp_shard.
std::string lingua_template(bool fixed) {
  return std::string(R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8},
    "mesh": {"dims": ["dp_shard"], "shape": [8]},
    "rank_program": {"steps": ["dp_rank = dp_replicate.rank", "dp_degree = dp_replicate.size",
      )") + (fixed ? R"("dp_rank = dp_rank * dp_shard.size + dp_shard.rank",)" : R"("dp_rank = dp_rank * dp_degree + dp_shard.rank",)") +
         R"( "dp_degree = dp_degree * dp_shard.size"]}})";
}

// template: 0 = no --plan, 1 = fixed, 2 = prefix.
void BM_EnumeratePlan(benchmark::State& state, const char* model, std::int64_t world, std::int64_t global_batch,
                      int templ) {
  const planck::core::CheckRegistry checks = planck::cli::verify_registry();
  planck::sim::EnumerateRequest req = enumerate_request(model, world);
  req.global_batch = global_batch;
  req.seq_len = 8192;
  if (templ > 0) {
    auto loaded = planck::core::load_plan_text(lingua_template(templ == 1), "lingua-template.json");
    if (!loaded.plan) {
      state.SkipWithError("template does not load");
      return;
    }
    req.base = std::move(*loaded.plan);
    req.checks = &checks;
  }
  time_enumerate(state, req);
}
BENCHMARK_CAPTURE(BM_EnumeratePlan, llama3_70b_256_none, "llama3-70b", 256, 1024, 0)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EnumeratePlan, llama3_70b_256_fixed, "llama3-70b", 256, 1024, 1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EnumeratePlan, llama3_70b_256_prefix, "llama3-70b", 256, 1024, 2)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EnumeratePlan, llama3_405b_16384_none, "llama3-405b", 16384, 2048, 0)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EnumeratePlan, llama3_405b_16384_fixed, "llama3-405b", 16384, 2048, 1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EnumeratePlan, llama3_405b_16384_prefix, "llama3-405b", 16384, 2048, 2)->Unit(benchmark::kMillisecond);

// The searches users ask for (docs/performance.md): Llama 3 405B on 131,072 H100 with 2,048 and
// 16,384 sequences of 8,192 tokens (Meta's batch and 8x it). Iterations after the first reuse
// the pipeline orders and timelines cached per thread (sim/pipeline.cc); a cold process is
// bench/bench_cli.sh's measure.
BENCHMARK_CAPTURE(BM_EnumeratePlan, llama3_405b_131072_2048, "llama3-405b", 131072, 2048, 0)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EnumeratePlan, llama3_405b_131072_16384, "llama3-405b", 131072, 16384, 0)->Unit(benchmark::kMillisecond);

// DeepSeek-V3 on 2,048 H800, 15,360 sequences of 4,096 tokens (the paper's run).
void BM_EnumerateDeepSeekV3(benchmark::State& state) {
  planck::sim::EnumerateRequest req = enumerate_request("deepseek-v3", 2048);
  req.gpu = *planck::core::gpu_preset("h800");
  req.global_batch = 15360;
  req.seq_len = 4096;
  time_enumerate(state, req);
}
BENCHMARK(BM_EnumerateDeepSeekV3)->Unit(benchmark::kMillisecond);

}  // namespace
