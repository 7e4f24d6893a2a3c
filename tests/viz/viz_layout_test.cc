// Readable at every size (issue 21): nodes drawn in order on a grid, and no text under a line.
// Renders HSDP meshes of 16, 64, 128 and 256 ranks (each ring set: fsdp, replicate, the flattened
// group) and a 4,096-rank one, and checks the SVG itself: cluster boxes and node-layer boxes in
// row-major node order, and every text box (from x, y, font size and length) clear of every
// drawn edge path other than the edge the text labels (sampled Bezier curves).

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include "tests/viz/viz_helpers.h"
#include "viz/graphviz.h"

namespace planck::viz::test {
namespace {

struct Box {
  double x0, y0, x1, y1;
  bool contains(double x, double y) const { return x > x0 && x < x1 && y > y0 && y < y1; }
};

std::string svg_of(const DiagramInput& in) {
  auto dot = build_dot(in);
  REQUIRE_MESSAGE(dot.is_ok(), dot.message());
  auto svg = render_dot(*dot, Format::kSvg);
  REQUIRE_MESSAGE(svg.is_ok(), svg.message());
  return *svg;
}

std::vector<double> numbers(const std::string& s) {
  std::vector<double> out;
  static const std::regex num(R"(-?\d+(\.\d+)?)");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), num); it != std::sregex_iterator(); ++it) {
    out.push_back(std::stod(it->str()));
  }
  return out;
}

// The <g class="..."> elements, as their text up to the closing </g>.
std::vector<std::string> groups(const std::string& svg, const std::string& cls) {
  std::vector<std::string> out;
  const std::string open = "class=\"" + cls + "\">";
  for (auto at = svg.find(open); at != std::string::npos; at = svg.find(open, at + 1)) {
    out.push_back(svg.substr(at, svg.find("</g>", at) - at));
  }
  return out;
}

std::string title_of(const std::string& g) {
  const auto a = g.find("<title>") + 7;
  return g.substr(a, g.find("</title>") - a);
}

// Bounding box of the first path or polygon of a group.
Box shape_box(const std::string& g) {
  static const std::regex shape(R"((d|points)=\"([^\"]*)\")");
  std::smatch m;
  REQUIRE(std::regex_search(g, m, shape));
  const auto v = numbers(m[2].str());
  Box b{1e18, 1e18, -1e18, -1e18};
  for (std::size_t i = 0; i + 1 < v.size(); i += 2) {
    b = {std::min(b.x0, v[i]), std::min(b.y0, v[i + 1]), std::max(b.x1, v[i]), std::max(b.y1, v[i + 1])};
  }
  return b;
}

// Ids ("node3", "net3") sorted by rows (top edge within 2 pt), then left to right.
std::vector<std::string> reading_order(std::vector<std::pair<std::string, Box>> items) {
  std::sort(items.begin(), items.end(), [](const auto& a, const auto& b) {
    if (std::abs(a.second.y0 - b.second.y0) > 2) return a.second.y0 < b.second.y0;
    return a.second.x0 < b.second.x0;
  });
  std::vector<std::string> out;
  for (const auto& i : items) out.push_back(i.first);
  return out;
}

void check_node_order(const std::string& svg, std::int64_t nodes) {
  std::vector<std::pair<std::string, Box>> clusters, layer;
  for (const auto& g : groups(svg, "cluster")) {
    const std::string t = title_of(g);
    if (t.rfind("cluster_node", 0) == 0) clusters.emplace_back(t.substr(8), shape_box(g));
  }
  for (const auto& g : groups(svg, "node")) {
    const std::string t = title_of(g);
    if (t.rfind("net", 0) == 0) layer.emplace_back("node" + t.substr(3), shape_box(g));
  }
  std::vector<std::string> expected;
  for (std::int64_t n = 0; n < nodes; ++n) expected.push_back("node" + std::to_string(n));
  CHECK(reading_order(clusters) == expected);
  if (!layer.empty()) CHECK(reading_order(layer) == expected);
}

// Every <text> as a box: width 0.6 em per character (DejaVu Sans averages about 0.55), height
// from the baseline up 0.8 em and down 0.2 em; shrunk by 1 pt so touching is not overlapping.
struct Text {
  std::string content;
  Box box;
  int edge = -1;  // index of the edge group it labels, or -1
};

std::vector<Text> texts(const std::string& svg, const std::vector<std::string>& edges) {
  std::vector<Text> out;
  static const std::regex text(R"re(<text text-anchor="(\w+)" x="([-\d.]+)" y="([-\d.]+)"[^>]*font-size="([\d.]+)"[^>]*>([^<]*)</text>)re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text); it != std::sregex_iterator(); ++it) {
    const auto& m = *it;
    const std::string anchor = m[1].str(), content = m[5].str();
    const double x = std::stod(m[2].str()), y = std::stod(m[3].str()), fs = std::stod(m[4].str());
    const double w = 0.6 * fs * static_cast<double>(content.size());
    const double left = anchor == "middle" ? x - w / 2 : (anchor == "end" ? x - w : x);
    Text t{content, {left + 1, y - 0.8 * fs + 1, left + w - 1, y + 0.2 * fs - 1}};
    for (std::size_t e = 0; e < edges.size(); ++e) {
      if (edges[e].find(m[0].str()) != std::string::npos) t.edge = static_cast<int>(e);
    }
    out.push_back(t);
  }
  return out;
}

// Points along an edge's path: its M/C coordinates and 8 samples per cubic Bezier segment.
std::vector<std::pair<double, double>> path_points(const std::string& g) {
  std::vector<std::pair<double, double>> pts;
  static const std::regex path(R"re(<path[^>]* d="([^"]*)")re");
  std::smatch m;
  if (!std::regex_search(g, m, path)) return pts;
  const auto v = numbers(m[1].str());
  if (v.size() < 2) return pts;
  pts.emplace_back(v[0], v[1]);
  for (std::size_t i = 2; i + 5 < v.size(); i += 6) {
    const double x0 = pts.back().first, y0 = pts.back().second;
    for (int s = 1; s <= 8; ++s) {
      const double t = s / 8.0, u = 1 - t;
      pts.emplace_back(u * u * u * x0 + 3 * u * u * t * v[i] + 3 * u * t * t * v[i + 2] + t * t * t * v[i + 4],
                       u * u * u * y0 + 3 * u * u * t * v[i + 1] + 3 * u * t * t * v[i + 3] + t * t * t * v[i + 5]);
    }
  }
  return pts;
}

// Texts that some other edge's line runs through: "<text> under <edge title>".
std::string overlaps(const std::string& svg) {
  const auto edges = groups(svg, "edge");
  std::vector<std::string> out;
  const auto ts = texts(svg, edges);
  for (std::size_t e = 0; e < edges.size(); ++e) {
    for (const auto& [x, y] : path_points(edges[e])) {
      for (const auto& t : ts) {
        if (t.edge != static_cast<int>(e) && t.box.contains(x, y)) out.push_back(t.content + " under " + title_of(edges[e]));
      }
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  std::string joined;
  for (const auto& o : out) joined += o + "; ";
  return joined;
}

}  // namespace

TEST_CASE("viz_layout: nodes in order and no text under a line, 16 to 256 ranks") {
  for (std::int64_t nodes : {2, 8, 16, 32}) {
    core::Mesh mesh = make_mesh({"dp_replicate", "dp_shard"}, {nodes, 8});
    for (const std::vector<std::string>& dims :
         {std::vector<std::string>{"dp_shard"}, {"dp_replicate"}, {"dp_replicate", "dp_shard"}}) {
      const std::string key = dims.size() == 2 ? "flattened" : dims[0];
      CAPTURE(nodes);
      CAPTURE(key);
      DiagramInput in = input_for(mesh, 8, dims);
      in.title = "70b";
      const std::string svg = svg_of(in);
      check_node_order(svg, nodes);
      CHECK(overlaps(svg) == "");
      // The title keeps its spaces around the dash (no-break spaces survive SVG's whitespace rules).
      CHECK(svg.find("\u00a0\u2014\u00a0communicator view") != std::string::npos);
    }
  }
}

TEST_CASE("viz_layout: the 4,096-rank summary keeps node order and its text clear") {
  core::Mesh mesh = make_mesh({"dp_replicate", "dp_shard"}, {512, 8});
  for (const std::vector<std::string>& dims : {std::vector<std::string>{"dp_shard"}, {"dp_replicate"}}) {
    DiagramInput in = input_for(mesh, 8, dims);
    const std::string svg = svg_of(in);
    CHECK(overlaps(svg) == "");
    // The groups drawn read in group order (each ring's first box "s0_gK_seg0"), and the first
    // ring's node segments ("nodeK / rA…rB" boxes, "s0_g0_segK") in ring order, which is node
    // order for these dims: row by row, left to right.
    std::vector<std::pair<std::string, Box>> firsts, segments;
    static const std::regex seg(R"(s0_g(\d+)_seg(\d+))");
    for (const auto& g : groups(svg, "node")) {
      const std::string t = title_of(g);
      std::smatch m;
      if (!std::regex_match(t, m, seg)) continue;
      if (m[2].str() == "0") firsts.emplace_back("s0_g" + m[1].str(), shape_box(g));
      if (m[1].str() == "0") segments.emplace_back(t, shape_box(g));
    }
    REQUIRE(firsts.size() >= 2);
    REQUIRE(!segments.empty());
    std::vector<std::string> groups_in_order, segments_in_order;
    for (std::size_t k = 0; k < firsts.size(); ++k) groups_in_order.push_back("s0_g" + std::to_string(k));
    for (std::size_t k = 0; k < segments.size(); ++k) segments_in_order.push_back("s0_g0_seg" + std::to_string(k));
    CHECK(reading_order(firsts) == groups_in_order);
    CHECK(reading_order(segments) == segments_in_order);
  }
}

}  // namespace planck::viz::test
