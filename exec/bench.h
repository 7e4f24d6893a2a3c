#pragma once
// planck bench: several candidate layouts of one world run one after another on the same
// allocation, with the same warm-up, iterations and scale factor, ranked by their measured
// step time and compared with the predicted ranking (Kendall tau). "planck-bench/1".
//
// A layout's step time is the sum over its scheduled collectives of one call's time x
// calls_per_step (predicted: the prediction's time; measured: the median of the slowest rank),
// at the common scaled size: communication only, as exec runs it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "exec/report.h"

namespace planck::exec {

struct BenchLayout {
  std::string name;  // plan path, or "FILE#K" for the K-th layout of an enumeration
  ExecReport report;
  std::optional<double> predicted_step_s;  // empty when an op has no predicted time
  double measured_step_s = 0;
};

struct BenchReport {
  std::string backend;
  std::int64_t world = 0;
  int warmup = 0, iters = 0;
  std::int64_t max_bytes = 0;
  double scale_factor = 1;
  bool calibrated = false;
  std::string prediction;  // "topology FILE" or "preset NAME"
  std::vector<BenchLayout> layouts;
  // Filled by rank_layouts(): layout indices, fastest first, and Kendall's tau-a between the
  // two orders (empty with fewer than 2 layouts or without every predicted time).
  std::vector<std::size_t> measured_order, predicted_order;
  std::optional<double> kendall_tau;
  bool ok = true;  // every layout's exec checks passed
};

// Step time of one layout from its report (predicted or measured).
std::optional<double> step_seconds(const ExecReport& report, bool predicted);
// Indices of `values` sorted ascending (stable: ties keep input order).
std::vector<std::size_t> order_of(const std::vector<double>& values);
// Kendall's tau-a: (concordant - discordant) / (n(n-1)/2) over all pairs; a pair tied in
// either list counts as neither. Empty when n < 2.
std::optional<double> kendall_tau(const std::vector<double>& a, const std::vector<double>& b);

void rank_layouts(BenchReport& report);
std::string bench_json(const BenchReport& report);
std::string bench_table(const BenchReport& report);

}  // namespace planck::exec
