// Simulator benchmarks: simulate one plan (target < 1 ms, flat in the world size) and enumerate
// every layout of 131,072 GPUs for llama3-405b (target < 1 s).
//
//   ./bench_sim --benchmark_filter=. --benchmark_min_time=0.5

#include <benchmark/benchmark.h>

#include <string>

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

void BM_Enumerate(benchmark::State& state, const char* model, std::int64_t world) {
  planck::sim::EnumerateRequest req;
  req.world = world;
  req.gpus_per_node = 8;
  req.model = *planck::core::model_preset(model);
  req.gpu = *planck::core::gpu_preset("h100-sxm");
  req.search_micro_batch = true;  // as `planck enumerate` without --micro-batch
  std::int64_t valid = 0, considered = 0;
  for (auto _ : state) {
    auto r = planck::sim::enumerate(req);
    valid = r->valid;
    considered = r->considered;
    benchmark::DoNotOptimize(r);
  }
  state.counters["considered"] = static_cast<double>(considered);
  state.counters["valid"] = static_cast<double>(valid);
}
BENCHMARK_CAPTURE(BM_Enumerate, llama3_405b_131072, "llama3-405b", 131072)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Enumerate, llama3_8b_1024, "llama3-8b", 1024)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Enumerate, mixtral_8x7b_4096, "mixtral-8x7b", 4096)->Unit(benchmark::kMillisecond);

}  // namespace
