// The schedule and baseline sections of `planck report` (report/html.h).

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>

#include "core/base/format.h"
#include "report/html.h"
#include "sim/cost.h"
#include "sim/topology.h"
#include "viz/dot_graph.h"

namespace planck::report::html {
namespace {

std::string td(const std::string& s, bool num = false) {
  return std::string(num ? "<td class=\"num\">" : "<td>") + esc(s) + "</td>";
}

std::string bytes(std::int64_t b) { return core::format_bytes(b); }

}  // namespace

std::string esc(const std::string& s) { return viz::html_escape(s); }

std::string seconds(double s) { return format_seconds(s); }

std::string schedule_section(const PlanFacts& f) {
  std::string s = "<section id=\"schedule\"><h2>Per-step schedule</h2>";
  if (!f.sim || !f.bytes) return s + "<p>Not simulated: " + esc(f.why_not) + "</p></section>";
  const sim::SimResult& r = *f.sim;
  const std::string band =
      r.error_band > 0 ? " (+-" + std::to_string(std::lround(100 * r.error_band)) + "% measured MoE error)" : "";
  s += "<p>Step time <b>" + seconds(r.step.step_time_s) + "</b>, likely " + seconds(r.step.step_time_low_s) + "-" +
       seconds(r.step.step_time_high_s) + " (" + esc(r.step.interval_basis) + ")" + band + ": compute " +
       seconds(r.step.compute_time_s) +
       ", exposed communication " + seconds(r.step.exposed_comm_time_s) + " (of " + seconds(r.step.comm_time_s) +
       " communication). " + std::to_string(r.schedule.micro_batches) + " micro-batches per step.</p>";
  // Bytes per link class from core::step_bytes (the sums verify and diff use); time per link
  // class summed from the timed collectives.
  std::map<std::string, double> time_by_link;
  for (const auto& c : r.collectives) time_by_link[sim::link_name(c.link)] += c.time_s;
  s += "<table><tr><th>link class</th><th>bytes per rank per step</th></tr>";
  s += "<tr>" + td("inside a node") + td(bytes(f.bytes->intra_node), true) + "</tr>";
  s += "<tr class=\"cross\">" + td("across nodes") + td(bytes(f.bytes->cross_node), true) + "</tr>";
  s += "<tr>" + td("total") + td(bytes(f.bytes->total), true) + "</tr></table>";
  s += "<table><tr><th>link</th><th>time per step</th></tr>";
  for (const auto& [link, t] : time_by_link) s += "<tr>" + td(link) + td(seconds(t), true) + "</tr>";
  s += "</table>";
  s += "<table><tr><th>role</th><th>dims</th><th>collective</th><th>phase</th><th>group</th><th>bytes per call</th>"
       "<th>calls per step</th><th>bytes sent per rank</th><th>link</th><th>algorithm</th><th>time</th>"
       "<th>overlapped</th></tr>";
  for (const auto& c : r.collectives) {
    const auto& e = c.entry;
    s += std::string(c.link == sim::LinkClass::kNet ? "<tr class=\"cross\">" : "<tr>") + td(e.role) +
         td(core::join(e.dims, ",")) + td(core::op_name(e.op)) + td(core::phase_name(e.phase)) +
         td(std::to_string(e.group_size), true) + td(bytes(e.bytes_per_call), true) +
         td(std::to_string(e.calls_per_step), true) + td(bytes(c.bytes_sent_per_rank), true) +
         td(sim::link_name(c.link)) + td(sim::algorithm_name(c.algorithm)) + td(seconds(c.time_s), true) +
         td(c.overlapped ? "yes" : "no") + "</tr>";
  }
  s += "</table>";
  for (const auto& n : r.notes) s += "<p class=\"note\">" + esc(n) + "</p>";
  return s + "</section>";
}

std::string baseline_section(const PlanDiff& d, double threshold_pct) {
  std::string s = "<section id=\"baseline\"><h2>Change from the baseline</h2><p>Baseline <b>" + esc(d.a_name) +
                  "</b> (" + esc(d.a_mesh) + ") &rarr; this plan <b>" + esc(d.b_name) + "</b> (" + esc(d.b_mesh) +
                  ").</p><table><tr><th>role</th><th>change</th><th>baseline</th><th>this plan</th></tr>";
  for (const auto& c : d.communicators) {
    s += std::string(c.change == Change::kUnchanged ? "<tr>" : "<tr class=\"changed\">") + td(c.role) +
         td(change_name(c.change)) + td(c.before ? describe(*c.before) : "-") + td(c.after ? describe(*c.after) : "-") +
         "</tr>";
  }
  s += "</table>";
  if (!d.why_not.empty()) s += "<p>Not simulated: " + esc(d.why_not) + "</p>";
  s += "<table><tr><th>per step, busiest rank</th><th>baseline</th><th>this plan</th><th>change</th></tr>";
  for (const auto& m : d.metrics) {
    if (!m.known) continue;
    const bool worse = m.worse_by_more_than(threshold_pct);
    s += std::string(worse ? "<tr class=\"cross\">" : "<tr>") + td(m.label) + td(m.value_text(m.before), true) +
         td(m.value_text(m.after), true) + td(m.change_text() + (worse ? " (regression)" : ""), true) + "</tr>";
  }
  s += "</table><ul>";
  if (d.diagnostics.empty()) s += "<li>No diagnostic gained or lost.</li>";
  for (const auto& c : d.diagnostics) {
    s += std::string("<li>") + (c.gained ? "gained " : "lost ") + core::severity_name(c.diagnostic.severity) +
         " <code>" + esc(c.diagnostic.rule) + "</code>: " + esc(c.diagnostic.message) + "</li>";
  }
  return s + "</ul></section>";
}

}  // namespace planck::report::html
