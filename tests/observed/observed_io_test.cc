// planck-observed/1 files: round trip, validation errors with positions, format detection,
// merging one run's files.

#include <doctest/doctest.h>

#include <string>

#include "io/observed_io.h"
#include "core/observed/observed_merge.h"

using planck::core::Observed;
using planck::core::ObservedGroup;
using namespace planck::io;
using namespace planck::core::observed;
using Ranks = std::vector<std::int64_t>;

namespace {

Observed sample() {
  Observed o;
  o.sources = {"run.log"};
  o.world = 16;
  o.ranks_seen = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  for (std::int64_t r = 0; r < 16; ++r) o.hosts[r] = r < 8 ? "gpu-a17" : "gpu-a18";
  ObservedGroup g;
  g.ranks = {0, 1, 2, 3, 4, 5, 6, 7};
  g.size = 8;
  g.complete = true;
  g.id = "0x7f3a";
  g.name = "mesh_dp_shard";
  g.source = "run.log";
  g.line = 42;
  o.groups.push_back(g);
  ObservedGroup p;
  p.ranks = {3};
  p.size = 2;
  p.source = "run.log";
  o.groups.push_back(p);
  return o;
}

}  // namespace

TEST_CASE("observed_json_round_trip") {
  const std::string text = observed_to_json(sample());
  CHECK(text.find("\"format\": \"planck-observed/1\"") != std::string::npos);
  CHECK(text.find("\"10\":\"gpu-a18\"") != std::string::npos);
  auto back = parse_observed_json(text, "obs.json");
  REQUIRE_MESSAGE(back.is_ok(), (back.is_ok() ? "" : back.message()));
  CHECK(back->world == 16);
  CHECK(back->hosts.at(9) == "gpu-a18");
  REQUIRE(back->groups.size() == 2);
  CHECK(back->groups[0].ranks == Ranks{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(back->groups[0].line == 42);         // the log's line, not the JSON's
  CHECK(back->groups[0].source == "run.log");
  CHECK_FALSE(back->groups[1].complete);
  CHECK(observed_to_json(*back) == text);
}

TEST_CASE("observed_json_spec_example_reads") {
  // docs/observed.md verbatim (with the id shortened as printed there).
  const char* spec = R"({ "format": "planck-observed/1", "sources": ["run.log"], "world": 16,
  "ranks_seen": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
  "hosts": { "0": "gpu-a17", "8": "gpu-a18" },
  "groups": [ { "ranks": [0, 1, 2, 3, 4, 5, 6, 7], "size": 8, "complete": true,
                "id": "0x7f3a...", "name": "mesh_dp_shard" } ] })";
  auto o = parse_observed_json(spec, "spec.json");
  REQUIRE_MESSAGE(o.is_ok(), (o.is_ok() ? "" : o.message()));
  CHECK(o->groups[0].source == "spec.json");
  CHECK(o->groups[0].line == 4);
  CHECK(o->hosts.size() == 2);
}

TEST_CASE("observed_json_errors_name_file_line_and_value") {
  struct Case {
    const char* text;
    const char* needle;
  };
  const Case cases[] = {
      {R"({"format": "planck-observed/2"})", "spec.json:1:12: /format"},
      {R"({"format": "planck-observed/1", "grups": []})", "did you mean 'groups'"},
      {"{\"format\": \"planck-observed/1\",\n \"groups\": [{\"ranks\": [0, 0]}]}", "spec.json:2:23: /groups/0/ranks: rank 0 is listed twice"},
      {R"({"format": "planck-observed/1", "groups": [{"ranks": [0, 1], "size": 1}]})", "size 1 is smaller than the 2 ranks"},
      {R"({"format": "planck-observed/1", "groups": [{"ranks": [0], "size": 2, "complete": true}]})", "1 of 2 ranks are listed"},
      {R"({"format": "planck-observed/1", "groups": [{"ranks": [-1]}]})", "expected a rank"},
      {R"({"format": "planck-observed/1", "groups": [{"ranks": [3000000000]}]})", "expected a rank"},
      {R"({"format": "planck-observed/1", "world": 4, "groups": [{"ranks": [2, 7]}]})", "does not fit the world of 4"},
      {R"({"format": "planck-observed/1", "hosts": {"x": "h"}})", "key 'x' is not a rank"},
      {R"({"format": "planck-observed/1", )", "not valid JSON"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    auto o = parse_observed_json(c.text, "spec.json");
    REQUIRE_FALSE(o.is_ok());
    CHECK_MESSAGE(o.message().find(c.needle) != std::string::npos, o.message());
  }
}

TEST_CASE("observed_detect_format") {
  CHECK(detect_format("\xEF\xBB\xBF  {\"format\": \"planck-observed/1\"}") == ObservedFormat::kPlanckObserved);
  CHECK(detect_format("{\"comm_lib_version\": \"2.21.5\", \"entries\": []}") == ObservedFormat::kFlightRecorderJson);
  CHECK(detect_format("\x80\x02}q\x00.") == ObservedFormat::kFlightRecorderPickle);
  CHECK(detect_format("[rank0]:h:1:2 [0] NCCL INFO comm ...") == ObservedFormat::kNcclLog);
  CHECK(std::string(format_name(ObservedFormat::kNcclLog)) == "nccl-log");
}

TEST_CASE("observed_merge_one_run") {
  // Two flight-recorder dumps (ranks 0 and 1) list the same world and tp group by pg name.
  Observed a, b;
  a.sources = {"rank_0"};
  b.sources = {"rank_1"};
  a.world = b.world = 2;
  a.ranks_seen = {0};
  b.ranks_seen = {1};
  ObservedGroup g;
  g.ranks = {0, 1};
  g.size = 2;
  g.complete = true;
  g.id = "0";
  g.name = "default_pg";
  a.groups.push_back(g);
  b.groups.push_back(g);
  // Two logs each saw half of an 8-rank communicator with commId 0xa.
  ObservedGroup h1, h2;
  h1.id = h2.id = "0xa";
  h1.size = h2.size = 8;
  h1.ranks = {0, 1, 2, 3};
  h2.ranks = {4, 5, 6, 7};
  a.groups.push_back(h1);
  b.groups.push_back(h2);
  auto m = merge_observed({a, b});
  REQUIRE(m.is_ok());
  CHECK(m->sources == std::vector<std::string>{"rank_0", "rank_1"});
  CHECK(m->ranks_seen == Ranks{0, 1});
  REQUIRE(m->groups.size() == 2);
  CHECK(m->groups[1].ranks == Ranks{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(m->groups[1].complete);
  // Files of different runs disagree: an error naming both.
  b.world = 4;
  auto bad = merge_observed({a, b});
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.message().find("rank_0") != std::string::npos);
  CHECK(bad.message().find("rank_1") != std::string::npos);
  b.world = 2;
  a.hosts[0] = "x";
  b.hosts[0] = "y";
  CHECK_FALSE(merge_observed({a, b}).is_ok());
}

TEST_CASE("observed_read_file_detects_each_kind") {
  const std::string d = PLANCK_OBSERVED_DATA;
  CHECK(read_observed_file(d + "/synth/nccl-2.21.log").is_ok());
  CHECK(read_observed_file(d + "/fr/json/rank_0").is_ok());
  CHECK(read_observed_file(d + "/fr/pickle/rank_0").is_ok());
  auto dir = read_observed_file(d + "/fr");
  REQUIRE_FALSE(dir.is_ok());
  CHECK(dir.message().find("directory") != std::string::npos);
}
