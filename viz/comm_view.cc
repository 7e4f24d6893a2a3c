// Communicator view: every group of each chosen dim set as a ring in rank order (the order
// NCCL's ring follows for a communicator created with ranks sorted), so a ring that leaves its
// node — the flattened-HSDP bug — shows as thick dashed red hops between clusters.

#include <algorithm>

#include "core/mesh/placement.h"
#include "viz/scene.h"
#include "viz/style.h"
#include "viz/traffic.h"

namespace planck::viz::detail {

namespace {

std::vector<std::int64_t> nodes_of(const Scene& scene, const std::vector<std::int64_t>& members) {
  std::vector<std::int64_t> nodes;
  for (std::int64_t r : members) nodes.push_back(scene.node_of(r));
  return nodes;
}

// One line saying whether the rings leave their nodes. Red when a tp ring does, or an fsdp ring
// that could have stayed in a node (core::crossing_avoidable, verify's shard-crosses-node) or
// shards over a replicate dim too (the flattened HSDP of hsdp-flattened): tp 8 with FSDP over the
// nodes must cross, and is the standard layout, not an alarm.
std::pair<std::string, std::string> crossing_headline(const Scene& scene) {
  std::string text;
  bool alarming = false;
  for (std::size_t i = 0; i < scene.sets.size(); ++i) {
    const core::GroupSet& gs = scene.sets[i];
    const DimSet& set = scene.input->dim_sets[i];
    HopCounts h;
    for (std::int64_t g = 0; g < gs.num_groups(); ++g) {
      HopCounts one = count_hops(nodes_of(scene, gs.members(g)), is_chain(set));
      h.intra += one.intra;
      h.cross += one.cross;
    }
    if (h.cross == 0) continue;
    text += (text.empty() ? "" : "; ") + describe_set(set) + (is_chain(set) ? " pipelines" : " rings") + " cross nodes: " + std::to_string(h.cross) + " of " +
            std::to_string(h.cross + h.intra) + " hops on the network";
    const bool flattened = std::find(set.dims.begin(), set.dims.end(), "dp_replicate") != set.dims.end();
    alarming = alarming || set.role == "tp" ||
               (set.role == "fsdp" && (flattened || core::crossing_avoidable(*scene.mesh, set.dims, scene.gpus_per_node)));
  }
  if (text.empty()) return {"every ring stays inside one node", kMatchedColour};
  return {text, alarming ? kCrossColour : "#444444"};
}

// Above this many ranks the hops between nodes are drawn as their own layer under the grid: one
// small box per node, one line per pair of nodes a ring hops between, labelled with the count.
// Edges between the node clusters would both tangle (64 x 8 lines) and let dot reorder the
// clusters to shorten them (node0, node2, node1); the grid keeps only hops inside a node.
constexpr std::int64_t kNodeLayerAbove = 32;

std::string layer_id(std::int64_t node) { return "net" + std::to_string(node); }

// The cross-node layer: rank hops between two nodes, counted per (from, to) node pair in the
// order first seen, each drawn once between the two nodes' boxes of the layer.
class NodeLayer {
 public:
  void add(std::int64_t from_node, std::int64_t to_node, std::int64_t from_rank, std::int64_t to_rank, bool both) {
    for (auto& p : pairs_) {
      if (p.from == from_node && p.to == to_node) {
        ++p.hops;
        return;
      }
    }
    pairs_.push_back({from_node, to_node, from_rank, to_rank, 1, both});
  }
  std::int64_t pairs() const { return static_cast<std::int64_t>(pairs_.size()); }
  // "8 rank hops each", or "2 to 8 rank hops each" when the pairs differ.
  std::string hops_text() const {
    std::int64_t lo = pairs_.front().hops, hi = lo;
    for (const auto& p : pairs_) {
      lo = std::min(lo, p.hops);
      hi = std::max(hi, p.hops);
    }
    return (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)) +
           (hi == 1 ? " rank hop each" : " rank hops each");
  }
  void draw(DotGraph& graph, const std::string& colour) const {
    for (const auto& p : pairs_) {
      Attrs a = link_style(true, colour, colour);
      a.push_back({"constraint", "false"});
      // The count in the legend and the tooltip, not on the line: an edge label on a flat edge in
      // a cluster can crash Graphviz 2.42/2.43, and an xlabel lands under the other lines.
      a.push_back({"tooltip", std::to_string(p.hops) + (p.hops == 1 ? " rank hop " : " rank hops ") + node_id(p.from) +
                                  " -> " + node_id(p.to)});
      if (p.both) a.push_back({"dir", "both"});
      graph.add_edge(layer_id(p.from), layer_id(p.to), std::move(a));
    }
  }

 private:
  struct Pair {
    std::int64_t from, to, from_rank, to_rank, hops;
    bool both;
  };
  std::vector<Pair> pairs_;
};

// One group's ring: hops inside a node drawn between the boxes, hops across nodes handed to
// `layer`. Returns the hop counts by link class.
HopCounts add_ring_with_layer(DotGraph& graph, const std::vector<std::int64_t>& members,
                              const std::vector<std::int64_t>& nodes, bool chain, const Attrs& intra_style,
                              NodeLayer& layer) {
  const std::size_t n = members.size();
  if (n < 2) return {};
  const bool pair = n == 2 && !chain;
  for (std::size_t i = 0; i < ((chain || pair) ? n - 1 : n); ++i) {
    const std::size_t j = (i + 1) % n;
    if (nodes[i] != nodes[j]) {
      layer.add(nodes[i], nodes[j], members[i], members[j], pair);
      continue;
    }
    Attrs a = intra_style;
    a.push_back({"constraint", "false"});
    if (pair) a.push_back({"dir", "both"});
    graph.add_edge(rank_id(members[i]), rank_id(members[j]), std::move(a));
  }
  return count_hops(nodes, chain);
}

// The layer's boxes: one per node, in the grid's node order (rows of node_cols), in a cluster of
// their own under the rank grid.
void add_layer_boxes(DotGraph& graph, const Scene& scene) {
  const std::int64_t node_cols = grid_node_columns(scene);
  const int c = graph.add_cluster("network", {{"label", "cross-node layer: ring hops between nodes"}, {"style", "dashed"},
                                              {"color", kCrossColour}, {"fontsize", "12"}});
  for (std::int64_t n = 0; n < scene.nodes; ++n) {
    graph.add_node(layer_id(n), {{"label", node_id(n)}, {"fillcolor", "#eeeeee"}}, c);
  }
  for (std::int64_t n = 0; n < scene.nodes; n += node_cols) {
    std::string same = "{rank=same; ";
    for (std::int64_t k = n; k < std::min(scene.nodes, n + node_cols); ++k) {
      same += (k > n ? " -> " : "") + std::string("\"") + layer_id(k) + "\"";
    }
    graph.add_statement(same + " [style=invis]}");
    if (n + node_cols < scene.nodes) graph.add_edge(layer_id(n), layer_id(n + node_cols), {{"style", "invis"}, {"minlen", "2"}});
  }
  // Under the grid: from its last rank.
  graph.add_edge(rank_id(scene.world() - 1), layer_id(0), {{"style", "invis"}});
}

}  // namespace

core::Result<std::string> build_comm_view(const Scene& scene) {
  auto [headline, colour] = crossing_headline(scene);
  DotGraph graph = start_graph(scene, "communicator view", headline, colour);
  const core::GroupSet& first = scene.sets.front();
  // Above kNodeLayerAbove no ring hop joins two clusters, so the nodes can be chained in order.
  add_rank_grid(graph, scene, [&](std::int64_t r) { return std::string(group_fill(first.group_of(r))); }, {},
                scene.world() > kNodeLayerAbove);

  std::vector<HopTraffic> traffic;
  if (scene.input->schedule != nullptr) traffic = hop_traffic(*scene.input->schedule, *scene.mesh, scene.gpus_per_node);

  Legend legend;
  legend.heading("Communicator view");
  describe_boxes(legend, scene);
  legend.text("Fill: group of " + describe_set(scene.input->dim_sets.front()));
  const bool several = scene.sets.size() > 1;
  const bool node_layer = scene.world() > kNodeLayerAbove;
  bool layer_drawn = false;
  for (std::size_t i = 0; i < scene.sets.size(); ++i) {
    const core::GroupSet& gs = scene.sets[i];
    const DimSet& set = scene.input->dim_sets[i];
    const bool chain = is_chain(set);
    std::string intra = several ? set_colour(static_cast<int>(i)) : kIntraColour;
    std::string cross = several ? set_colour(static_cast<int>(i)) : kCrossColour;
    std::string bytes_label;
    if (scene.input->schedule != nullptr) {
      std::int64_t b = bytes_per_hop(traffic, set.dims);
      if (b > 0) bytes_label = format_bytes(b);
    }
    // Every hop of a ring carries the same bytes: the figure is said once per link class in the
    // legend, never written on the edges (a label there sits under the next ring's lines).
    EdgeStyle style = [&](bool cross_node) { return link_style(cross_node, intra, cross); };
    HopCounts total;
    NodeLayer layer;
    for (std::int64_t g = 0; g < gs.num_groups(); ++g) {
      std::vector<std::int64_t> members = gs.members(g);
      HopCounts h;
      if (node_layer) {
        h = add_ring_with_layer(graph, members, nodes_of(scene, members), chain, style(false), layer);
      } else {
        std::vector<std::string> ids;
        for (std::int64_t r : members) ids.push_back(rank_id(r));
        h = add_ring(graph, ids, nodes_of(scene, members), chain, style);
      }
      total.intra += h.intra;
      total.cross += h.cross;
    }
    if (node_layer && layer.pairs() > 0) {
      if (!layer_drawn) add_layer_boxes(graph, scene);
      layer_drawn = true;
      layer.draw(graph, cross);
    }
    legend.heading(describe_set(set) + ": " + describe_groups(gs) + (chain ? ", drawn as pipelines" : ", drawn as rings"));
    auto hops = [&](std::int64_t n, const char* where) {
      std::string per_hop = bytes_label.empty() || n == 0 ? std::string() : " (" + bytes_label + " per hop per step)";
      return std::to_string(n) + (n == 1 ? " hop " : " hops ") + where + per_hop;
    };
    legend.line(intra, kIntraStyle, kIntraWidth, hops(total.intra, "inside a node"));
    legend.line(cross, kCrossStyle, kCrossWidth, hops(total.cross, "across nodes"));
    if (node_layer && layer.pairs() > 0) {
      legend.text("hops across nodes are drawn in the cross-node layer under the grid: " + std::to_string(layer.pairs()) +
                  " lines, one per pair of nodes a ring hops between, " + layer.hops_text() + " (hover a line)");
    }
    if (gs.group_size() == 1) legend.text("each rank is its own group: nothing to connect");
  }
  add_traffic_legend(legend, scene);
  add_legend(graph, legend, layer_drawn ? layer_id(scene.nodes - 1) : rank_id(scene.world() - 1));
  return graph.str();
}

}  // namespace planck::viz::detail
