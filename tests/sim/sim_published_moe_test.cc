// MoE step times against published runs (tests/data/published/moe_validation.csv, made by
// scripts/moe_cases.py from moe_runs.csv; every row's source and settings in SOURCES_moe.md):
// Megatron-Bridge's performance summaries (NVIDIA-NeMo/Megatron-Bridge@067f987d
// docs/performance-summary*.md with each release's recipe), Megatron-LM's MoE model zoo and
// Megatron-Bridge's perf-skill A/B notes. The shared MoE constants (sim/moe_band.h) and each GPU
// generation's grouped-GEMM scale are searched on a fixed grid: the shipped ones must be the fit on all rows, and each source is
// scored with the constants refitted without it (leave-one-source-out). The test prints every
// row, the per-source means, and the Kendall tau of planck's throughput order against the
// measured one for every model group with 4 or more layouts, and holds them to the levels
// measured when the constants were fitted (docs/simulator.md "MoE validation").

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/plan/presets.h"
#include "sim/moe_band.h"
#include "sim/simulate.h"
#include "sim/uncertainty.h"
#include "sim_published_loso.h"
#include "sim_test_util.h"

namespace {

namespace t = planck::sim::test;
namespace p = planck::sim::published;
using Row = std::map<std::string, std::string>;

std::int64_t n(const Row& r, const char* key) { return std::stoll(r.at(key)); }

// The source a row counts under for leave-one-source-out: each publication, and each release of
// Megatron-Bridge's performance summary (its own measurement campaign and recipes).
std::string source_of(const Row& r) { return r.at("source"); }

// The plan of a Megatron-Core run: the expert group takes tp (ETP 1, the recipes' setting) and
// cp first, then ranks from dp (docs/plan-format.md "Mixture of experts").
std::string plan_json(const Row& r) {
  const std::int64_t gpus = n(r, "gpus"), gpn = n(r, "gpus_per_node"), tp = n(r, "tp"), cp = n(r, "cp"),
                     pp = n(r, "pp"), ep = n(r, "ep"), vpp = n(r, "vpp");
  const bool fold_tp = ep % (cp * tp) == 0;
  const std::int64_t mesh_ep = fold_tp ? ep / (cp * tp) : ep / cp;
  const std::int64_t dp = gpus / (pp * mesh_ep * cp * tp);
  nlohmann::json par = {{"data_parallel", r.at("data_parallel")},
                        {"sequence_parallel", tp > 1},
                        {"pipeline_schedule", vpp > 1 ? "interleaved_1f1b" : "1f1b"},
                        {"virtual_stages", vpp},
                        {"overlap_param_gather", true},
                        {"moe_dispatcher", r.at("dispatcher")},
                        {"ep_overlap", r.at("ep_overlap") == "1"}};
  if (tp > 1) par["etp"] = fold_tp ? 1 : tp;
  if (!r.at("capacity_factor").empty()) par["expert_capacity_factor"] = std::stod(r.at("capacity_factor"));
  if (!r.at("pipeline_layout").empty()) par["pipeline_layout"] = r.at("pipeline_layout");
  // The settings each source states (scripts/moe_cases.py says where each is read from).
  par["async_tp"] = r.at("async_tp") == "1";
  par["account_for_embedding_in_pipeline_split"] = r.at("account_for_embedding_and_loss") == "1";
  par["account_for_loss_in_pipeline_split"] = r.at("account_for_embedding_and_loss") == "1";
  if (r.at("grad_overlap") == "0") par["dp_bucket_params"] = std::int64_t{1} << 50;  // one bucket: not overlapped
  nlohmann::json training = {{"global_batch", n(r, "gbs")},
                             {"micro_batch", n(r, "mbs")},
                             {"seq_len", n(r, "seq_len")},
                             {"activation_checkpointing", r.at("recompute")},
                             {"fp8", r.at("fp8")},
                             {"reduce_dtype", r.at("reduce_dtype")},
                             {"stack", "megatron"}};  // every row ran Megatron-Core
  if (!r.at("grad_sync").empty()) training["grad_sync"] = r.at("grad_sync");
  // Comma-separated cells: CUDA graph scopes, Megatron's recompute modules.
  auto list = [&](const char* key) {
    nlohmann::json out = nlohmann::json::array();
    for (std::size_t at = 0; at < r.at(key).size();) {
      const std::size_t comma = std::min(r.at(key).find(',', at), r.at(key).size());
      out.push_back(r.at(key).substr(at, comma - at));
      at = comma + 1;
    }
    return out;
  };
  if (const auto graphs = list("cuda_graphs"); !graphs.empty()) training["cuda_graphs"] = graphs;
  if (const auto modules = list("recompute_modules"); !modules.empty()) training["recompute_modules"] = modules;
  nlohmann::json j = {{"format", "planck/1"},
                      {"name", r.at("id")},
                      {"cluster", {{"nodes", gpus / gpn}, {"gpus_per_node", gpn}, {"gpu", r.at("gpu")}}},
                      {"mesh", {{"dims", {"pp", "dp", "ep", "cp", "tp"}}, {"shape", {pp, dp, mesh_ep, cp, tp}}}},
                      {"parallelism", par},
                      {"model", r.at("model")},
                      {"training", training}};
  if (!r.at("nvlink_domain").empty()) j["cluster"]["nvlink_domain"] = n(r, "nvlink_domain");
  return j.dump();
}

// Kendall tau-a of two orders over the same items.
double kendall_tau(const std::vector<double>& a, const std::vector<double>& b) {
  double concordant = 0, discordant = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    for (std::size_t j = i + 1; j < a.size(); ++j) {
      const double s = (a[i] - a[j]) * (b[i] - b[j]);
      if (s > 0) ++concordant;
      else if (s < 0) ++discordant;
    }
  }
  const double pairs = static_cast<double>(a.size() * (a.size() - 1) / 2);
  return pairs > 0 ? (concordant - discordant) / pairs : 0;
}

// The grid the MoE constants are searched on: grouped-GEMM efficiency relative to dense (one per
// GPU generation, ComputeCurve::grouped_gemm_scale in the presets), and the shared ones of
// sim/moe_band.h: the router + dispatch-preprocessing host microseconds per MoE layer forward, the
// host microseconds per operation of an eagerly launched MoE layer (its least forward time is
// that x sim::moe_layer_launches), and the share of the paired
// all-to-all an overlap really hides.
struct GridPoint {
  planck::sim::MoeConstants c;
  std::vector<double> err;  // signed relative error per row
};

// The GPU generation whose grouped-GEMM scale a row reads: the preset's fitted curve.
bool blackwell(const Row& r) {
  const auto gpu = planck::core::gpu_preset(r.at("gpu"));
  const auto b200 = planck::core::gpu_preset("b200");
  REQUIRE(gpu.has_value());
  return gpu->compute.grouped_gemm_scale == b200->compute.grouped_gemm_scale &&
         gpu->compute.gemm_max == b200->compute.gemm_max;
}

// A fit: the shared constants, the grouped-GEMM scale of each generation, the error per row.
struct Fit {
  planck::sim::MoeConstants c;
  double hopper = 0, blackwell = 0;
  std::vector<double> err;
};

std::vector<GridPoint> search_grid(const std::vector<Row>& rows) {
  std::vector<planck::core::Plan> plans;
  std::vector<planck::core::Mesh> meshes;
  for (const Row& r : rows) plans.push_back(t::plan_from(plan_json(r)));
  for (const auto& p : plans) meshes.push_back(t::mesh_of(p));
  std::vector<GridPoint> grid;
  for (double g : {0.4, 0.5, 0.6, 0.7, 0.8, 1.0}) {
    for (double us : {0.0, 250.0, 500.0, 750.0, 1000.0, 1500.0, 2000.0}) {
      for (double launch_us : {0.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0, 40.0}) {
        for (double ov : {0.5, 0.75, 1.0}) {
          GridPoint pt{{g, us * 1e-6, launch_us * 1e-6, ov}, {}};
          planck::sim::SimOptions o;
          o.moe = pt.c;
          for (std::size_t i = 0; i < rows.size(); ++i) {
            auto sim = planck::sim::simulate(plans[i], meshes[i], o);
            REQUIRE(sim.is_ok());
            const double published = std::stod(rows[i].at("step_s"));
            pt.err.push_back((sim->step.step_time_s - published) / published);
          }
          grid.push_back(std::move(pt));
        }
      }
    }
  }
  return grid;
}

// The least mean |error| over the rows `use` keeps: for each setting of the shared constants,
// each generation's rows take the grouped-GEMM scale best for them (the sum separates).
Fit best(const std::vector<GridPoint>& grid, const std::vector<bool>& use, const std::vector<bool>& is_blackwell) {
  std::map<std::tuple<double, double, double>, std::vector<const GridPoint*>> shared;
  for (const auto& pt : grid) {
    shared[{pt.c.layer_overhead_s, pt.c.host_launch_s, pt.c.ep_overlap_efficiency}].push_back(&pt);
  }
  Fit out;
  double least = 1e300;
  for (const auto& [key, points] : shared) {
    const GridPoint* pick[2] = {points.front(), points.front()};
    double total = 0;
    for (int gen = 0; gen < 2; ++gen) {
      double lo = 1e300;
      for (const GridPoint* pt : points) {
        double sum = 0;
        for (std::size_t i = 0; i < use.size(); ++i) sum += use[i] && is_blackwell[i] == (gen == 1) ? std::fabs(pt->err[i]) : 0;
        if (sum < lo - 1e-12) lo = sum, pick[gen] = pt;
      }
      total += lo;
    }
    if (total < least - 1e-12) {
      least = total;
      out.c = pick[0]->c;
      out.c.expert_gemm_scale.reset();
      out.hopper = *pick[0]->c.expert_gemm_scale;
      out.blackwell = *pick[1]->c.expert_gemm_scale;
      out.err.resize(use.size());
      for (std::size_t i = 0; i < use.size(); ++i) out.err[i] = pick[is_blackwell[i] ? 1 : 0]->err[i];
    }
  }
  return out;
}

// Kendall tau of planck's throughput order against the measured one, per model group with 4 or
// more published layouts, at the shipped constants (docs/simulator.md "MoE validation").
// Qwen3-235B-A22B on B200 mixes two releases' runs of one layout 31% apart (25.09 with token
// drop, 25.11 dropless) with two runs of another 0.8% apart: planck cannot order them.
const std::map<std::string, double> kStatedTau = {
    {"DeepSeek-V3|B200", 4.0 / 6},  // five of its six pairs in order
    {"DeepSeek-V3|GB200", 1.0},
    {"DeepSeek-V3|GB300", 1.0},
    {"GPT-OSS-120B|B200", 1.0},
    {"GPT-OSS-120B|B300", 1.0},
    {"GPT-OSS-120B|GB200", 7.0 / 10},
    {"Qwen3-235B-A22B|B200", 0.0},
    {"Qwen3-235B-A22B|B300", 5.0 / 6},
    {"Qwen3-235B-A22B|GB200", 13.0 / 15},
    {"Qwen3-235B-A22B|GB300", 9.0 / 10},
    {"Qwen3-235B-A22B|H100|mcore-modelzoo", 0.6},
};

}  // namespace

TEST_CASE("sim_published_moe_step_times_and_layout_order") {
  const std::vector<Row> rows = t::read_csv("published/moe_validation.csv");
  REQUIRE(rows.size() >= 25);
  const std::vector<GridPoint> grid = search_grid(rows);
  std::vector<bool> is_blackwell;
  for (const Row& r : rows) is_blackwell.push_back(blackwell(r));
  // The shipped constants are the fit on every row: the shared ones in sim/moe_band.h, each
  // generation's grouped-GEMM scale in its presets' curve.
  const Fit all = best(grid, std::vector<bool>(rows.size(), true), is_blackwell);
  const planck::sim::MoeConstants shipped = planck::sim::fitted_moe_constants();
  CHECK_FALSE(shipped.expert_gemm_scale.has_value());
  CHECK(planck::core::gpu_preset("h100-sxm")->compute.grouped_gemm_scale == doctest::Approx(all.hopper));
  CHECK(planck::core::gpu_preset("b200")->compute.grouped_gemm_scale == doctest::Approx(all.blackwell));
  // In microseconds: doctest's Approx scales its epsilon by 1 + the value, so seconds of this
  // size would pass any pair (30 us against 35 us did).
  CHECK(shipped.layer_overhead_s * 1e6 == doctest::Approx(all.c.layer_overhead_s * 1e6));
  CHECK(shipped.host_launch_s * 1e6 == doctest::Approx(all.c.host_launch_s * 1e6));
  CHECK(shipped.ep_overlap_efficiency == doctest::Approx(all.c.ep_overlap_efficiency));
  std::printf("fit on all rows: grouped GEMM x%.2f Hopper, x%.2f Blackwell, %.0f us host time per MoE layer, %.0f us "
              "per launch, overlap x%.2f\n",
              all.hopper, all.blackwell, all.c.layer_overhead_s * 1e6, all.c.host_launch_s * 1e6,
              all.c.ep_overlap_efficiency);
  // Leave one source out: fit on the other sources, score the held-out one.
  std::map<std::string, std::pair<double, int>> by_source;
  std::vector<double> held(rows.size(), 0);
  for (const Row& r : rows) by_source[source_of(r)];
  for (auto& [source, acc] : by_source) {
    std::vector<bool> use(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) use[i] = source_of(rows[i]) != source;
    const Fit fit = best(grid, use, is_blackwell);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (use[i]) continue;
      held[i] = fit.err[i];
      acc.first += std::fabs(fit.err[i]);
      ++acc.second;
    }
    std::printf("held out %-58s fit x%.2f/x%.2f %4.0f us %4.0f us x%.2f: mean |error| %5.1f%% (%d)\n", source.c_str(),
                fit.hopper, fit.blackwell, fit.c.layer_overhead_s * 1e6, fit.c.host_launch_s * 1e6,
                fit.c.ep_overlap_efficiency, 100 * acc.first / acc.second, acc.second);
  }
  // group -> layout key -> (measured, predicted) tokens/s/GPU at the shipped constants, repeats averaged.
  std::map<std::string, std::map<std::string, std::vector<std::pair<double, double>>>> groups;
  double loso = 0;
  int fp8_rows = 0, deepep_rows = 0;
  std::printf("%-62s %9s %9s %8s %8s\n", "case", "published", "predicted", "error", "LOSO");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const double published = std::stod(r.at("step_s")), predicted = published * (1 + all.err[i]);
    std::printf("%-62s %9.3f %9.3f %+7.1f%% %+7.1f%%\n", r.at("id").substr(0, 62).c_str(), published, predicted,
                100 * all.err[i], 100 * held[i]);
    loso += std::fabs(held[i]);
    fp8_rows += r.at("fp8") != "none";
    deepep_rows += r.at("dispatcher") == "deepep";
    const double tokens = static_cast<double>(n(r, "gbs") * n(r, "seq_len")) / static_cast<double>(n(r, "gpus"));
    const std::string key = r.at("tp") + "/" + r.at("pp") + "/" + r.at("cp") + "/" + r.at("ep") + "/" + r.at("vpp") +
                            "/" + r.at("mbs") + "/" + r.at("gbs") + "/" + r.at("dispatcher") + "/" + r.at("ep_overlap") +
                            "/" + r.at("fp8") + "/" + r.at("capacity_factor");
    groups[r.at("group")][key].push_back({tokens / published, tokens / predicted});
  }
  loso /= static_cast<double>(rows.size());
  double over_sources = 0;
  for (const auto& [source, acc] : by_source) over_sources += acc.first / acc.second;
  over_sources /= static_cast<double>(by_source.size());
  std::printf("MoE LOSO mean |error| %.1f%% (%.3f) over %zu runs, %.1f%% over %zu sources (%d FP8, %d DeepEP)\n",
              100 * loso, loso, rows.size(), 100 * over_sources, by_source.size(), fp8_rows, deepep_rows);
  // Issue 32 asks for <= 15%; measured 13.33% over the 153 runs of H100, B200, B300, GB200 and GB300
  // (14.40% before each attention kernel was scaled to the model's head dim; 14.81% before
  // Megatron's attention was priced as the cuDNN kernel Transformer Engine runs;
  // 14.85% over 148 runs before the Megatron-Core MoE report's five;
  // 15.02% before Megatron's recompute modules were priced; 14.4% before the DeepSeek-V3 GB200
  // ladder's CUDA graphs were transcribed; 15.1% while the host floor was one fixed time per layer,
  // before it counted the layer's launches; 9.8% over the 47 H100 / B200 runs before the Blackwell
  // presets let the others in) when the
  // constants were last fitted (docs/simulator.md "MoE validation"), held here so a change that
  // loses accuracy fails.
  CHECK(loso <= 0.155);
  CHECK(by_source.size() >= 4);
  CHECK(fp8_rows > 0);
  CHECK(deepep_rows > 0);
  // The band simulate prints for MoE predictions is this measured error (sim/moe_band.h).
  // (to its printed three decimals: doctest's Approx scales its epsilon by 1 + the value, too loose here)
  CHECK(std::fabs(planck::sim::kMoeStepErrorBand - loso) <= 0.0005);
  CHECK(planck::sim::kMoeBandRuns == static_cast<int>(rows.size()));
  CHECK(planck::sim::kMoeBandSources == static_cast<int>(by_source.size()));
  // The interval simulate states for a MoE plan (sim/uncertainty.h): published / predicted at
  // the 5th and 95th percentiles of these leave-one-source-out predictions, each source's runs
  // weighted equally, and its coverage judged per held-out source by the band of the others.
  std::vector<p::Case> moe_cases;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    p::Case c;
    c.id = rows[i].at("id");
    c.source = source_of(rows[i]);
    c.stack = "moe";
    c.published_s = std::stod(rows[i].at("step_s"));
    c.loso_s = c.published_s * (1 + held[i]);
    moe_cases.push_back(std::move(c));
  }
  const p::Band band = p::ratio_band(moe_cases, "moe");
  int covered = 0;
  for (const auto& [source, acc] : by_source) {
    const p::Band others = p::ratio_band(moe_cases, "moe", source);
    for (const p::Case& c : moe_cases) {
      const double ratio = c.published_s / c.loso_s;
      covered += c.source == source && ratio >= others.low && ratio <= others.high;
    }
  }
  std::printf("MoE interval x%.3f-x%.3f over %d runs of %d sources; held-out sources' coverage %d of %zu (%.1f%%)\n",
              band.low, band.high, band.runs, band.sources, covered, rows.size(),
              100.0 * covered / static_cast<double>(rows.size()));
  const planck::sim::StepRatioBand& shipped_band = planck::sim::step_ratio_band({}, true);
  CHECK(shipped_band.low == doctest::Approx(band.low).epsilon(0.002));
  CHECK(shipped_band.high == doctest::Approx(band.high).epsilon(0.002));
  CHECK(shipped_band.runs == band.runs);
  CHECK(shipped_band.sources == band.sources);
  // Measured when the band was added (2026-11-27): 135 of 153 runs inside the band of the other
  // sources (88.2%); held so a change that narrows the band past what the runs support fails.
  CHECK(covered >= 133);
  int ranked = 0;
  for (const auto& [group, layouts] : groups) {
    if (layouts.size() < 4) continue;
    std::vector<double> measured, predicted;
    for (const auto& [key, v] : layouts) {
      double m = 0, p = 0;
      for (const auto& [a, b] : v) m += a, p += b;
      measured.push_back(m / static_cast<double>(v.size()));
      predicted.push_back(p / static_cast<double>(v.size()));
    }
    const double tau = kendall_tau(measured, predicted);
    std::printf("Kendall tau %-48s %+.2f over %zu layouts\n", group.c_str(), tau, layouts.size());
    // Issue 32 asks for 0.6 per model. Each group is held to what it measured when the constants
    // were fitted (kStatedTau); a group short of 0.6 says so here and in docs/simulator.md.
    const std::string name = group;  // clang 14 cannot capture a structured binding in CHECK_MESSAGE
    const auto stated = kStatedTau.find(name);
    REQUIRE_MESSAGE(stated != kStatedTau.end(), "no stated Kendall tau for " << name);
    CHECK_MESSAGE(tau >= stated->second - 1e-9, name);
    if (tau < 0.6) std::printf("  (short of issue 32's 0.6)\n");
    ++ranked;
  }
  CHECK(ranked == static_cast<int>(kStatedTau.size()));
}
