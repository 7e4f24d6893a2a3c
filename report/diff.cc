#include "report/diff.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <tuple>

#include "core/base/format.h"
#include "core/mesh/roles.h"

namespace planck::report {
namespace {

bool same_shape(const Communicator& a, const Communicator& b) {
  return a.dims == b.dims && a.group_size == b.group_size && a.groups == b.groups && a.nodes_spanned == b.nodes_spanned;
}

// Per role: the same dims in both plans pair up first, then what is left pairs in order
// (resized), and the rest is removed (A only) or added (B only).
std::vector<CommunicatorChange> compare_communicators(const PlanFacts& a, const PlanFacts& b) {
  std::vector<CommunicatorChange> out;
  for (const std::string& role : core::role_names()) {
    std::vector<Communicator> la, lb;
    for (const auto& c : a.communicators) if (c.role == role) la.push_back(c);
    for (const auto& c : b.communicators) if (c.role == role) lb.push_back(c);
    for (auto ia = la.begin(); ia != la.end();) {
      auto ib = std::find_if(lb.begin(), lb.end(), [&](const Communicator& c) { return c.dims == ia->dims; });
      if (ib == lb.end()) {
        ++ia;
        continue;
      }
      out.push_back({same_shape(*ia, *ib) ? Change::kUnchanged : Change::kResized, role, *ia, *ib});
      lb.erase(ib);
      ia = la.erase(ia);
    }
    const std::size_t paired = std::min(la.size(), lb.size());
    for (std::size_t i = 0; i < paired; ++i) out.push_back({Change::kResized, role, la[i], lb[i]});
    for (std::size_t i = paired; i < la.size(); ++i) out.push_back({Change::kRemoved, role, la[i], std::nullopt});
    for (std::size_t i = paired; i < lb.size(); ++i) out.push_back({Change::kAdded, role, std::nullopt, lb[i]});
  }
  return out;
}

// A finding is the same in both plans when rule, role and location agree (its message may
// quote numbers that moved).
using DiagKey = std::tuple<std::string, std::string, std::string, std::string>;
DiagKey key_of(const core::Diagnostic& d) { return {d.rule, d.role, d.pointer, d.file}; }

std::vector<DiagnosticChange> compare_diagnostics(const PlanFacts& a, const PlanFacts& b) {
  std::map<DiagKey, int> in_a, in_b;
  for (const auto& d : a.diagnostics.items()) ++in_a[key_of(d)];
  for (const auto& d : b.diagnostics.items()) ++in_b[key_of(d)];
  std::vector<DiagnosticChange> out;
  for (const auto& d : a.diagnostics.items()) {
    if (in_b.count(key_of(d)) == 0) out.push_back({false, d});
  }
  for (const auto& d : b.diagnostics.items()) {
    if (in_a.count(key_of(d)) == 0) out.push_back({true, d});
  }
  return out;
}

Metric metric(const char* key, const char* label, bool bytes, bool gates) {
  Metric m;
  m.key = key;
  m.label = label;
  m.bytes = bytes;
  m.gates = gates;
  return m;
}

std::vector<Metric> compare_metrics(const PlanFacts& a, const PlanFacts& b) {
  std::vector<Metric> ms = {metric("step_time_s", "step time", false, true),
                            metric("cross_node_bytes_per_step", "bytes per rank per step across nodes", true, true),
                            metric("intra_node_bytes_per_step", "bytes per rank per step inside a node", true, false),
                            metric("peak_memory_bytes_per_gpu", "peak memory per GPU", true, true),
                            metric("exposed_comm_time_s", "exposed communication per step", false, false)};
  if (!a.sim || !b.sim || !a.bytes || !b.bytes) return ms;
  auto values = [](const PlanFacts& f) {
    return std::vector<double>{f.sim->step.step_time_s, static_cast<double>(f.bytes->cross_node),
                               static_cast<double>(f.bytes->intra_node), static_cast<double>(f.sim->memory.peak),
                               f.sim->step.exposed_comm_time_s};
  };
  const auto va = values(a), vb = values(b);
  for (std::size_t i = 0; i < ms.size(); ++i) {
    ms[i].known = true;
    ms[i].before = va[i];
    ms[i].after = vb[i];
  }
  Metric& step = ms[0];
  step.has_band = true;
  step.before_low = a.sim->step.step_time_low_s;
  step.before_high = a.sim->step.step_time_high_s;
  step.after_low = b.sim->step.step_time_low_s;
  step.after_high = b.sim->step.step_time_high_s;
  return ms;
}

}  // namespace

const char* change_name(Change c) {
  switch (c) {
    case Change::kAdded: return "added";
    case Change::kRemoved: return "removed";
    case Change::kResized: return "resized";
    case Change::kUnchanged: return "unchanged";
  }
  return "unchanged";
}

std::optional<double> Metric::change_pct() const {
  if (before == 0) return after == 0 ? std::optional<double>(0.0) : std::nullopt;
  return (after - before) / before * 100.0;
}

bool Metric::worse_by_more_than(double threshold_pct) const {
  if (!known || !gates || after <= before) return false;
  const auto pct = change_pct();
  return !pct || *pct > threshold_pct;
}

PlanDiff diff_plans(const PlanFacts& a, const PlanFacts& b) {
  PlanDiff d;
  d.a_name = a.name;
  d.a_path = a.path;
  d.a_mesh = a.mesh;
  d.b_name = b.name;
  d.b_path = b.path;
  d.b_mesh = b.mesh;
  d.communicators = compare_communicators(a, b);
  d.metrics = compare_metrics(a, b);
  for (const PlanFacts* f : {&a, &b}) {
    if (f->sim) d.error_band = std::max(d.error_band, f->sim->error_band);
  }
  d.diagnostics = compare_diagnostics(a, b);
  if (!a.why_not.empty()) d.why_not = "A: " + a.why_not;
  else if (!b.why_not.empty()) d.why_not = "B: " + b.why_not;
  return d;
}

bool Metric::within_bands() const {
  auto inside = [](double v, double lo, double hi) { return v >= lo && v <= hi; };
  return has_band && inside(after, before_low, before_high) && inside(before, after_low, after_high);
}

std::vector<const Metric*> regressions(const PlanDiff& d, double threshold_pct, bool threshold_given) {
  std::vector<const Metric*> out;
  for (const auto& m : d.metrics) {
    if (!m.worse_by_more_than(threshold_pct)) continue;
    if (!threshold_given && m.within_bands()) continue;
    out.push_back(&m);
  }
  return out;
}

std::string describe(const Communicator& c) {
  return c.dims + ": " + std::to_string(c.groups) + (c.groups == 1 ? " group of " : " groups of ") +
         std::to_string(c.group_size) + " ranks, " +
         (c.nodes_spanned > 1 ? "spanning " + std::to_string(c.nodes_spanned) + " nodes" : std::string("inside one node"));
}

}  // namespace planck::report
