#include "report/html.h"

#include <string>

#include "core/base/format.h"

namespace planck::report {
namespace {

using html::esc;

// Inline, so the file opens anywhere (a CI artifact, a pull request attachment) with no network.
constexpr const char* kStyle = R"(
body{font-family:"DejaVu Sans",Arial,sans-serif;margin:24px auto;max-width:1200px;color:#222;line-height:1.4}
h1{font-size:22px;margin-bottom:4px}h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:28px}
section{margin-bottom:12px}.meta{color:#555}
.verdict{padding:10px 14px;border-radius:6px;font-weight:bold;font-size:16px}
.ok{background:#e5f5e0;border:1px solid #33a02c}.fail{background:#fde0dd;border:1px solid #e31a1c}
.warn{background:#fff3cd;border:1px solid #ff7f00}
table{border-collapse:collapse;margin:8px 0;font-size:13px}th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}
th{background:#f2f2f2}td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.cross td{background:#fde0dd}tr.changed td{background:#fff3cd}
.diag{border-left:4px solid #999;padding:4px 10px;margin:8px 0}.diag.error{border-color:#e31a1c}
.diag.warning{border-color:#ff7f00}.diag.note{border-color:#1f78b4}.hint{color:#333;font-style:italic}
figure{margin:8px 0;overflow-x:auto}figure svg{max-width:100%;height:auto}figcaption{color:#555;font-size:13px}
.note{color:#555;font-size:13px}code{background:#f4f4f4;padding:0 3px}
)";

// A Graphviz SVG document without its XML prolog and DOCTYPE, so it can sit inside HTML.
std::string inline_svg(const std::string& doc) {
  const auto at = doc.find("<svg");
  return at == std::string::npos ? std::string() : doc.substr(at);
}

std::string figure(const std::string& svg_doc, const std::string& caption) {
  return "<figure>" + inline_svg(svg_doc) + "<figcaption>" + esc(caption) + "</figcaption></figure>";
}

std::string verdict_section(const PlanFacts& f) {
  const int errors = f.diagnostics.count(core::Severity::kError);
  const int warnings = f.diagnostics.count(core::Severity::kWarning);
  std::string cls = errors > 0 ? "fail" : (warnings > 0 ? "warn" : "ok");
  std::string text = errors > 0 ? "FAILS verify: " + std::to_string(errors) + (errors == 1 ? " error" : " errors")
                                : "Passes verify";
  if (warnings > 0) text += (errors > 0 ? ", " : ", with ") + std::to_string(warnings) + (warnings == 1 ? " warning" : " warnings");
  return "<section id=\"verdict\"><h2>Verdict</h2><div class=\"verdict " + cls + "\">" + esc(text) + "</div></section>";
}

std::string diagnostics_section(const PlanFacts& f) {
  std::string s = "<section id=\"diagnostics\"><h2>Diagnostics</h2>";
  if (f.diagnostics.items().empty()) s += "<p>No diagnostics: every rule verify runs passed.</p>";
  for (const auto& d : f.diagnostics.items()) {
    const char* sev = core::severity_name(d.severity);
    s += std::string("<div class=\"diag ") + sev + "\"><b>" + sev + "</b> <code>" + esc(d.rule) + "</code>";
    if (d.line > 0) s += " at line " + std::to_string(d.line);
    if (!d.file.empty()) s += " in " + esc(d.file);
    s += "<br>" + esc(d.message);
    if (!d.hint.empty()) s += "<br><span class=\"hint\">fix: " + esc(d.hint) + "</span>";
    s += "</div>";
  }
  return s + "</section>";
}

std::string diagrams_section(const ReportInput& in) {
  return "<section id=\"diagrams\"><h2>Mesh and communicators</h2>" +
         figure(in.mesh_svg, "The mesh: nodes as boxes, GPUs by rank and coordinates, filled by group.") +
         figure(in.comm_svg,
                "Communicators: each group as a ring in rank order; hops inside a node solid blue, across nodes "
                "dashed red; bytes per hop per step from the lowered schedule.") +
         "</section>";
}

std::string memory_section(const PlanFacts& f) {
  std::string s = "<section id=\"memory\"><h2>Memory per GPU</h2>";
  if (!f.sim) return s + "<p>Not simulated: " + esc(f.why_not) + "</p></section>";
  const sim::Memory& m = f.sim->memory;
  s += "<p>Busiest GPU: peak <b>" + core::format_bytes(m.peak) + "</b> of " + core::format_bytes(m.capacity) +
       " (allocated " + core::format_bytes(m.peak_allocated) + ", reserved by the caching allocator " +
       core::format_bytes(m.peak_reserved) + ", CUDA context and NCCL " + core::format_bytes(m.cuda_context + m.nccl_buffers) +
       ")" + (sim::memory_exceeds(m) ? " &mdash; <b>does not fit</b>" : "") + ".</p>";
  return s + memory_bar_svg(m) + "</section>";
}

std::string pipeline_section(const ReportInput& in) {
  std::string s = "<section id=\"pipeline\"><h2>Pipeline timeline</h2>";
  if (!in.pipeline) return s + "<p>" + esc(in.pipeline_note) + "</p></section>";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f%%", in.pipeline->bubble_fraction * 100);
  s += "<p>One step's forward and backward actions per pipeline rank (performance model, equal stages): makespan " +
       html::seconds(in.pipeline->makespan_s) + ", bubble " + buf + ". Hover a box for its micro-batch and times.</p>";
  return s + pipeline_svg(*in.pipeline, in.pp, in.virtual_stages) + "</section>";
}

std::string enumerate_section(const ReportInput& in) {
  std::string s = "<section id=\"enumerate\"><h2>Layouts: step time against memory</h2><p>" +
                  std::to_string(in.layouts->size()) + " layouts from " + esc(in.enumerate_path) +
                  "; Pareto front in green, the chosen (best-ranked) layout ringed in red.</p>";
  const double capacity = in.facts->sim ? static_cast<double>(in.facts->sim->memory.capacity) : 0;
  return s + scatter_svg(*in.layouts, capacity) + "</section>";
}

std::string observed_section(const ReportInput& in) {
  std::string files;
  for (const auto& f : in.observed_files) files += (files.empty() ? "" : ", ") + f;
  return "<section id=\"observed\"><h2>Observed against expected</h2>" +
         figure(in.observed_svg, "Communicators the run created (" + files + ") against the plan's.") + "</section>";
}

}  // namespace

std::string report_html(const ReportInput& in) {
  const PlanFacts& f = *in.facts;
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>planck report: " +
                  esc(f.name) + "</title><style>" + kStyle + "</style></head><body>\n";
  s += "<h1>planck report: " + esc(f.name) + "</h1><p class=\"meta\">" + esc(f.path) + " &middot; " + esc(f.mesh) +
       " &middot; " + std::to_string(f.nodes) + (f.nodes == 1 ? " node" : " nodes") + " &times; " +
       std::to_string(f.gpus_per_node) + " GPUs</p>\n";
  s += verdict_section(f) + "\n" + diagnostics_section(f) + "\n";
  if (in.baseline) s += html::baseline_section(*in.baseline, in.threshold_pct) + "\n";
  s += diagrams_section(in) + "\n";
  if (!in.observed_svg.empty()) s += observed_section(in) + "\n";
  s += html::schedule_section(f) + "\n" + memory_section(f) + "\n" + pipeline_section(in) + "\n";
  if (in.layouts) s += enumerate_section(in) + "\n";
  return s + "</body></html>\n";
}

}  // namespace planck::report
