// Observed vs expected: the run's communicators drawn over the plan's mesh. Expected groups the
// run created are green rings, expected groups it did not create are grey dashed rings over
// red-filled boxes, and groups the plan does not have are thick red rings, each named in the
// legend; HSDP running as FSDP gets its own red headline.

#include <set>

#include "core/observed/observed_merge.h"
#include "viz/observed_match.h"
#include "viz/scene.h"
#include "viz/style.h"

namespace planck::viz::detail {

core::Result<std::vector<Comparison>> compare_all(const Scene& scene, std::int64_t max_listed) {
  // One run's files (e.g. a flight-recorder dump per rank) name the same communicators many
  // times: merged first, so each group is judged once.
  auto merged = core::observed::merge_observed(*scene.input->observed);
  if (!merged) return merged.status();
  std::vector<Comparison> out;
  for (const DimSet& set : scene.input->dim_sets) {
    out.push_back(compare_with_observed(*scene.mesh, set, scene.input->roles, scene.input->hsdp, merged->groups, max_listed));
  }
  return out;
}

std::string verdict_colour(const Comparison& c) {
  return (c.missing > 0 || c.unexpected > 0) ? kUnexpectedColour : kMatchedColour;
}

Attrs status_style(GroupStatus s, bool cross_node) {
  switch (s) {
    case GroupStatus::kMatched:
      return {{"color", kMatchedColour}, {"style", cross_node ? "dashed" : "solid"}, {"penwidth", "2"}};
    case GroupStatus::kMissing:
      return {{"color", kMissingColour}, {"style", "dashed"}, {"penwidth", "1.5"}};
    case GroupStatus::kUnexpected:
      return {{"color", kUnexpectedColour}, {"style", cross_node ? "dashed" : "bold"}, {"penwidth", "3.5"}};
  }
  return {};
}

void add_comparison_legend(Legend& legend, const DimSet& set, const Comparison& c) {
  legend.heading(describe_set(set) + ": " + std::to_string(c.expected_groups) + " expected groups");
  legend.line(kMatchedColour, "solid", "2", "\u2714 " + std::to_string(c.matched) + " expected and observed");
  legend.line(kMissingColour, "dashed", "1.5", "\u2718 " + std::to_string(c.missing) + " expected but NOT observed (red boxes)");
  legend.line(kUnexpectedColour, "bold", "3.5", "\u2718 " + std::to_string(c.unexpected) + " observed but NOT expected");
  int listed = 0;
  for (const MarkedGroup& g : c.groups) {
    if (g.status != GroupStatus::kUnexpected || ++listed > 8) continue;
    legend.text("   unexpected " + format_ranks(g.ranks) + " (" + std::to_string(g.size) + " ranks) " + g.note);
  }
  if (listed > 8) legend.text("   \u2026 " + std::to_string(listed - 8) + " more unexpected groups");
  if (!c.other_roles.empty()) {
    std::string roles;
    for (const auto& [role, n] : c.other_roles) roles += (roles.empty() ? "" : ", ") + role + " \u00d7" + std::to_string(n);
    legend.text("also observed, matching other roles of the plan (not drawn): " + roles);
  }
}

void add_observed_coverage(Legend& legend, const Scene& scene) {
  std::set<std::int64_t> seen;
  std::vector<std::string> sources;
  for (const core::Observed& o : *scene.input->observed) {
    seen.insert(o.ranks_seen.begin(), o.ranks_seen.end());
    sources.insert(sources.end(), o.sources.begin(), o.sources.end());
  }
  std::string files;
  for (std::size_t i = 0; i < sources.size() && i < 4; ++i) files += (i ? ", " : "") + sources[i];
  if (sources.size() > 4) files += ", \u2026";
  legend.text("Observed: " + (files.empty() ? std::string("(no sources named)") : files) +
              (seen.empty() ? std::string() : "; ranks seen: " + std::to_string(seen.size()) + " of " + std::to_string(scene.world())));
}

core::Result<std::string> build_observed_view(const Scene& scene) {
  auto compared = compare_all(scene, scene.world());
  if (!compared) return compared.status();
  const std::vector<Comparison>& comparisons = *compared;
  const Comparison& first = comparisons.front();
  DotGraph graph = start_graph(scene, "observed vs expected", first.headline, verdict_colour(first));

  std::set<std::int64_t> missing_ranks;
  for (const MarkedGroup& g : first.groups) {
    if (g.status == GroupStatus::kMissing) missing_ranks.insert(g.ranks.begin(), g.ranks.end());
  }
  add_rank_grid(graph, scene, [&](std::int64_t r) {
    return std::string(missing_ranks.count(r) ? kMissingFill : kMatchedFill);
  });

  Legend legend;
  legend.heading("Observed vs expected communicators");
  describe_boxes(legend, scene);
  legend.swatch(kMatchedFill, "rank whose expected " + describe_set(scene.input->dim_sets.front()) + " group was observed");
  legend.swatch(kMissingFill, "rank whose expected group was NOT observed");
  for (std::size_t i = 0; i < comparisons.size(); ++i) {
    const DimSet& set = scene.input->dim_sets[i];
    for (const MarkedGroup& g : comparisons[i].groups) {
      std::vector<std::string> ids;
      std::vector<std::int64_t> nodes;
      for (std::int64_t r : g.ranks) {
        if (r < 0 || r >= scene.world()) continue;
        ids.push_back(rank_id(r));
        nodes.push_back(scene.node_of(r));
      }
      // The mark goes on a hop across nodes when there is one: long edges leave room for it.
      bool labelled = false;
      const bool any_cross = count_hops(nodes, is_chain(set)).cross > 0;
      add_ring(graph, ids, nodes, is_chain(set), [&](bool cross) {
        Attrs a = status_style(g.status, cross);
        if (!labelled && g.status != GroupStatus::kMatched && cross == any_cross) {
          a.push_back({"xlabel", g.status == GroupStatus::kMissing ? "missing" : "UNEXPECTED"});
          a.push_back({"fontcolor", g.status == GroupStatus::kMissing ? kMissingColour : kUnexpectedColour});
          labelled = true;
        }
        return a;
      });
    }
    add_comparison_legend(legend, set, comparisons[i]);
  }
  add_observed_coverage(legend, scene);
  add_legend(graph, legend, rank_id(scene.world() - 1));
  return graph.str();
}

}  // namespace planck::viz::detail
