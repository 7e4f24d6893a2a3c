// Observed vs expected: matched, missing and unexpected groups, the flattened-HSDP verdict, and
// the drawing's marks.

#include <doctest/doctest.h>

#include "tests/viz/viz_helpers.h"
#include "viz/graphviz.h"
#include "viz/observed_match.h"

namespace planck::viz::test {
namespace {

core::ObservedGroup group(std::vector<std::int64_t> ranks, std::int64_t size = 0, std::string name = {}) {
  core::ObservedGroup g;
  g.size = size > 0 ? size : static_cast<std::int64_t>(ranks.size());
  g.complete = static_cast<std::int64_t>(ranks.size()) == g.size;
  g.ranks = std::move(ranks);
  g.name = std::move(name);
  g.source = "run.log";
  return g;
}

std::vector<std::int64_t> iota(std::int64_t from, std::int64_t to) {
  std::vector<std::int64_t> v;
  for (std::int64_t r = from; r < to; ++r) v.push_back(r);
  return v;
}

// torchtitan HSDP on 2 nodes x 8 (issue #711): fsdp = dp_shard, replicate = dp_replicate,
// dp = both flattened.
const std::vector<core::RoleGroups> kHsdpRoles = {
    {"fsdp", {"dp_shard"}}, {"replicate", {"dp_replicate"}}, {"dp", {"dp_replicate", "dp_shard"}}};
const DimSet kFsdp = {"dp_shard", {"dp_shard"}, "fsdp"};

}  // namespace

TEST_CASE("viz_observed_flattened_hsdp_is_called_out") {
  core::Mesh mesh = make_mesh({"dp_replicate", "dp_shard"}, {2, 8});
  // The bug: fully_shard got the flattened 1-D dp mesh, one 16-rank group.
  Comparison c = compare_with_observed(mesh, kFsdp, kHsdpRoles, true, {group(iota(0, 16), 0, "mesh_dp")}, 100);
  CHECK(c.expected_groups == 2);
  CHECK(c.matched == 0);
  CHECK(c.missing == 2);
  CHECK(c.unexpected == 1);
  CHECK(c.hsdp_flattened);
  CHECK(c.headline.find("HSDP RUNS AS FSDP") == 0);
  CHECK(c.headline.find("16-rank") != std::string::npos);
  REQUIRE(c.groups.size() == 3);
  CHECK(c.groups[0].status == GroupStatus::kMissing);
  CHECK(c.groups[0].ranks == iota(0, 8));
  CHECK(c.groups[2].status == GroupStatus::kUnexpected);
  CHECK(c.groups[2].flattened);
  CHECK(c.groups[2].note.find("dp_replicate,dp_shard") != std::string::npos);
  CHECK(c.groups[2].note.find("mesh_dp from run.log") != std::string::npos);
}

TEST_CASE("viz_observed_correct_hsdp_matches") {
  core::Mesh mesh = make_mesh({"dp_replicate", "dp_shard"}, {2, 8});
  std::vector<core::ObservedGroup> seen = {group(iota(0, 8)), group(iota(8, 16)), group(iota(0, 16))};
  for (std::int64_t i = 0; i < 8; ++i) seen.push_back(group({i, i + 8}));
  Comparison c = compare_with_observed(mesh, kFsdp, kHsdpRoles, true, seen, 100);
  CHECK(c.matched == 2);
  CHECK(c.missing == 0);
  CHECK(c.unexpected == 0);  // the eagerly created flattened dp group is legitimate here
  CHECK_FALSE(c.hsdp_flattened);
  REQUIRE(c.other_roles.size() == 2);
  CHECK(c.other_roles[0] == std::pair<std::string, std::int64_t>{"dp", 1});
  CHECK(c.other_roles[1] == std::pair<std::string, std::int64_t>{"replicate", 8});
  CHECK(c.headline.find("match the plan") != std::string::npos);
}

TEST_CASE("viz_observed_wrong_order_and_out_of_world") {
  // Groups of the right size but the wrong members (a transposed mesh), and a rank past the world.
  core::Mesh mesh = make_mesh({"dp_replicate", "dp_shard"}, {2, 4});
  std::vector<core::ObservedGroup> seen = {group({0, 2, 4, 6}), group({1, 3, 5, 7}), group({6, 7, 8, 9})};
  Comparison c = compare_with_observed(mesh, kFsdp, {}, false, seen, 100);
  CHECK(c.missing == 2);
  CHECK(c.unexpected == 3);
  CHECK(c.headline.find("MISMATCH: 2 of 2 expected") == 0);
  CHECK(c.groups[2].note.find("matches no group") != std::string::npos);
  CHECK(c.groups[4].note.find("rank 9 is outside the plan's world of 8") != std::string::npos);
}

TEST_CASE("viz_observed_same_ranks_twice_is_one_finding") {
  core::Mesh mesh = make_mesh({"dp_replicate", "dp_shard"}, {2, 8});
  core::ObservedGroup a = group(iota(0, 16), 0, "pg1"), b = group(iota(0, 16), 0, "pg2");
  a.id = "0x1";
  b.id = "0x2";
  Comparison c = compare_with_observed(mesh, kFsdp, kHsdpRoles, true, {a, b}, 100);
  CHECK(c.unexpected == 1);
}

TEST_CASE("viz_observed_partial_group_matches_its_group") {
  // An NCCL log that saw 3 of an 8-rank communicator's members.
  core::Mesh mesh = make_mesh({"dp_replicate", "dp_shard"}, {2, 8});
  Comparison c = compare_with_observed(mesh, kFsdp, kHsdpRoles, true, {group({9, 10, 12}, 8)}, 100);
  CHECK(c.matched == 1);
  CHECK(c.missing == 1);
  CHECK(c.groups[0].ranks == iota(8, 16));
  CHECK(c.groups[0].note.find("3 of 8 ranks seen") != std::string::npos);
  // Missing groups listed up to max_listed, counted in full.
  Comparison few = compare_with_observed(mesh, kFsdp, kHsdpRoles, true, {}, 1);
  CHECK(few.missing == 2);
  CHECK(few.groups.size() == 1);
}

TEST_CASE("viz_observed_view_marks_each_kind") {
  core::Mesh mesh = make_mesh({"dp_replicate", "dp_shard"}, {2, 8});
  std::vector<core::Observed> observed(1);
  observed[0].sources = {"run.log"};
  observed[0].ranks_seen = iota(0, 16);
  observed[0].groups = {group(iota(0, 16), 0, "mesh_dp")};
  DiagramInput in = input_for(mesh, 8, {"dp_shard"});
  in.dim_sets[0].role = "fsdp";
  in.roles = kHsdpRoles;
  in.hsdp = true;
  in.observed = &observed;
  auto dot = build_dot(in);
  REQUIRE_MESSAGE(dot.is_ok(), dot.message());
  CHECK_MESSAGE(golden_diff("hsdp_2x8_flattened_observed.dot", *dot) == "", golden_diff("hsdp_2x8_flattened_observed.dot", *dot));
  auto svg = render_dot(*dot, Format::kSvg);
  REQUIRE(svg.is_ok());
  // Two missing 8-rank rings + one unexpected 16-rank ring.
  CHECK(svg_count(*svg, "edge") == 8 + 8 + 16);
  CHECK(svg->find("HSDP RUNS AS FSDP") != std::string::npos);
  CHECK(count(*svg, ">UNEXPECTED<") == 1);
  CHECK(count(*svg, ">missing<") == 2);
}

}  // namespace planck::viz::test
