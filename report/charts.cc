#include "report/charts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "core/base/json_scan.h"
#include "core/base/format.h"
#include "viz/dot_graph.h"

namespace planck::report {
namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string rect(double x, double y, double w, double h, const std::string& fill, const std::string& title = {}) {
  std::string s = "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(std::max(w, 0.0)) + "\" height=\"" +
                  num(h) + "\" fill=\"" + fill + "\" stroke=\"#333\" stroke-width=\"0.5\">";
  if (!title.empty()) s += "<title>" + viz::html_escape(title) + "</title>";
  return s + "</rect>";
}

std::string text(double x, double y, const std::string& t, const char* anchor = "start") {
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" text-anchor=\"" + anchor + "\">" + viz::html_escape(t) +
         "</text>";
}

std::string svg_open(int w, int h, const std::string& label) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"" + std::to_string(w) + "\" height=\"" +
         std::to_string(h) + "\" viewBox=\"0 0 " + std::to_string(w) + " " + std::to_string(h) +
         "\" role=\"img\" aria-label=\"" + viz::html_escape(label) + "\" font-family=\"DejaVu Sans, sans-serif\" "
         "font-size=\"12\">";
}

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, s < 1 ? "%.0f ms" : "%.2f s", s < 1 ? s * 1e3 : s);
  return buf;
}

}  // namespace

std::string memory_bar_svg(const sim::Memory& m) {
  const int w = 720, h = 130, x0 = 10, bar_w = 560, y0 = 20, bar_h = 34;
  const double top = static_cast<double>(std::max({m.peak, m.capacity, std::int64_t{1}}));
  const double scale = bar_w / top;
  struct Part {
    const char* name;
    std::int64_t bytes;
    const char* fill;
  } parts[] = {{"parameters", m.params, "#1f78b4"},
               {"gradients", m.grads, "#33a02c"},
               {"optimizer states", m.optimizer, "#ff7f00"},
               {"activations", m.activations, "#6a3d9a"},
               {"allocator (workspaces, caches)", m.workspaces + m.gather_pool + m.fragmentation, "#b15928"},
               {"CUDA context + NCCL", m.cuda_context + m.nccl_buffers, "#999999"}};
  std::string s = svg_open(w, h, "memory per GPU");
  double x = x0;
  int row = 0;
  for (const Part& p : parts) {
    const double pw = static_cast<double>(p.bytes) * scale;
    s += rect(x, y0, pw, bar_h, p.fill, std::string(p.name) + ": " + core::format_bytes(p.bytes));
    x += pw;
    // Legend in two columns under the bar, never on it.
    const double lx = x0 + (row % 2) * 280.0, ly = y0 + bar_h + 22.0 + (row / 2) * 18.0;
    s += rect(lx, ly - 10, 12, 12, p.fill) + text(lx + 18, ly, std::string(p.name) + " " + core::format_bytes(p.bytes));
    ++row;
  }
  if (m.capacity > 0) {
    const double cx = x0 + static_cast<double>(m.capacity) * scale;
    s += "<line x1=\"" + num(cx) + "\" y1=\"" + num(y0 - 8) + "\" x2=\"" + num(cx) + "\" y2=\"" + num(y0 + bar_h + 6) +
         "\" stroke=\"#e31a1c\" stroke-width=\"2\"/>";
  }
  s += text(x0, h - 4, "peak " + core::format_bytes(m.peak) + " (the bar), capacity " + core::format_bytes(m.capacity) +
                          " (red line)");
  return s + "</svg>";
}

std::string pipeline_svg(const sim::PipelineTimeline& tl, std::int64_t pp, std::int64_t virtual_stages) {
  const int left = 70, lane_h = 26, width = 900, plot_w = width - left - 20;
  const int h = static_cast<int>(pp) * lane_h + 60;
  const double scale = tl.makespan_s > 0 ? plot_w / tl.makespan_s : 0;
  std::string s = svg_open(width, h, "pipeline timeline");
  for (std::int64_t r = 0; r < pp; ++r) s += text(left - 8, 20 + r * lane_h + 17, "rank " + std::to_string(r), "end");
  for (const auto& a : tl.actions) {
    const char* fill = a.op == 'F' ? "#a6cee3" : (a.op == 'B' ? "#fdbf6f" : "#b2df8a");
    const double x = left + a.start_s * scale, bw = (a.end_s - a.start_s) * scale;
    const double y = 20 + static_cast<double>(a.rank) * lane_h;
    std::string name = std::string(1, a.op) + " micro-batch " + std::to_string(a.micro_batch) + ", stage " +
                       std::to_string(a.stage) + ": " + seconds(a.start_s) + " to " + seconds(a.end_s);
    s += rect(x, y, bw, lane_h - 4, fill, name);
    // The micro-batch number only where it fits inside its box.
    if (bw >= 14) s += text(x + bw / 2, y + 15, std::to_string(a.micro_batch), "middle");
  }
  const double axis_y = 20 + static_cast<double>(pp) * lane_h + 14;
  s += text(left, axis_y, "0") + text(left + plot_w, axis_y, seconds(tl.makespan_s), "end");
  s += text(left + plot_w / 2.0, axis_y + 16,
            "F forward (blue), B backward (orange), W weight gradient (green); " + std::to_string(virtual_stages) +
                (virtual_stages == 1 ? " stage" : " stages") + " per rank",
            "middle");
  return s + "</svg>";
}

core::Result<std::vector<LayoutPoint>> read_enumerate(const std::string& path, const std::string& body) {
  if (auto st = core::check_json_nesting(body, path); !st) return st;
  const auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return core::Status::error(path + ": not JSON; pass the output of planck enumerate --format json");
  if (j.value("format", "") != "planck-enumerate/1") {
    return core::Status::error(path + ": \"format\" is not \"planck-enumerate/1\"; pass planck enumerate --format json output");
  }
  if (!j.contains("layouts") || !j["layouts"].is_array()) return core::Status::error(path + ": no \"layouts\" array");
  std::vector<LayoutPoint> out;
  std::size_t i = 0;
  for (const auto& l : j["layouts"]) {
    const std::string where = path + ": layouts[" + std::to_string(i) + "]";
    if (!l.is_object() || !l.contains("step_time_s") || !l["step_time_s"].is_number() || !l.contains("memory_peak") ||
        !l["memory_peak"].is_number()) {
      return core::Status::error(where + " needs numeric \"step_time_s\" and \"memory_peak\"");
    }
    LayoutPoint p;
    p.step_time_s = l["step_time_s"].get<double>();
    p.memory_peak_bytes = l["memory_peak"].get<double>();
    p.pareto = l.value("pareto", false);
    p.chosen = i == 0;
    std::string mesh = "mesh[";
    if (l.contains("mesh") && l["mesh"].is_object() && l["mesh"].contains("dims") && l["mesh"].contains("shape")) {
      const auto& dims = l["mesh"]["dims"];
      const auto& shape = l["mesh"]["shape"];
      for (std::size_t d = 0; d < dims.size() && d < shape.size(); ++d) {
        mesh += (d ? "," : "") + dims[d].get<std::string>() + "=" + shape[d].dump();
      }
    }
    p.label = mesh + "]";
    out.push_back(std::move(p));
    ++i;
  }
  return out;
}

std::string scatter_svg(const std::vector<LayoutPoint>& points, double capacity_bytes) {
  const int w = 720, h = 360, left = 70, bottom = 50, top = 20, right = 20;
  double tmax = 0, mmax = capacity_bytes;
  for (const auto& p : points) {
    if (std::isfinite(p.step_time_s)) tmax = std::max(tmax, p.step_time_s);
    mmax = std::max(mmax, p.memory_peak_bytes);
  }
  tmax = tmax > 0 ? tmax * 1.05 : 1;
  mmax = mmax > 0 ? mmax * 1.05 : 1;
  auto px = [&](double t) { return left + t / tmax * (w - left - right); };
  auto py = [&](double m) { return h - bottom - m / mmax * (h - top - bottom); };
  std::string s = svg_open(w, h, "step time against memory per GPU");
  s += "<line x1=\"" + num(left) + "\" y1=\"" + num(h - bottom) + "\" x2=\"" + num(w - right) + "\" y2=\"" +
       num(h - bottom) + "\" stroke=\"#333\"/><line x1=\"" + num(left) + "\" y1=\"" + num(top) + "\" x2=\"" + num(left) +
       "\" y2=\"" + num(h - bottom) + "\" stroke=\"#333\"/>";
  s += text(left, h - bottom + 16, "0") + text(w - right, h - bottom + 16, seconds(tmax), "end");
  s += text((left + w - right) / 2.0, h - 12, "step time (s)", "middle");
  s += text(left - 6, top + 10, core::format_bytes(static_cast<std::int64_t>(mmax)), "end");
  s += text(left - 6, h - bottom, "0", "end");
  if (capacity_bytes > 0) {
    s += "<line x1=\"" + num(left) + "\" y1=\"" + num(py(capacity_bytes)) + "\" x2=\"" + num(w - right) + "\" y2=\"" +
         num(py(capacity_bytes)) + "\" stroke=\"#e31a1c\" stroke-dasharray=\"4 3\"/>" +
         text(w - right, py(capacity_bytes) - 4, "GPU capacity", "end");
  }
  std::vector<const LayoutPoint*> front;
  for (const auto& p : points) {
    if (p.pareto && std::isfinite(p.step_time_s)) front.push_back(&p);
  }
  std::sort(front.begin(), front.end(), [](auto* a, auto* b) { return a->step_time_s < b->step_time_s; });
  if (front.size() > 1) {
    s += "<polyline fill=\"none\" stroke=\"#33a02c\" stroke-width=\"1.5\" points=\"";
    for (auto* p : front) s += num(px(p->step_time_s)) + "," + num(py(p->memory_peak_bytes)) + " ";
    s += "\"/>";
  }
  for (const auto& p : points) {
    if (!std::isfinite(p.step_time_s)) continue;
    const std::string tip = p.label + ": " + seconds(p.step_time_s) + ", " +
                            core::format_bytes(static_cast<std::int64_t>(p.memory_peak_bytes)) + (p.pareto ? " (Pareto)" : "");
    s += "<circle cx=\"" + num(px(p.step_time_s)) + "\" cy=\"" + num(py(p.memory_peak_bytes)) + "\" r=\"" +
         (p.pareto ? "5" : "3.5") + "\" fill=\"" + (p.pareto ? "#33a02c" : "#999999") + "\"><title>" +
         viz::html_escape(tip) + "</title></circle>";
    if (p.chosen) {
      s += "<circle cx=\"" + num(px(p.step_time_s)) + "\" cy=\"" + num(py(p.memory_peak_bytes)) +
           "\" r=\"10\" fill=\"none\" stroke=\"#e31a1c\" stroke-width=\"2\"/>" +
           text(px(p.step_time_s) + 14, py(p.memory_peak_bytes) + 4, "chosen: " + p.label);
    }
  }
  return s + "</svg>";
}

}  // namespace planck::report
