#pragma once
// `planck report`: one self-contained HTML page for one plan (inline CSS and SVG, no script, no
// network). Sections, each an element with a fixed id (docs/report.md): verdict, diagnostics,
// diagrams, schedule, memory, pipeline, and when given: observed, enumerate, baseline.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/charts.h"
#include "report/diff.h"
#include "report/plan_facts.h"
#include "sim/pipeline.h"

namespace planck::report {

struct ReportInput {
  const PlanFacts* facts = nullptr;  // required
  std::string mesh_svg, comm_svg;    // viz diagrams (SVG documents; the XML prolog is dropped)
  std::string observed_svg;          // --observed: the observed-vs-expected diagram
  std::vector<std::string> observed_files;
  std::optional<sim::PipelineTimeline> pipeline;  // pp > 1 only
  std::int64_t pp = 1, virtual_stages = 1;
  std::string pipeline_note;                      // why there is no timeline
  const PlanDiff* baseline = nullptr;             // --baseline: baseline -> this plan
  double threshold_pct = 5;
  const std::vector<LayoutPoint>* layouts = nullptr;  // --enumerate
  std::string enumerate_path;
};

std::string report_html(const ReportInput& in);

// Pieces of the page (report/html_sections.cc).
namespace html {
std::string esc(const std::string& s);
std::string seconds(double s);
std::string schedule_section(const PlanFacts& f);
std::string baseline_section(const PlanDiff& d, double threshold_pct);
}  // namespace html

}  // namespace planck::report
