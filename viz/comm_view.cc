// Communicator view: every group of each chosen dim set as a ring in rank order (the order
// NCCL's ring follows for a communicator created with ranks sorted), so a ring that leaves its
// node — the flattened-HSDP bug — shows as thick dashed red hops between clusters.

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

// One line saying whether the rings leave their nodes. Red when an fsdp or tp ring does: those
// are the communicators HSDP and TP mean to keep on NVLink.
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
    alarming = alarming || set.role == "fsdp" || set.role == "tp";
  }
  if (text.empty()) return {"every ring stays inside one node", kMatchedColour};
  return {text, alarming ? kCrossColour : "#444444"};
}

}  // namespace

core::Result<std::string> build_comm_view(const Scene& scene) {
  auto [headline, colour] = crossing_headline(scene);
  DotGraph graph = start_graph(scene, "communicator view", headline, colour);
  const core::GroupSet& first = scene.sets.front();
  add_rank_grid(graph, scene, [&](std::int64_t r) { return std::string(group_fill(first.group_of(r))); });

  std::vector<HopTraffic> traffic;
  if (scene.input->schedule != nullptr) traffic = hop_traffic(*scene.input->schedule, *scene.mesh, scene.gpus_per_node);

  Legend legend;
  legend.heading("Communicator view");
  describe_boxes(legend, scene);
  legend.text("Fill: group of " + describe_set(scene.input->dim_sets.front()));
  const bool several = scene.sets.size() > 1;
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
    // Every hop of a ring carries the same bytes: label the first hop of each link class per
    // ring, not all of them, so the numbers stay readable.
    bool labelled[2] = {false, false};
    EdgeStyle style = [&](bool cross_node) {
      Attrs a = link_style(cross_node, intra, cross);
      if (!bytes_label.empty() && !labelled[cross_node]) {
        a.push_back({"xlabel", bytes_label});
        labelled[cross_node] = true;
      }
      return a;
    };
    HopCounts total;
    for (std::int64_t g = 0; g < gs.num_groups(); ++g) {
      labelled[0] = labelled[1] = false;
      std::vector<std::int64_t> members = gs.members(g);
      std::vector<std::string> ids;
      for (std::int64_t r : members) ids.push_back(rank_id(r));
      HopCounts h = add_ring(graph, ids, nodes_of(scene, members), chain, style);
      total.intra += h.intra;
      total.cross += h.cross;
    }
    legend.heading(describe_set(set) + ": " + describe_groups(gs) + (chain ? ", drawn as pipelines" : ", drawn as rings"));
    auto hops = [&](std::int64_t n, const char* where) {
      std::string per_hop = bytes_label.empty() || n == 0 ? std::string() : " (" + bytes_label + " per hop per step)";
      return std::to_string(n) + (n == 1 ? " hop " : " hops ") + where + per_hop;
    };
    legend.line(intra, kIntraStyle, kIntraWidth, hops(total.intra, "inside a node"));
    legend.line(cross, kCrossStyle, kCrossWidth, hops(total.cross, "across nodes"));
    if (gs.group_size() == 1) legend.text("each rank is its own group: nothing to connect");
  }
  add_traffic_legend(legend, scene);
  add_legend(graph, legend, rank_id(scene.world() - 1));
  return graph.str();
}

}  // namespace planck::viz::detail
