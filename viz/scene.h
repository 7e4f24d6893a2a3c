#pragma once
// Internal to viz/: what every view shares — the resolved input (Scene), the rank grid (nodes
// as clusters, GPUs as boxes), ring edges styled by link class, and the legend table.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/mesh/mesh.h"
#include "viz/diagram.h"
#include "viz/dot_graph.h"

namespace planck::viz {
struct Comparison;
enum class GroupStatus;
}  // namespace planck::viz

namespace planck::viz::detail {

struct Scene {
  const DiagramInput* input = nullptr;
  const core::Mesh* mesh = nullptr;
  std::int64_t gpus_per_node = 1;
  std::int64_t nodes = 1;                 // ceil(world / gpus_per_node)
  std::vector<core::GroupSet> sets;       // one per input->dim_sets entry
  std::vector<int> label_dims;            // mesh dims of size > 1: the coordinates on each box
  bool collapsed = false;                 // world > collapse_above

  std::int64_t world() const { return mesh->world(); }
  std::int64_t node_of(std::int64_t rank) const { return rank / gpus_per_node; }
};

// An HTML-like table: the legend every view puts under the diagram.
class Legend {
 public:
  void heading(const std::string& text);
  void text(const std::string& text);
  void swatch(const std::string& fill, const std::string& text);
  void line(const std::string& colour, const std::string& style, const std::string& width, const std::string& text);
  std::string html() const;

 private:
  std::vector<std::string> rows_;
};

// Graph with fonts and the title (plan, mesh, view) set; `headline` (may be "") is a second,
// coloured title line for the verdict of an observed view.
DotGraph start_graph(const Scene& scene, const std::string& view_name, const std::string& headline = {},
                     const std::string& headline_colour = {});
// The legend node, placed under node `below` (the drawing's lowest box; "" = anywhere).
void add_legend(DotGraph& graph, const Legend& legend, const std::string& below);

// Every rank as a box "r3\n(0,3)" inside its node's cluster, arranged in a grid by invisible
// edges so every view of one mesh has the same layout. `fill(rank)` gives the box colour and
// `extra(rank)` an optional third label line.
// `order_nodes`: also chain the nodes of a grid row left to right. Only for drawings with no
// rank-to-rank edge between nodes: Graphviz 2.42 aborts (class2.c merge_chain) on a flat
// ordering edge parallel to a ring hop between two clusters.
void add_rank_grid(DotGraph& graph, const Scene& scene, const std::function<std::string(std::int64_t)>& fill,
                   const std::function<std::string(std::int64_t)>& extra = {}, bool order_nodes = false);

// Nodes per row of the grid: all of them up to 4, else ceil(sqrt(nodes)).
std::int64_t grid_node_columns(const Scene& scene);

// Members in ring order; hop i goes members[i] -> members[i+1], closing back to members[0]
// unless `chain`. A group of 2 is one two-headed edge, a group of 1 has none.
struct HopCounts {
  std::int64_t intra = 0;
  std::int64_t cross = 0;
};
using EdgeStyle = std::function<Attrs(bool cross_node)>;
HopCounts add_ring(DotGraph& graph, const std::vector<std::string>& ids, const std::vector<std::int64_t>& nodes,
                   bool chain, const EdgeStyle& style);
// Hops a ring over `members` would have, by link class, without drawing it.
HopCounts count_hops(const std::vector<std::int64_t>& nodes, bool chain);

// Link-class edge attributes in the given colour (solid thin inside a node, dashed thick across).
Attrs link_style(bool cross_node, const std::string& intra_colour, const std::string& cross_colour);

// pp groups are pipelines (stage i sends to stage i+1), not rings.
bool is_chain(const DimSet& set);

// "dp_shard" or "fsdp (dp_shard)".
std::string describe_set(const DimSet& set);
// "2 groups of 8 ranks", "1 group of 16 ranks".
std::string describe_groups(const core::GroupSet& gs);

// Legend pieces shared by the views (mesh_view.cc).
std::vector<std::string> coord_names(const Scene& scene);
void describe_boxes(Legend& legend, const Scene& scene);
void add_group_swatches(Legend& legend, const core::GroupSet& gs);
std::string span_note(const Scene& scene, const core::GroupSet& gs);
// Most nodes one group of `gs` spans: counted from the members while that takes at most
// kExactSpanMembers member reads, else from the mesh's strides (core::placement_of), so a
// drawing of 2^30 ranks costs what its few boxes cost, not the world (issue 34).
inline constexpr std::int64_t kExactSpanMembers = std::int64_t{1} << 22;
std::int64_t max_span(const Scene& scene, const core::GroupSet& gs);
void add_traffic_legend(Legend& legend, const Scene& scene);

// Observed comparison pieces shared by the full and the collapsed view (observed_view.cc).
core::Result<std::vector<Comparison>> compare_all(const Scene& scene, std::int64_t max_listed);
std::string verdict_colour(const Comparison& c);
Attrs status_style(GroupStatus s, bool cross_node);
void add_comparison_legend(Legend& legend, const DimSet& set, const Comparison& c);
void add_observed_coverage(Legend& legend, const Scene& scene);

// Views (one file each).
core::Result<std::string> build_mesh_view(const Scene& scene);
core::Result<std::string> build_comm_view(const Scene& scene);
core::Result<std::string> build_observed_view(const Scene& scene);
core::Result<std::string> build_summary_view(const Scene& scene);

}  // namespace planck::viz::detail
