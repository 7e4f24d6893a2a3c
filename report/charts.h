#pragma once
// Inline SVG charts for `planck report` (no script, no network): memory as a stacked bar against
// the GPU's capacity, the pipeline timeline of sim/pipeline.h, and enumerate's time-vs-memory
// scatter with the Pareto front and the chosen layout marked.

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "sim/memory.h"
#include "sim/pipeline.h"

namespace planck::report {

// Params, grads, optimizer states and activations of the busiest GPU, one stacked bar, with a
// capacity line; the bar's colours are named in a legend beside it.
std::string memory_bar_svg(const sim::Memory& m);

// One lane per pipeline rank, one box per action (F / B / W), time left to right.
std::string pipeline_svg(const sim::PipelineTimeline& tl, std::int64_t pp, std::int64_t virtual_stages);

// One point of an enumerate JSON (planck-enumerate/1, docs/simulator.md).
struct LayoutPoint {
  std::string label;  // mesh[...] of the layout
  double step_time_s = 0;
  double memory_peak_bytes = 0;
  bool pareto = false;
  bool chosen = false;  // enumerate's first (best-ranked) layout
};

// The layouts of an enumerate JSON document; the error names the file and what is missing.
core::Result<std::vector<LayoutPoint>> read_enumerate(const std::string& path, const std::string& text);

// Step time (x) against peak memory per GPU (y); Pareto points joined, the chosen one ringed.
std::string scatter_svg(const std::vector<LayoutPoint>& points, double capacity_bytes);

}  // namespace planck::report
