// Mesh view: where every rank sits (node, coordinates) and which group of the chosen dims it
// belongs to, by colour.

#include <algorithm>

#include "core/mesh/placement.h"
#include "viz/scene.h"
#include "viz/style.h"
#include "viz/traffic.h"
#include "core/base/str_cat.h"

namespace planck::viz::detail {

std::vector<std::string> coord_names(const Scene& scene) {
  std::vector<std::string> names;
  for (int d : scene.label_dims) names.push_back(scene.mesh->dims()[d]);
  return names;
}

void describe_boxes(Legend& legend, const Scene& scene) {
  if (!scene.label_dims.empty()) legend.text("Box: rank and coordinates " + tuple(coord_names(scene)));
  legend.text("Cluster: one node of " + std::to_string(scene.gpus_per_node) + " GPUs (block placement: rank r on node r / " +
              std::to_string(scene.gpus_per_node) + ")");
}

void add_group_swatches(Legend& legend, const core::GroupSet& gs) {
  const std::int64_t shown = std::min<std::int64_t>(gs.num_groups(), kGroupColours);
  for (std::int64_t g = 0; g < shown; ++g) {
    legend.swatch(group_fill(g), core::str_cat("g", std::to_string(g), ": ", format_ranks(gs.members(g))));
  }
  if (gs.num_groups() > kGroupColours) {
    legend.text("colours repeat every " + std::to_string(kGroupColours) + " groups (" +
                std::to_string(gs.num_groups()) + " groups)");
  }
}

std::int64_t max_span(const Scene& scene, const core::GroupSet& gs) {
  const std::int64_t looks = std::min(gs.num_groups(), scene.gpus_per_node);
  if (gs.group_size() <= kExactSpanMembers / std::max<std::int64_t>(1, looks)) {
    return gs.max_nodes_spanned(scene.gpus_per_node);
  }
  return core::placement_of(*scene.mesh, gs.dims(), scene.gpus_per_node).nodes_spanned;
}

std::string span_note(const Scene& scene, const core::GroupSet& gs) {
  std::int64_t span = max_span(scene, gs);
  return span <= 1 ? "every group stays inside one node"
                   : "a group spans up to " + std::to_string(span) + " nodes";
}

void add_traffic_legend(Legend& legend, const Scene& scene) {
  if (scene.input->schedule == nullptr) return;
  std::vector<HopTraffic> traffic = hop_traffic(*scene.input->schedule, *scene.mesh, scene.gpus_per_node);
  legend.heading("Traffic per optimizer step (--sim; ring bytes each rank sends to the next)");
  if (traffic.empty()) {
    legend.text("the schedule has no collectives");
    return;
  }
  for (const HopTraffic& t : traffic) {
    std::string dims;
    for (const auto& d : t.dims) dims += (dims.empty() ? "" : ",") + d;
    legend.text((t.role == dims ? t.role : t.role + " (" + dims + ")") + " " + core::op_name(t.op) + " " + core::phase_name(t.phase) + ": " +
                std::to_string(t.calls_per_step) + " \u00d7 " + format_bytes(t.bytes_per_call) + " in groups of " +
                std::to_string(t.group_size) + " \u2192 " + format_bytes(t.bytes_per_hop_per_step) + " per hop, " +
                (t.crosses_nodes ? "crosses nodes" : "inside a node"));
  }
  LinkClassBytes b = bytes_by_link_class(traffic);
  legend.line(kIntraColour, kIntraStyle, kIntraWidth, "inside a node (NVLink): " + format_bytes(b.intra) + " per rank per step");
  legend.line(kCrossColour, kCrossStyle, kCrossWidth,
              "groups crossing nodes (network-bound): " + format_bytes(b.cross) + " per rank per step");
}

core::Result<std::string> build_mesh_view(const Scene& scene) {
  DotGraph graph = start_graph(scene, "mesh view");
  const core::GroupSet& first = scene.sets.front();
  add_rank_grid(
      graph, scene, [&](std::int64_t r) { return std::string(group_fill(first.group_of(r))); },
      [&](std::int64_t r) {
        std::string more;
        for (std::size_t i = 1; i < scene.sets.size(); ++i) {
          more += (more.empty() ? "" : " ") + scene.input->dim_sets[i].key + " g" +
                  std::to_string(scene.sets[i].group_of(r));
        }
        return more;
      },
      true);  // no edges between ranks: the nodes can be chained in order
  Legend legend;
  legend.heading("Mesh view");
  describe_boxes(legend, scene);
  const DimSet& set = scene.input->dim_sets.front();
  legend.text("Fill: group of " + describe_set(set) + " \u2014 " + describe_groups(first) + "; " + span_note(scene, first));
  add_group_swatches(legend, first);
  for (std::size_t i = 1; i < scene.sets.size(); ++i) {
    legend.text("Label \"" + scene.input->dim_sets[i].key + " gN\": group of " + describe_set(scene.input->dim_sets[i]) +
                " \u2014 " + describe_groups(scene.sets[i]) + "; " + span_note(scene, scene.sets[i]));
  }
  add_traffic_legend(legend, scene);
  add_legend(graph, legend, rank_id(scene.world() - 1));
  return graph.str();
}

}  // namespace planck::viz::detail
