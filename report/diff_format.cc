// planck diff's text and "planck-diff/1" JSON (docs/diff.md).

#include <cmath>
#include <cstdint>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "core/base/format.h"
#include "report/diff.h"

namespace planck::report {
namespace {

// Bytes as exact integers (they are sums of integers; far below 2^53 in any real plan).
nlohmann::json number(const Metric& m, double v) {
  if (!std::isfinite(v)) return nullptr;
  if (m.bytes) return static_cast<std::int64_t>(std::llround(v));
  return v;
}

nlohmann::json communicator_json(const std::optional<Communicator>& c) {
  if (!c) return nullptr;
  return {{"dims", c->dims}, {"group_size", c->group_size}, {"groups", c->groups}, {"nodes_spanned", c->nodes_spanned}};
}

}  // namespace

std::string format_seconds(double s) {
  if (!std::isfinite(s)) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, s < 1 ? "%.3g ms" : "%.3g s", s < 1 ? s * 1e3 : s);
  return buf;
}

std::string Metric::value_text(double v) const {
  return bytes ? core::format_bytes(static_cast<std::int64_t>(std::llround(v))) : format_seconds(v);
}

std::string Metric::change_text() const {
  const auto pct = change_pct();
  if (!pct) return "new";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", *pct);
  return buf;
}

std::string diff_to_text(const PlanDiff& d, double threshold_pct, bool threshold_given) {
  std::string out = "planck diff: A = " + d.a_name + " (" + d.a_mesh + ")\n             B = " + d.b_name + " (" +
                    d.b_mesh + ")\n\ncommunicators (per role):\n";
  int changed = 0;
  for (const auto& c : d.communicators) {
    if (c.change == Change::kUnchanged) continue;
    ++changed;
    char head[64];
    std::snprintf(head, sizeof head, "  %-10s %-8s ", c.role.c_str(), change_name(c.change));
    out += head;
    if (c.before && c.after) out += describe(*c.before) + "\n                        -> " + describe(*c.after) + "\n";
    else out += describe(c.before ? *c.before : *c.after) + "\n";
  }
  if (changed == 0) out += "  no change\n";
  for (const auto& c : d.communicators) {
    if (c.change == Change::kUnchanged) out += "  " + c.role + " unchanged (" + describe(*c.after) + ")\n";
  }
  out += "\nper step (busiest rank), A -> B:\n";
  if (!d.why_not.empty()) out += "  not simulated: " + d.why_not + "\n";
  for (const auto& m : d.metrics) {
    if (!m.known) continue;
    char line[256];
    std::snprintf(line, sizeof line, "  %-40s %10s -> %-10s %s\n", m.label.c_str(), m.value_text(m.before).c_str(),
                  m.value_text(m.after).c_str(), m.change_text().c_str());
    out += line;
    if (m.has_band) {
      out += "  " + std::string(40, ' ') + " likely " + m.value_text(m.before_low) + "-" + m.value_text(m.before_high) +
             " -> " + m.value_text(m.after_low) + "-" + m.value_text(m.after_high) +
             (m.within_bands() ? " (each inside the other's interval)" : "") + "\n";
    }
    if (m.key == "cross_node_bytes_per_step" && m.after != m.before) {
      const auto delta = static_cast<std::int64_t>(std::llround(m.after - m.before));
      out += "  " + std::string(delta > 0 ? "extra" : "fewer") + " cross-node bytes per rank per step: " +
             std::to_string(delta > 0 ? delta : -delta) + " B (" + core::format_bytes(delta > 0 ? delta : -delta) + ")\n";
    }
  }
  if (d.error_band > 0) {
    out += "  MoE step times carry a measured +-" + std::to_string(std::lround(100 * d.error_band)) +
           "% error (docs/simulator.md \"MoE validation\"); a smaller change may be within it\n";
  }
  out += "\ndiagnostics:\n";
  if (d.diagnostics.empty()) out += "  none gained or lost\n";
  for (const auto& c : d.diagnostics) {
    out += std::string(c.gained ? "  + " : "  - ") + core::severity_name(c.diagnostic.severity) + " [" +
           c.diagnostic.rule + "] " + c.diagnostic.message + "\n";
  }
  const auto worse = regressions(d, threshold_pct, threshold_given);
  char thr[32];
  std::snprintf(thr, sizeof thr, "%g%%", threshold_pct);
  out += "\n";
  for (const auto& m : d.metrics) {
    if (!threshold_given && m.within_bands() && m.worse_by_more_than(threshold_pct)) {
      out += m.label + " " + m.change_text() + " is within both stated intervals: not called a regression (give "
             "--threshold to gate on it)\n";
    }
  }
  if (worse.empty()) out += std::string("no regression above ") + thr + "\n";
  for (const Metric* m : worse) out += "regression: " + m->label + " " + m->change_text() + " (threshold " + thr + ")\n";
  return out;
}

std::string diff_to_json(const PlanDiff& d, double threshold_pct, bool threshold_given) {
  nlohmann::json j;
  j["format"] = "planck-diff/1";
  j["a"] = {{"path", d.a_path}, {"name", d.a_name}, {"mesh", d.a_mesh}};
  j["b"] = {{"path", d.b_path}, {"name", d.b_name}, {"mesh", d.b_mesh}};
  nlohmann::json comms = nlohmann::json::array();
  for (const auto& c : d.communicators) {
    comms.push_back({{"role", c.role}, {"change", change_name(c.change)}, {"a", communicator_json(c.before)},
                     {"b", communicator_json(c.after)}});
  }
  j["communicators"] = comms;
  nlohmann::json metrics = nlohmann::json::object();
  for (const auto& m : d.metrics) {
    if (!m.known) {
      metrics[m.key] = nullptr;
      continue;
    }
    const auto pct = m.change_pct();
    metrics[m.key] = {{"a", number(m, m.before)}, {"b", number(m, m.after)}, {"delta", number(m, m.after - m.before)},
                      {"change_pct", pct ? nlohmann::json(*pct) : nlohmann::json(nullptr)}};
    if (m.has_band) {
      metrics[m.key]["a_low"] = m.before_low;
      metrics[m.key]["a_high"] = m.before_high;
      metrics[m.key]["b_low"] = m.after_low;
      metrics[m.key]["b_high"] = m.after_high;
      metrics[m.key]["within_intervals"] = m.within_bands();
    }
  }
  j["metrics"] = metrics;
  if (!d.why_not.empty()) j["not_simulated"] = d.why_not;
  if (d.error_band > 0) j["error_band"] = d.error_band;
  nlohmann::json gained = nlohmann::json::array(), lost = nlohmann::json::array();
  for (const auto& c : d.diagnostics) {
    (c.gained ? gained : lost)
        .push_back({{"rule", c.diagnostic.rule}, {"severity", core::severity_name(c.diagnostic.severity)},
                    {"role", c.diagnostic.role}, {"message", c.diagnostic.message}});
  }
  j["diagnostics"] = {{"gained", gained}, {"lost", lost}};
  j["threshold_pct"] = threshold_pct;
  nlohmann::json reg = nlohmann::json::array();
  for (const Metric* m : regressions(d, threshold_pct, threshold_given)) reg.push_back(m->key);
  j["regressions"] = reg;
  return j.dump(2) + "\n";
}

}  // namespace planck::report
