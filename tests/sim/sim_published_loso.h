#pragma once
// Leave-one-source-out validation of the step-time model on the published runs
// (tests/data/published/validation.csv, written by scripts/published_cases.py).
//
// The fitted constants are the GEMM efficiency ceilings: gemm_max per GPU generation (A100 rows
// for the a100 presets, H100 rows for the Hopper parts) on the BF16/FP16 rows, fp8_gemm_max on the
// rows with FP8 linears (with the preset's BF16 curve). For each source S, each ceiling is the
// value minimising the mean over the *other* sources of their mean absolute relative step-time
// error; S's rows are then predicted with it. Step time is evaluated once per row on a grid of the
// ceiling and interpolated (linearly in 1 / ceiling, the way compute time scales), so the folds
// cost no further simulation. scripts/fit_compute.py --loso does the same with `planck simulate`.

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/plan/plan.h"
#include "sim/simulate.h"

namespace planck::sim::published {

using Row = std::map<std::string, std::string>;

struct Case {
  Row row;
  std::string id, source, stack, family;  // family: the fitted ceiling it reads ("a100", "h100", "h100-fp8")
  double published_s = 0;
  std::vector<double> grid_s;  // predicted step at each point of kGrid
  double loso_s = 0;           // predicted with the ceiling fitted without its source
  double loso_ceiling = 0;
};

// The ceiling grid and the figures docs/simulator.md states (checked by sim_published_step_times).
inline constexpr double kGridLo = 0.35, kGridHi = 0.95, kGridStep = 0.025;
// 2026-11-26: 314 runs of 12 sources; docs/simulator.md "Validation against published runs".
inline constexpr double kStatedRunMean = 0.090, kStatedSourceMean = 0.107, kStatedWorstSource = 0.188;
// 2026-11-27: 364 runs of 18 sources, the 314 above and the 50 no fit reads (unfitted_cases()).
inline constexpr double kStatedCoverage = 0.876;  // of the held-out runs by their interval
// A stack's own band needs this many runs (else the band over every stack): one run, or three,
// make no percentile (sim/uncertainty.cc applies the same rule).
inline constexpr int kMinBandRuns = 10;

std::vector<Row> read_cases();
// Rows of a CSV file in tests/data/published/, by header name.
std::vector<Row> read_published(const std::string& file);
// The planck/1 model object of a row (layers ... vocab, tied; gated_mlp, biases, layer_norm and
// position_embeddings where the file has those columns).
nlohmann::json model_json(const Row& r);
// The planck/1 plan of a row, with `ceiling` for its family's fitted constant (0 = the preset's).
std::string plan_json(const Row& r, double ceiling);
// A row's step with the shipped presets (no ceiling fitted to it).
double shipped_step(const Row& r);
// Every row predicted leave-one-source-out.
std::vector<Case> loso_predictions(const std::vector<Row>& rows);
// Published runs no fit reads, predicted with the shipped presets (their residuals are out of
// sample as they stand): tests/data/published/heldout (one plan per run) and the Blackwell MLPerf
// v5.1 rows of validation_blackwell.csv, as source "mlperf-v5.1-blackwell". grid_s is empty,
// family "" (no ceiling is fitted to them); loso_s is the shipped prediction.
std::vector<Case> unfitted_cases();
// A held-out plan of tests/data/published/heldout/plans, simulated with the shipped presets.
struct HeldoutRun {
  core::Plan plan;
  SimResult sim;
};
HeldoutRun simulate_heldout(const std::string& id);
// The ceiling minimising the mean over sources of the mean |relative error| of `cases` (those of
// one family), skipping `held_out`.
double fit_ceiling(const std::vector<const Case*>& cases, const std::string& held_out);
// Step of `c` at `ceiling`, interpolated on its grid.
double step_at(const Case& c, double ceiling);

// Published / leave-one-source-out predicted step at the 5th and 95th percentiles over the cases
// of `stack` ("any": all), skipping source `exclude`, each source's runs weighted 1 / its count
// (sim/uncertainty.cc holds these per stack). runs = 0 when no case qualifies.
struct Band {
  double low = 1, high = 1;
  int runs = 0, sources = 0;
};
Band ratio_band(const std::vector<Case>& cases, const std::string& stack, const std::string& exclude = "");

}  // namespace planck::sim::published
