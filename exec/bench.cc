#include "exec/bench.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>
#include <tuple>

#include <nlohmann/json.hpp>

namespace planck::exec {
namespace {

using nlohmann::ordered_json;

// Ops are paired across layouts by role, op, phase and description.
using OpKey = std::tuple<std::string, std::string, std::string, std::string>;
OpKey key_of(const OpResult& o) { return {o.role, core::op_name(o.op), core::phase_name(o.phase), o.what}; }

ordered_json number_or_null(const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(nullptr); }

// Per paired op and layout: one call's predicted and measured time x calls_per_step, summed
// over the layout's ops with that key.
struct OpTimes {
  std::optional<double> predicted;
  double measured = 0;
  std::int64_t calls = 0;
};

std::map<OpKey, std::vector<std::optional<OpTimes>>> paired_ops(const BenchReport& r) {
  std::map<OpKey, std::vector<std::optional<OpTimes>>> out;
  for (std::size_t i = 0; i < r.layouts.size(); ++i) {
    for (const OpResult& o : r.layouts[i].report.ops) {
      auto& row = out[key_of(o)];
      row.resize(r.layouts.size());
      OpTimes& t = row[i] ? *row[i] : row[i].emplace();
      const auto calls = static_cast<double>(o.calls_per_step);
      if (o.predicted_time_s) t.predicted = t.predicted.value_or(0) + *o.predicted_time_s * calls;
      t.measured += o.measured_time_s.median * calls;
      t.calls += o.calls_per_step;
    }
  }
  return out;
}

}  // namespace

std::optional<double> step_seconds(const ExecReport& report, bool predicted) {
  double total = 0;
  for (const OpResult& o : report.ops) {
    const double calls = static_cast<double>(o.calls_per_step);
    if (predicted) {
      if (!o.predicted_time_s) return std::nullopt;
      total += *o.predicted_time_s * calls;
    } else {
      total += o.measured_time_s.median * calls;
    }
  }
  return total;
}

std::vector<std::size_t> order_of(const std::vector<double>& values) {
  std::vector<std::size_t> idx(values.size());
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  return idx;
}

std::optional<double> kendall_tau(const std::vector<double>& a, const std::vector<double>& b) {
  const std::size_t n = std::min(a.size(), b.size());
  if (n < 2) return std::nullopt;
  long long score = 0;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      const double x = a[i] - a[j], y = b[i] - b[j];
      if (x * y > 0) ++score;
      if (x * y < 0) --score;
    }
  }
  return static_cast<double>(score) / (static_cast<double>(n) * static_cast<double>(n - 1) / 2);
}

void rank_layouts(BenchReport& r) {
  std::vector<double> measured, predicted;
  bool all_predicted = true;
  r.ok = true;
  for (BenchLayout& l : r.layouts) {
    l.predicted_step_s = step_seconds(l.report, true);
    l.measured_step_s = *step_seconds(l.report, false);
    measured.push_back(l.measured_step_s);
    predicted.push_back(l.predicted_step_s.value_or(0));
    all_predicted = all_predicted && l.predicted_step_s.has_value();
    r.ok = r.ok && l.report.ok;
  }
  r.measured_order = order_of(measured);
  r.predicted_order.clear();
  r.kendall_tau.reset();
  if (all_predicted) {
    r.predicted_order = order_of(predicted);
    r.kendall_tau = kendall_tau(predicted, measured);
  }
}

std::string bench_json(const BenchReport& r) {
  ordered_json j;
  j["format"] = "planck-bench/1";
  j["backend"] = r.backend;
  j["world"] = r.world;
  j["run"] = {{"warmup", r.warmup}, {"iters", r.iters}};
  j["scale"] = {{"max_bytes", r.max_bytes}, {"factor", r.scale_factor}};
  j["prediction"] = {{"basis", r.prediction}, {"calibrated", r.calibrated}};
  ordered_json layouts = ordered_json::array();
  for (std::size_t i = 0; i < r.layouts.size(); ++i) {
    const BenchLayout& l = r.layouts[i];
    const auto m_rank = std::find(r.measured_order.begin(), r.measured_order.end(), i) - r.measured_order.begin();
    ordered_json e;
    e["name"] = l.name;
    e["predicted_step_s"] = number_or_null(l.predicted_step_s);
    e["measured_step_s"] = l.measured_step_s;
    e["measured_rank"] = m_rank + 1;
    if (!r.predicted_order.empty()) {
      e["predicted_rank"] = std::find(r.predicted_order.begin(), r.predicted_order.end(), i) - r.predicted_order.begin() + 1;
    }
    e["ok"] = l.report.ok;
    layouts.push_back(std::move(e));
  }
  j["layouts"] = layouts;
  ordered_json ops = ordered_json::array();
  for (const auto& [key, row] : paired_ops(r)) {
    ordered_json per = ordered_json::array();
    for (const auto& t : row) {
      per.push_back(t ? ordered_json{{"calls_per_step", t->calls},
                                     {"predicted_s", number_or_null(t->predicted)},
                                     {"measured_s", t->measured}}
                      : ordered_json(nullptr));
    }
    while (per.size() < r.layouts.size()) per.push_back(nullptr);
    ops.push_back({{"role", std::get<0>(key)}, {"op", std::get<1>(key)}, {"phase", std::get<2>(key)},
                   {"what", std::get<3>(key)}, {"layouts", per}});
  }
  j["ops"] = ops;
  ordered_json order = ordered_json::array();
  for (std::size_t i : r.measured_order) order.push_back(r.layouts[i].name);
  j["summary"] = {{"ok", r.ok}, {"measured_ranking", order}, {"kendall_tau", number_or_null(r.kendall_tau)}};
  return j.dump(2) + "\n";
}

std::string bench_table(const BenchReport& r) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "# planck bench: %zu layouts, backend %s, world %lld, warmup %d, iters %d, scale %.6g\n",
                r.layouts.size(), r.backend.c_str(), static_cast<long long>(r.world), r.warmup, r.iters,
                r.scale_factor);
  out += line;
  out += "# prediction: " + r.prediction + (r.calibrated ? "" : " (uncalibrated: the ranking by prediction is the preset's)") + "\n";
  for (const auto& [key, row] : paired_ops(r)) {
    out += "# op " + std::get<0>(key) + " " + std::get<1>(key) + " " + std::get<2>(key) + " (" + std::get<3>(key) + "):";
    for (std::size_t i = 0; i < r.layouts.size(); ++i) {
      if (i >= row.size() || !row[i]) {
        out += "  [" + std::to_string(i + 1) + "] -";
        continue;
      }
      std::snprintf(line, sizeof line, "  [%zu] pred %s us meas %.1f us", i + 1,
                    row[i]->predicted ? std::to_string(*row[i]->predicted * 1e6).c_str() : "-", row[i]->measured * 1e6);
      out += line;
    }
    out += "\n";
  }
  out += "#\n#  rank  layout                                              pred_step(ms)  meas_step(ms)  pred_rank  checks\n";
  for (std::size_t k = 0; k < r.measured_order.size(); ++k) {
    const std::size_t i = r.measured_order[k];
    const BenchLayout& l = r.layouts[i];
    std::string pred_rank = "-";
    if (!r.predicted_order.empty()) {
      pred_rank = std::to_string(std::find(r.predicted_order.begin(), r.predicted_order.end(), i) - r.predicted_order.begin() + 1);
    }
    std::snprintf(line, sizeof line, "   %4zu  %-50s %14s %14.3f %10s  %s\n", k + 1, l.name.c_str(),
                  l.predicted_step_s ? std::to_string(*l.predicted_step_s * 1e3).c_str() : "-", l.measured_step_s * 1e3,
                  pred_rank.c_str(), l.report.ok ? "ok" : "FAILED");
    out += line;
  }
  out += "# Kendall tau (predicted vs measured order): " +
         (r.kendall_tau ? std::to_string(*r.kendall_tau) : std::string("- (needs 2 layouts with predicted times)")) + "\n";
  return out;
}

}  // namespace planck::exec
