// DOT text: golden files for the bundled shapes, ring edge counts from the ring formula, ids,
// escaping and the helpers' formatting.

#include <doctest/doctest.h>

#include "tests/viz/viz_helpers.h"
#include "viz/dot_graph.h"
#include "viz/graphviz.h"
#include "viz/style.h"

namespace planck::viz::test {
namespace {

// Ring edges a comm view draws: n hops per group of n > 2, one two-headed edge for n = 2, none
// for n = 1; a pp pipeline has n - 1.
std::int64_t ring_edges(std::int64_t groups, std::int64_t n, bool chain) {
  if (n < 2) return 0;
  return groups * ((chain || n == 2) ? n - 1 : n);
}

std::string dot_of(const DiagramInput& in) {
  auto dot = build_dot(in);
  REQUIRE_MESSAGE(dot.is_ok(), dot.message());
  return *dot;
}

}  // namespace

TEST_CASE("viz_golden_hsdp_2x8_comm") {
  core::Mesh mesh = make_mesh({"dp_replicate", "dp_shard"}, {2, 8});
  DiagramInput in = input_for(mesh, 8, {"dp_shard"});
  in.title = "hsdp-2x8";
  in.dim_sets[0].role = "fsdp";
  CHECK_MESSAGE(golden_diff("hsdp_2x8_comm.dot", dot_of(in)) == "", golden_diff("hsdp_2x8_comm.dot", dot_of(in)));
}

TEST_CASE("viz_golden_hsdp_2x8_flattened_comm") {
  core::Mesh mesh = make_mesh({"dp_replicate", "dp_shard"}, {2, 8});
  DiagramInput in = input_for(mesh, 8, {"dp_replicate", "dp_shard"});
  in.title = "hsdp-2x8-flattened";
  in.dim_sets[0].role = "fsdp";
  std::string dot = dot_of(in);
  CHECK_MESSAGE(golden_diff("hsdp_2x8_flattened_comm.dot", dot) == "", golden_diff("hsdp_2x8_flattened_comm.dot", dot));
  // One 16-rank ring over two 8-GPU nodes leaves each node once: r7 -> r8 and r15 -> r0.
  CHECK(count(dot, "\"r7\" -> \"r8\" [color=\"#e31a1c\", style=\"dashed\"") == 1);
  CHECK(count(dot, "\"r15\" -> \"r0\" [color=\"#e31a1c\", style=\"dashed\"") == 1);
  CHECK(count(dot, "rings cross nodes: 2 of 16 hops on the network") == 1);
}

TEST_CASE("viz_golden_mesh_view_2x2x2") {
  core::Mesh mesh = make_mesh({"dp", "cp", "tp"}, {2, 2, 2});
  DiagramInput in = input_for(mesh, 4, {"tp"}, View::kMesh);
  std::string dot = dot_of(in);
  CHECK_MESSAGE(golden_diff("mesh_2x2x2_tp_mesh.dot", dot) == "", golden_diff("mesh_2x2x2_tp_mesh.dot", dot));
  // tp groups are {2k, 2k+1}: rank 5 is in group 2, labelled with its (dp, cp, tp) coordinates.
  CHECK(count(dot, "\"r5\" [label=\"r5\\n(1, 0, 1)\", fillcolor=\"" + std::string(group_fill(2)) + "\"]") == 1);
}

TEST_CASE("viz_golden_pp_chain") {
  core::Mesh mesh = make_mesh({"pp", "tp"}, {4, 2});
  DiagramInput in = input_for(mesh, 4, {"pp"});
  std::string dot = dot_of(in);
  CHECK_MESSAGE(golden_diff("pp4_tp2_pp_comm.dot", dot) == "", golden_diff("pp4_tp2_pp_comm.dot", dot));
  // Stages pass forward only: no edge from the last stage (r6) back to the first (r0).
  CHECK(count(dot, "\"r6\" -> \"r0\"") == 0);
}

TEST_CASE("viz_ring_edges_follow_ring_formula") {
  // Awkward sizes: 1, 2, 3, 7, 8, 16 ranks per group, several node sizes.
  for (std::int64_t n : {1, 2, 3, 7, 8, 16}) {
    for (std::int64_t gpn : {1, 3, 8}) {
      core::Mesh mesh = make_mesh({"dp_replicate", "dp_shard"}, {2, n});
      core::Mesh pp_mesh = make_mesh({"pp"}, {n});
      for (bool chain : {false, true}) {
        DiagramInput in = chain ? input_for(pp_mesh, gpn, {"pp"}) : input_for(mesh, gpn, {"dp_shard"});
        std::string dot = dot_of(in);
        std::int64_t groups = chain ? 1 : 2;
        INFO("n=" << n << " gpn=" << gpn << " chain=" << chain);
        CHECK(count(dot, "constraint=\"false\"") == ring_edges(groups, n, chain));
        // Every rank is a box with its stable id.
        for (std::int64_t r = 0; r < in.mesh->world(); ++r) CHECK(count(dot, "\n    \"" + rank_id(r) + "\" [") == 1);
      }
    }
  }
}

TEST_CASE("viz_cross_node_hops_counted_per_link_class") {
  // dp_shard=3 on nodes of 2 GPUs: group {0,1,2} hops 0->1 (node0), 1->2 and 2->0 (cross).
  core::Mesh mesh = make_mesh({"dp_shard"}, {3});
  std::string dot = dot_of(input_for(mesh, 2, {"dp_shard"}));
  CHECK(count(dot, "style=\"dashed\", penwidth=\"3\", constraint=\"false\"") == 2);
  CHECK(count(dot, "style=\"solid\", penwidth=\"1.5\", constraint=\"false\"") == 1);
  CHECK(count(dot, "1 hop inside a node") == 1);
  CHECK(count(dot, "2 hops across nodes") == 1);
}

TEST_CASE("viz_bad_input_is_an_error_value") {
  core::Mesh mesh = make_mesh({"tp"}, {4});
  DiagramInput in = input_for(mesh, 0, {"tp"});
  auto r = build_dot(in);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.message().find("gpus_per_node is 0") != std::string::npos);
  in.gpus_per_node = 4;
  in.dim_sets.clear();
  CHECK_FALSE(build_dot(in).is_ok());
  in.mesh = nullptr;
  CHECK_FALSE(build_dot(in).is_ok());
}

TEST_CASE("viz_dim_specs_resolve_and_label_roles") {
  core::Mesh mesh = make_mesh({"dp_replicate", "dp_shard", "cp", "tp"}, {2, 2, 2, 2});
  std::vector<core::RoleGroups> roles = {{"fsdp", {"dp_shard", "cp"}}, {"replicate", {"dp_replicate"}}, {"tp", {"tp"}}};
  auto sets = dim_sets_from_specs(mesh, {"dp_shard_cp", "tp", "cp,dp_replicate"}, roles);
  REQUIRE(sets.is_ok());
  REQUIRE(sets->size() == 3);
  CHECK((*sets)[0].key == "dp_shard,cp");
  CHECK((*sets)[0].role == "fsdp");
  CHECK((*sets)[1].role == "tp");
  CHECK((*sets)[2].key == "dp_replicate,cp");  // mesh order whatever order given
  auto bad = dim_sets_from_specs(mesh, {"tensor"}, roles);
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.message().find("tensor") != std::string::npos);
  // Default: the first role with groups of more than one rank.
  std::vector<DimSet> def = default_dim_sets(mesh, roles);
  REQUIRE(def.size() == 1);
  CHECK(def[0].role == "fsdp");
  core::Mesh only_tp = make_mesh({"dp_shard", "tp"}, {1, 4});
  std::vector<DimSet> fallback = default_dim_sets(only_tp, {});
  CHECK(fallback[0].key == "tp");
}

TEST_CASE("viz_dot_escapes_names") {
  DotGraph g("a\"b");
  g.add_node("x\\y", {{"label", "line1\nline \"2\""}});
  std::string s = g.str();
  CHECK(s.find("digraph \"a\\\"b\"") != std::string::npos);
  CHECK(s.find("\"x\\\\y\" [label=\"line1\\nline \\\"2\\\"\"]") != std::string::npos);
  CHECK(html_escape("<a&b>\"") == "&lt;a&amp;b&gt;&quot;");
}

TEST_CASE("viz_format_helpers") {
  CHECK(format_bytes(0) == "0 B");
  CHECK(format_bytes(999) == "999 B");
  CHECK(format_bytes(1500) == "1.50 kB");
  CHECK(format_bytes(12'300'000) == "12.3 MB");
  CHECK(format_bytes(512'000'000) == "512 MB");
  CHECK(format_bytes(1'210'000'000) == "1.21 GB");  // GB = 1e9 bytes
  CHECK(format_ranks({0, 1, 2, 3}) == "r0\u2013r3");
  CHECK(format_ranks({0, 8}) == "r0 r8");
  CHECK(format_ranks({0, 2, 4, 6, 8, 10, 12, 14, 16}) == "r0 r2 r4 \u2026 r16 (9 ranks)");
  CHECK(format_from_path("out.SVG").value() == Format::kSvg);
  CHECK(format_from_path("a.b/out.png").value() == Format::kPng);
  CHECK(format_from_path("out.dot").value() == Format::kDot);
  auto bad = format_from_path("out.jpg");
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.message().find("out.jpg") != std::string::npos);
  CHECK_FALSE(format_from_path("dir.svg/out").is_ok());
}

TEST_CASE("viz_headline_red_only_when_the_fsdp_crossing_is_avoidable") {
  // issue 17: tp 8 + FSDP over 8 nodes (torchtitan llama3_70b) must cross nodes with every
  // fsdp ring (tp fills each node), so the headline states it in grey, not as an alarm.
  const std::string red = "<FONT COLOR=\"" + std::string(kCrossColour) + "\"><B>fsdp (dp_shard) rings cross nodes";
  core::Mesh standard = make_mesh({"dp_shard", "tp"}, {8, 8});
  DiagramInput tp8 = input_for(standard, 8, {"dp_shard"});
  tp8.dim_sets[0].role = "fsdp";
  const std::string a = dot_of(tp8);
  CHECK(count(a, "rings cross nodes: 64 of 64 hops on the network") == 1);
  CHECK(count(a, red) == 0);
  // The same 4-rank fsdp group with pp placed inside it (dims [dp_shard, pp], 4 GPUs per node):
  // it would fit in a node under the frameworks' order, so its crossing is red, as verify's
  // shard-crosses-node warns.
  core::Mesh wrong = make_mesh({"dp_shard", "pp"}, {4, 2});
  DiagramInput avoidable = input_for(wrong, 4, {"dp_shard"});
  avoidable.dim_sets[0].role = "fsdp";
  CHECK(count(dot_of(avoidable), red) == 1);
}

}  // namespace planck::viz::test
