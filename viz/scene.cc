#include "viz/scene.h"

#include <algorithm>
#include <cmath>

#include "viz/style.h"
#include "core/base/str_cat.h"

namespace planck::viz::detail {

// Two columns: a sample (colour swatch or line) and its text. Text-only rows leave the sample
// cell empty, so a long line never widens the swatches.
void Legend::heading(const std::string& text) {
  rows_.push_back("<TR><TD></TD><TD ALIGN=\"LEFT\"><B>" + html_escape(text) + "</B></TD></TR>");
}

void Legend::text(const std::string& text) {
  rows_.push_back("<TR><TD></TD><TD ALIGN=\"LEFT\">" + html_escape(text) + "</TD></TR>");
}

void Legend::swatch(const std::string& fill, const std::string& text) {
  rows_.push_back("<TR><TD BGCOLOR=\"" + fill + "\" BORDER=\"1\" FIXEDSIZE=\"TRUE\" WIDTH=\"28\" HEIGHT=\"14\"></TD>"
                  "<TD ALIGN=\"LEFT\">" + html_escape(text) + "</TD></TR>");
}

void Legend::line(const std::string& colour, const std::string& style, const std::string& width,
                  const std::string& text) {
  // HTML labels cannot draw an edge sample; spell the style out in the line's colour.
  std::string sample = style == "dashed" ? "- - -" : (style == "bold" ? "\u2501\u2501\u2501" : "\u2500\u2500\u2500");
  if (width != "1" && width != "1.5" && style != "bold") sample = "<B>" + sample + "</B>";
  rows_.push_back("<TR><TD ALIGN=\"CENTER\"><FONT COLOR=\"" + colour + "\">" + sample +
                  "</FONT></TD><TD ALIGN=\"LEFT\">" + html_escape(text) + "</TD></TR>");
}

std::string Legend::html() const {
  std::string out = "<TABLE BORDER=\"0\" CELLBORDER=\"0\" CELLSPACING=\"2\" CELLPADDING=\"2\">";
  for (const std::string& r : rows_) out += r;
  return out + "</TABLE>";
}

DotGraph start_graph(const Scene& scene, const std::string& view_name, const std::string& headline,
                     const std::string& headline_colour) {
  DotGraph g("planck");
  std::string title = scene.input->title.empty() ? std::string("plan") : scene.input->title;
  // No-break spaces around the dash: Graphviz writes the bold title and the rest as separate SVG
  // <text> runs, and a plain space at a run's edge collapses ("70b\u2014 communicator view").
  std::string label = "<B>" + html_escape(title) + "</B>\u00a0\u2014\u00a0" + html_escape(view_name) + "<BR/>" +
                      html_escape(scene.mesh->to_string() + ", " + std::to_string(scene.nodes) +
                                  (scene.nodes == 1 ? " node" : " nodes") + " \u00d7 " +
                                  std::to_string(scene.gpus_per_node) + " GPUs");
  if (!headline.empty()) {
    label += "<BR/><FONT COLOR=\"" + headline_colour + "\"><B>" + html_escape(headline) + "</B></FONT>";
  }
  g.graph_attr_html("label", label);
  g.graph_attr("labelloc", "t");
  g.graph_attr("fontname", kFont);
  g.graph_attr("fontsize", "16");
  g.graph_attr("rankdir", "TB");
  g.graph_attr("newrank", "true");
  g.graph_attr("nodesep", "0.25");
  g.graph_attr("ranksep", "0.35");
  g.node_defaults({{"shape", "box"}, {"style", "filled,rounded"}, {"fontname", kFont}, {"fontsize", "11"},
                   {"margin", "0.08,0.04"}});
  g.edge_defaults({{"fontname", kFont}, {"fontsize", "9"}, {"arrowsize", "0.6"}});
  return g;
}

void add_legend(DotGraph& graph, const Legend& legend, const std::string& below) {
  graph.add_node("legend", {{"shape", "plaintext"}, {"style", ""}, {"margin", "0"}, {"label", legend.html(), true}});
  // Under the drawing, on a rank of its own, so its height never stretches the grid's rows.
  if (!below.empty()) graph.add_edge(below, "legend", {{"style", "invis"}});
}

std::int64_t grid_node_columns(const Scene& scene) {
  return scene.nodes <= 4 ? scene.nodes : static_cast<std::int64_t>(std::ceil(std::sqrt(static_cast<double>(scene.nodes))));
}

void add_rank_grid(DotGraph& graph, const Scene& scene, const std::function<std::string(std::int64_t)>& fill,
                   const std::function<std::string(std::int64_t)>& extra, bool order_nodes) {
  const std::int64_t gpn = scene.gpus_per_node;
  // GPUs of one node in rows of `cols` (8 GPUs: 4 x 2), nodes in rows of `node_cols`, so a
  // 64-rank mesh is a compact block rather than one 64-box line.
  const std::int64_t cols = gpn <= 4 ? gpn : (gpn <= 16 ? (gpn + 1) / 2 : static_cast<std::int64_t>(std::ceil(std::sqrt(gpn))));
  const std::int64_t node_cols = grid_node_columns(scene);
  const std::int64_t world = scene.world();
  for (std::int64_t n = 0; n < scene.nodes; ++n) {
    // Node names under their boxes: flat ring edges arc over a row, through a label on top.
  int c = graph.add_cluster(node_id(n), {{"label", node_id(n)}, {"labelloc", "b"}, {"style", "rounded"}, {"color", "#555555"},
                                           {"fontsize", "12"}});
    for (std::int64_t r = n * gpn; r < std::min(world, (n + 1) * gpn); ++r) {
      std::string label = rank_id(r);
      if (!scene.label_dims.empty()) {
        std::vector<std::string> coords;
        for (int d : scene.label_dims) coords.push_back(std::to_string(scene.mesh->coord(r, d)));
        label += core::str_cat("\n", tuple(coords));
      }
      std::string more = extra ? extra(r) : std::string();
      if (!more.empty()) label += "\n" + more;
      graph.add_node(rank_id(r), {{"label", label}, {"fillcolor", fill(r)}}, c);
    }
  }
  // Invisible scaffolding, so dot cannot reorder what a reader scans in order: each row of a
  // node as a left-to-right chain, odd rows right to left (a ring in rank order through a node
  // is then a loop around its boxes, never a diagonal across them), rows below each other by
  // column; nodes of one grid row chained left to right in node order (dot would otherwise
  // reorder clusters to shorten ring edges: node0, node2, node1), node rows below each other.
  auto at = [&](std::int64_t node, std::int64_t row, std::int64_t pos) -> std::int64_t {
    // The rank at column `pos` of row `row` of `node`, or -1 where a short last row has none.
    const std::int64_t first = node * gpn + row * cols;
    const std::int64_t in_row = std::min({cols, gpn - row * cols, world - first});
    const std::int64_t k = row % 2 == 0 ? pos : cols - 1 - pos;
    return k >= 0 && k < in_row ? first + k : -1;
  };
  const std::int64_t rows = (gpn + cols - 1) / cols;
  for (std::int64_t n = 0; n < scene.nodes; ++n) {
    for (std::int64_t row = 0; row < rows; ++row) {
      std::vector<std::int64_t> line;
      for (std::int64_t pos = 0; pos < cols; ++pos) {
        if (at(n, row, pos) >= 0) line.push_back(at(n, row, pos));
      }
      if (line.size() > 1) {
        std::string same = "{rank=same; ";
        for (std::size_t k = 0; k < line.size(); ++k) same += (k > 0 ? " -> " : "") + std::string("\"") + rank_id(line[k]) + "\"";
        graph.add_statement(same + " [style=invis]}");
      }
      for (std::int64_t pos = 0; pos < cols && row + 1 < rows; ++pos) {
        if (at(n, row, pos) >= 0 && at(n, row + 1, pos) >= 0) {
          graph.add_edge(rank_id(at(n, row, pos)), rank_id(at(n, row + 1, pos)), {{"style", "invis"}});
        }
      }
    }
    if (order_nodes && n + 1 < scene.nodes && (n + 1) % node_cols != 0) {
      const std::int64_t right = std::min({world, n * gpn + cols, (n + 1) * gpn}) - 1;
      graph.add_statement("{rank=same; \"" + rank_id(right) + "\" -> \"" + rank_id((n + 1) * gpn) + "\" [style=invis]}");
    }
  }
  for (std::int64_t n = 0; n + node_cols < scene.nodes; ++n) {
    std::int64_t last = std::min(world, (n + 1) * gpn) - 1;
    std::int64_t below = (n + node_cols) * gpn;
    graph.add_edge(rank_id(last), rank_id(below), {{"style", "invis"}});
  }
}

Attrs link_style(bool cross_node, const std::string& intra_colour, const std::string& cross_colour) {
  if (cross_node) return {{"color", cross_colour}, {"style", kCrossStyle}, {"penwidth", kCrossWidth}};
  return {{"color", intra_colour}, {"style", kIntraStyle}, {"penwidth", kIntraWidth}};
}

HopCounts count_hops(const std::vector<std::int64_t>& nodes, bool chain) {
  HopCounts h;
  const std::size_t n = nodes.size();
  if (n < 2) return h;
  std::size_t hops = (chain || n == 2) ? n - 1 : n;
  for (std::size_t i = 0; i < hops; ++i) {
    (nodes[i] != nodes[(i + 1) % n] ? h.cross : h.intra) += 1;
  }
  return h;
}

HopCounts add_ring(DotGraph& graph, const std::vector<std::string>& ids, const std::vector<std::int64_t>& nodes,
                   bool chain, const EdgeStyle& style) {
  const std::size_t n = ids.size();
  if (n < 2) return {};
  std::size_t hops = (chain || n == 2) ? n - 1 : n;
  for (std::size_t i = 0; i < hops; ++i) {
    std::size_t j = (i + 1) % n;
    Attrs a = style(nodes[i] != nodes[j]);
    // Rings are drawn over the grid, never allowed to move it.
    a.push_back({"constraint", "false"});
    if (n == 2 && !chain) a.push_back({"dir", "both"});
    graph.add_edge(ids[i], ids[j], std::move(a));
  }
  return count_hops(nodes, chain);
}

bool is_chain(const DimSet& set) { return set.dims.size() == 1 && set.dims[0] == "pp"; }

std::string describe_set(const DimSet& set) {
  std::string key = set.key.empty() ? std::string("(no dims)") : set.key;
  if (set.role.empty() || set.role == set.key) return key;
  return set.role + " (" + key + ")";
}

std::string describe_groups(const core::GroupSet& gs) {
  return std::to_string(gs.num_groups()) + (gs.num_groups() == 1 ? " group of " : " groups of ") +
         std::to_string(gs.group_size()) + (gs.group_size() == 1 ? " rank" : " ranks");
}

}  // namespace planck::viz::detail
