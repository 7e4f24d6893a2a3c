// Step times against published training runs (tests/data/published/: validation.csv made by
// scripts/published_cases.py from runs.csv, sources in SOURCES.md). The compute curves in
// core/plan/presets.cc were fitted (scripts/fit_compute.py) on the rows marked "fit" only; this
// test prints every row and fails when the mean absolute error on the held-back rows exceeds 10%.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/simulate.h"
#include "sim_test_util.h"

namespace {

namespace t = planck::sim::test;
using Row = std::map<std::string, std::string>;

std::vector<Row> read_cases() { return t::read_csv("published/validation.csv"); }

std::int64_t n(const Row& r, const char* key) { return std::stoll(r.at(key)); }

// The same plan scripts/fit_compute.py writes for a row.
std::string plan_json(const Row& r) {
  const std::int64_t gpus = n(r, "gpus"), gpn = std::min<std::int64_t>(8, gpus), vpp = n(r, "vpp");
  const std::string dp = r.at("data_parallel") == "none" ? "ddp" : r.at("data_parallel");
  nlohmann::json par = {{"data_parallel", dp},
                        {"sequence_parallel", r.at("sequence_parallel") == "1"},
                        {"pipeline_schedule", vpp > 1 ? "interleaved_1f1b" : "1f1b"},
                        {"virtual_stages", vpp},
                        {"async_tp", r.at("async_tp") == "1"},
                        {"overlap_param_gather", r.at("overlap_param_gather") == "1"}};
  if (n(r, "dp_bucket_params") > 0) par["dp_bucket_params"] = n(r, "dp_bucket_params");
  nlohmann::json j = {
      {"format", "planck/1"},
      {"name", r.at("id")},
      {"cluster", {{"nodes", gpus / gpn}, {"gpus_per_node", gpn}, {"gpu", r.at("gpu")}}},
      {"mesh", {{"dims", {"pp", "dp", "cp", "tp"}}, {"shape", {n(r, "pp"), n(r, "dp"), n(r, "cp"), n(r, "tp")}}}},
      {"parallelism", par},
      {"model",
       {{"layers", n(r, "layers")},
        {"hidden", n(r, "hidden")},
        {"ffn_hidden", n(r, "ffn_hidden")},
        {"heads", n(r, "heads")},
        {"kv_heads", n(r, "kv_heads")},
        {"vocab", n(r, "vocab")},
        {"gated_mlp", r.at("gated_mlp") == "1"},
        {"biases", r.at("biases") == "1"},
        {"tied_embeddings", r.at("tied") == "1"},
        {"position_embeddings", n(r, "position_embeddings")}}},
      {"training",
       {{"global_batch", n(r, "gbs")},
        {"micro_batch", n(r, "mbs")},
        {"seq_len", n(r, "seq_len")},
        {"activation_checkpointing", r.at("recompute")},
        {"attention", r.at("attention")},
        {"param_dtype", r.at("dtype")},
        {"reduce_dtype", r.at("reduce_dtype")},
        {"fp8", r.at("fp8")}}}};
  return j.dump();
}

}  // namespace

TEST_CASE("sim_published_step_times") {
  const std::vector<Row> rows = read_cases();
  REQUIRE(rows.size() >= 20);
  std::map<std::string, std::pair<double, int>> by_set, by_source;
  double worst = 0;
  std::string worst_id;
  std::printf("%-5s %-42s %10s %10s %8s\n", "set", "case", "published", "predicted", "error");
  for (const Row& r : rows) {
    auto plan = t::plan_from(plan_json(r));
    auto mesh = t::mesh_of(plan);
    auto sim = planck::sim::simulate(plan, mesh);
    REQUIRE(sim.is_ok());
    const double published = std::stod(r.at("step_s"));
    const double predicted = sim->step.step_time_s;
    const double err = (predicted - published) / published;
    std::printf("%-5s %-42s %10.3f %10.3f %+7.1f%%\n", r.at("set").c_str(), r.at("id").c_str(), published, predicted,
                100 * err);
    for (auto* m : {&by_set, &by_source}) {
      auto& [sum, count] = (*m)[m == &by_set ? r.at("set") : r.at("set") + " " + r.at("source")];
      sum += std::fabs(err);
      ++count;
    }
    if (r.at("set") == "held" && std::fabs(err) > worst) {
      worst = std::fabs(err);
      worst_id = r.at("id");
    }
  }
  for (const auto& [k, v] : by_source) std::printf("mean |error| %-32s %5.1f%% (%d)\n", k.c_str(), 100 * v.first / v.second, v.second);
  for (const auto& [k, v] : by_set) std::printf("mean |error| %-32s %5.1f%% (%d)\n", k.c_str(), 100 * v.first / v.second, v.second);
  std::printf("worst held-back case: %s %.1f%%\n", worst_id.c_str(), 100 * worst);
  REQUIRE(by_set.count("held"));
  CHECK(by_set["held"].first / by_set["held"].second <= 0.10);
}
