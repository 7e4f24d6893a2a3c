// Meta Lingua's dp_rank bug (facebookresearch/lingua issues #58/#66, fixed in d1fd421):
//   dp_rank = dp_rank * dp_degree + dp_shard_rank   while dp_degree is still |dp_replicate|
// i.e. dp_rank = r * R + s instead of r * S + s (R = dp_replicate, S = dp_shard). The plans in
// plans/lingua-*.json are checked here exactly as users run them.

#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "tests/rank/rank_test_util.h"

using namespace planck;
using planck::test::coord_of;
using planck::test::witness_value;

namespace {

const std::vector<std::string> kBefore = {"dp_rank = dp_replicate.rank", "dp_degree = dp_replicate.size",
                                          "dp_rank = dp_rank * dp_degree + dp_shard.rank",
                                          "dp_degree = dp_degree * dp_shard.size"};
const std::vector<std::string> kAfter = {"dp_rank = dp_replicate.rank", "dp_degree = dp_replicate.size",
                                         "dp_rank = dp_rank * dp_shard.size + dp_shard.rank",
                                         "dp_degree = dp_degree * dp_shard.size"};

test::RankRun run_plan_file(const std::string& name) {
  std::ifstream in(std::string(PLANCK_PLANS_DIR) + "/" + name);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return test::run_rank_text(ss.str());
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

TEST_CASE("rank_lingua: 8x4 (issue #58): rank 31 gets dp_rank 59 >= 32") {
  const auto run = run_plan_file("lingua-8x4-before.json");
  REQUIRE(run.loaded);
  const auto* d = run.find("rank-out-of-range");
  REQUIRE(d);
  // Largest: r = 7, s = 3 -> 7 * 8 + 3 = 59, at rank 7 * 4 + 3 = 31.
  CHECK(d->witness->ranks == std::vector<std::int64_t>{7 * 4 + 3});
  CHECK(witness_value(*d, "dp_rank") == 7 * 8 + 3);
  CHECK(witness_value(*d, "dp_degree") == 32);
  CHECK(coord_of(*d, 0, "dp_replicate") == 7);
  CHECK(coord_of(*d, 0, "dp_shard") == 3);
  CHECK(d->pointer == "/rank_program/steps/2");
  CHECK(d->line > 0);
  // r*8 + s over s < 4 never reaches 4..7: a gap; no two coordinates share a value (8 > 4).
  CHECK(witness_value(*run.find("rank-gap"), "missing_dp_rank") == 4);
  CHECK(sorted(run.rules()) == std::vector<std::string>{"rank-gap", "rank-out-of-range"});
}

TEST_CASE("rank_lingua: 2x4: replicas 0 and 1 collide on dp_ranks 2 and 3, 6 and 7 never read") {
  const auto run = run_plan_file("lingua-2x4-before.json");
  const auto* c = run.find("rank-collision");
  REQUIRE(c);
  // r*2 + s: (0, 2) and (1, 0) both give 2, ranks 2 and 4.
  CHECK(c->witness->ranks == std::vector<std::int64_t>{0 * 4 + 2, 1 * 4 + 0});
  CHECK(witness_value(*c, "dp_rank") == 2);
  CHECK(coord_of(*c, 0, "dp_replicate") == 0);
  CHECK(coord_of(*c, 1, "dp_replicate") == 1);
  // values {0,1,2,3} and {2,3,4,5}: 6 is the smallest never given.
  CHECK(witness_value(*run.find("rank-gap"), "missing_dp_rank") == 6);
  CHECK(sorted(run.rules()) == std::vector<std::string>{"rank-collision", "rank-gap"});
}

TEST_CASE("rank_lingua: 4x4 is right by coincidence: rank-latent names 8x4, rank 31, dp_rank 59") {
  const auto run = run_plan_file("lingua-4x4-before.json");
  REQUIRE(run.rules() == std::vector<std::string>{"rank-latent"});
  const auto* d = run.find("rank-latent");
  CHECK(d->severity == core::Severity::kWarning);
  CHECK(d->message.find("fails for dp_replicate=8, dp_shard=4: rank 31 gets dp_rank 59 >= 32") != std::string::npos);
  CHECK(d->witness->ranks == std::vector<std::int64_t>{31});
  CHECK(witness_value(*d, "dp_replicate.size") == 8);
  CHECK(d->hint.find("dp_rank = dp_replicate.rank * dp_shard.size + dp_shard.rank") != std::string::npos);
}

TEST_CASE("rank_lingua: the fixed program is clean on every mesh") {
  for (const char* name : {"lingua-8x4-after.json", "lingua-2x4-after.json", "lingua-4x4-after.json"}) {
    CAPTURE(name);
    const auto run = run_plan_file(name);
    REQUIRE(run.loaded);
    CHECK(run.diagnostics.items().empty());
  }
}

TEST_CASE("rank_lingua: awkward sizes: r*R + s is wrong exactly when R > 1 and R != S") {
  for (std::int64_t r : {1, 2, 3, 7, 8, 16}) {
    for (std::int64_t s : {1, 2, 3, 7, 8, 16}) {
      CAPTURE(r);
      CAPTURE(s);
      const auto before = test::run_rank({"dp_replicate", "dp_shard"}, {r, s}, kBefore);
      CHECK(before.diagnostics.has_errors() == (r > 1 && r != s));
      if (!before.diagnostics.has_errors()) CHECK(before.find("rank-latent"));
      // R > S reaches past R*S - 1 (max R + S - 1 >= R S iff R > S, for R > 1).
      CHECK(static_cast<bool>(before.find("rank-out-of-range")) == (r > 1 && r > s));
      // R < S: in range but duplicated.
      CHECK(static_cast<bool>(before.find("rank-collision")) == (r > 1 && r < s));
      const auto after = test::run_rank({"dp_replicate", "dp_shard"}, {r, s}, kAfter);
      CHECK(after.diagnostics.items().empty());
    }
  }
}
