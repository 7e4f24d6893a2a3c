// Large meshes (world > collapse_above): per-node and per-group summaries with counts, so a
// 4,096-rank plan stays a readable picture that lays out in well under a second. Everything
// here costs O(what is drawn), never O(world): a 2^31-rank mesh renders as fast as a small one.

#include <algorithm>
#include <cmath>
#include <set>

#include "viz/observed_match.h"
#include "viz/scene.h"
#include "viz/style.h"
#include "core/base/str_cat.h"

namespace planck::viz::detail {
namespace {

constexpr std::int64_t kMaxNodeBoxes = 48;   // node boxes in the mesh summary
constexpr std::int64_t kMaxRings = 4;        // groups drawn per dim set
constexpr std::int64_t kMaxSegments = 12;    // node segments drawn per ring
constexpr std::int64_t kMaxScan = 1 << 20;   // members / ranks looked at per group or node

// A maximal run of consecutive ring members on one node.
struct Segment {
  std::int64_t node = 0;
  std::int64_t first = 0, last = 0, count = 0;
};

struct Segments {
  std::vector<Segment> shown;
  std::int64_t ranks_not_shown = 0;  // members after the last shown segment
};

Segments segments_of(const core::GroupSet& gs, std::int64_t group, std::int64_t gpn,
                     const std::vector<std::int64_t>* explicit_members) {
  Segments s;
  const std::int64_t n = explicit_members ? static_cast<std::int64_t>(explicit_members->size()) : gs.group_size();
  std::int64_t i = 0;
  for (; i < n && i < kMaxScan; ++i) {
    std::int64_t r = explicit_members ? (*explicit_members)[i] : gs.member(group, i);
    std::int64_t node = r / gpn;
    if (!s.shown.empty() && s.shown.back().node == node) {
      s.shown.back().last = r;
      ++s.shown.back().count;
      continue;
    }
    if (static_cast<std::int64_t>(s.shown.size()) == kMaxSegments) break;
    s.shown.push_back({node, r, r, 1});
  }
  s.ranks_not_shown = n - i;
  return s;
}

std::string segment_label(const Segment& seg) {
  std::string label = node_id(seg.node) + "\n" + (seg.count == 1 ? rank_id(seg.first) : rank_id(seg.first) + "\u2026" + rank_id(seg.last)) +
                      " (" + std::to_string(seg.count) + (seg.count == 1 ? " rank)" : " ranks)");
  if (seg.count > 1) label += core::str_cat("\n", std::to_string(seg.count - 1), " hops inside");
  return label;
}

// One group as a ring over its node segments, in a row under the previous ring (`above`, the
// previous ring's first id, updated). `prefix` makes the ids unique ("s0_g3").
HopCounts add_segment_ring(DotGraph& graph, const std::string& prefix, const Segments& segs, const std::string& fill,
                           const EdgeStyle& style, bool chain, std::string& above) {
  std::vector<std::string> ids;
  std::vector<std::int64_t> nodes;
  int cluster = graph.add_cluster(prefix, {{"label", ""}, {"style", "invis"}});
  for (std::size_t i = 0; i < segs.shown.size(); ++i) {
    ids.push_back(prefix + "_seg" + std::to_string(i));
    nodes.push_back(segs.shown[i].node);
    graph.add_node(ids.back(), {{"label", segment_label(segs.shown[i])}, {"fillcolor", fill}}, cluster);
  }
  if (segs.ranks_not_shown > 0) {
    ids.push_back(prefix + "_more");
    nodes.push_back(-1);  // other nodes: the hops into and out of it cross nodes
    graph.add_node(ids.back(), {{"label", "\u2026 " + std::to_string(segs.ranks_not_shown) + " more ranks"}, {"fillcolor", fill},
                                {"style", "dashed,rounded,filled"}}, cluster);
  }
  // Segments are laid out left to right; the ring edges only constrain nothing.
  for (std::size_t i = 0; i + 1 < ids.size(); ++i) graph.add_edge(ids[i], ids[i + 1], {{"style", "invis"}});
  if (!ids.empty()) graph.add_statement("{rank=same; \"" + ids.front() + "\";" + [&] {
    std::string s;
    for (std::size_t i = 1; i < ids.size(); ++i) s += " \"" + ids[i] + "\";";
    return s;
  }() + "}");
  if (!ids.empty()) {
    if (!above.empty()) graph.add_edge(above, ids.front(), {{"style", "invis"}});
    above = ids.front();
  }
  return add_ring(graph, ids, nodes, chain, style);
}

std::string collapse_note(const Scene& scene) {
  return "Collapsed: " + std::to_string(scene.world()) + " ranks is more than " + std::to_string(scene.input->collapse_above) +
         " (--collapse-above), so boxes stand for several ranks";
}

core::Result<std::string> mesh_summary(const Scene& scene) {
  DotGraph graph = start_graph(scene, "mesh view (collapsed per node)");
  const core::GroupSet& gs = scene.sets.front();
  const std::int64_t shown = std::min(scene.nodes, kMaxNodeBoxes);
  std::vector<std::int64_t> nodes;
  for (std::int64_t n = 0; n < shown - 1; ++n) nodes.push_back(n);
  nodes.push_back(scene.nodes - 1);
  std::vector<std::string> ids;
  for (std::int64_t n : nodes) {
    if (n == scene.nodes - 1 && scene.nodes > shown) {
      ids.push_back("more_nodes");
      graph.add_node(ids.back(), {{"label", "\u2026 " + std::to_string(scene.nodes - shown) + " more nodes"}, {"style", "dashed,rounded"}});
    }
    std::int64_t first = n * scene.gpus_per_node;
    std::int64_t last = std::min(scene.world(), first + scene.gpus_per_node) - 1;
    std::set<std::int64_t> groups;
    for (std::int64_t r = first; r <= last && r - first < kMaxScan; ++r) groups.insert(gs.group_of(r));
    std::string what = groups.size() == 1
                           ? (gs.group_size() > last - first + 1 ? "part of g" : "g") + std::to_string(*groups.begin())
                           : "parts of " + std::to_string(groups.size()) + " groups";
    ids.push_back(node_id(n));
    graph.add_node(ids.back(), {{"label", node_id(n) + "\n" + rank_id(first) + "\u2026" + rank_id(last) + "\n" + what},
                                {"fillcolor", groups.size() == 1 ? group_fill(*groups.begin()) : kNeutralFill}});
  }
  const std::int64_t cols = static_cast<std::int64_t>(std::ceil(std::sqrt(static_cast<double>(ids.size()))));
  for (std::size_t i = 0; i + cols < ids.size(); ++i) graph.add_edge(ids[i], ids[i + cols], {{"style", "invis"}});

  Legend legend;
  legend.heading("Mesh view, one box per node");
  legend.text(collapse_note(scene));
  legend.text("showing " + std::to_string(shown) + " of " + std::to_string(scene.nodes) + " nodes of " +
              std::to_string(scene.gpus_per_node) + " GPUs");
  legend.text("Fill: the group of " + describe_set(scene.input->dim_sets.front()) + " when a node holds one; white when it holds parts of several");
  legend.text(describe_set(scene.input->dim_sets.front()) + ": " + describe_groups(gs) + "; " + span_note(scene, gs));
  for (std::size_t i = 1; i < scene.sets.size(); ++i) {
    legend.text(describe_set(scene.input->dim_sets[i]) + ": " + describe_groups(scene.sets[i]) + "; " + span_note(scene, scene.sets[i]));
  }
  add_traffic_legend(legend, scene);
  add_legend(graph, legend, ids.back());
  return graph.str();
}

// The summary's verdict from group shapes alone (O(1) per dim set): which sets leave a node.
std::pair<std::string, std::string> span_headline(const Scene& scene) {
  std::string text;
  bool alarming = false;
  for (std::size_t i = 0; i < scene.sets.size(); ++i) {
    std::int64_t span = max_span(scene, scene.sets[i]);
    if (span <= 1) continue;
    const DimSet& set = scene.input->dim_sets[i];
    text += (text.empty() ? "" : "; ") + describe_set(set) + " groups span up to " + std::to_string(span) + " nodes";
    alarming = alarming || set.role == "fsdp" || set.role == "tp";
  }
  if (text.empty()) return {"every group stays inside one node", kMatchedColour};
  return {text, alarming ? kCrossColour : "#444444"};
}

core::Result<std::string> comm_summary(const Scene& scene) {
  auto [headline, colour] = span_headline(scene);
  DotGraph graph = start_graph(scene, "communicator view (collapsed per node segment)", headline, colour);
  Legend legend;
  legend.heading("Communicator view, rings over node segments");
  legend.text(collapse_note(scene));
  legend.text("Box: the consecutive ring members on one node, with the hops between them");
  const bool several = scene.sets.size() > 1;
  std::string above;
  for (std::size_t i = 0; i < scene.sets.size(); ++i) {
    const core::GroupSet& gs = scene.sets[i];
    const DimSet& set = scene.input->dim_sets[i];
    std::string intra = several ? set_colour(static_cast<int>(i)) : kIntraColour;
    std::string cross = several ? set_colour(static_cast<int>(i)) : kCrossColour;
    const std::int64_t rings = std::min(gs.num_groups(), kMaxRings);
    for (std::int64_t g = 0; g < rings; ++g) {
      Segments segs = segments_of(gs, g, scene.gpus_per_node, nullptr);
      add_segment_ring(graph, core::str_cat("s", std::to_string(i), "_g", std::to_string(g)), segs, group_fill(g),
                       [&](bool c) { return link_style(c, intra, cross); }, is_chain(set), above);
    }
    legend.heading(describe_set(set) + ": " + describe_groups(gs) + "; " + span_note(scene, gs));
    legend.text("drawn: the first " + std::to_string(rings) + " of " + std::to_string(gs.num_groups()) +
                " groups (all groups have the same shape)");
    legend.line(intra, kIntraStyle, kIntraWidth, "hop inside a node");
    legend.line(cross, kCrossStyle, kCrossWidth, "hop across nodes");
  }
  add_traffic_legend(legend, scene);
  add_legend(graph, legend, above);
  return graph.str();
}

core::Result<std::string> observed_summary(const Scene& scene) {
  auto compared = compare_all(scene, kMaxRings);
  if (!compared) return compared.status();
  const std::vector<Comparison>& comparisons = *compared;
  const Comparison& first = comparisons.front();
  DotGraph graph = start_graph(scene, "observed vs expected (collapsed)", first.headline, verdict_colour(first));
  Legend legend;
  legend.heading("Observed vs expected communicators, rings over node segments");
  legend.text(collapse_note(scene));
  std::string above;
  for (std::size_t i = 0; i < comparisons.size(); ++i) {
    const DimSet& set = scene.input->dim_sets[i];
    const core::GroupSet& gs = scene.sets[i];
    std::int64_t drawn[3] = {0, 0, 0};
    for (std::size_t k = 0; k < comparisons[i].groups.size(); ++k) {
      const MarkedGroup& g = comparisons[i].groups[k];
      if (drawn[static_cast<int>(g.status)]++ >= kMaxRings) continue;
      std::vector<std::int64_t> in_world;
      for (std::int64_t r : g.ranks) {
        if (r >= 0 && r < scene.world()) in_world.push_back(r);
      }
      Segments segs = segments_of(gs, 0, scene.gpus_per_node, &in_world);
      const char* fill = g.status == GroupStatus::kMissing ? kMissingFill : (g.status == GroupStatus::kMatched ? kMatchedFill : kNeutralFill);
      add_segment_ring(graph, core::str_cat("s", std::to_string(i), "_", status_name(g.status), std::to_string(k)), segs, fill,
                       [&](bool c) { return status_style(g.status, c); }, is_chain(set), above);
    }
    add_comparison_legend(legend, set, comparisons[i]);
    legend.text("drawn: at most " + std::to_string(kMaxRings) + " groups of each kind");
  }
  add_observed_coverage(legend, scene);
  add_legend(graph, legend, above);
  return graph.str();
}

}  // namespace

core::Result<std::string> build_summary_view(const Scene& scene) {
  if (scene.input->observed != nullptr) return observed_summary(scene);
  if (scene.input->view == View::kMesh) return mesh_summary(scene);
  return comm_summary(scene);
}

}  // namespace planck::viz::detail
