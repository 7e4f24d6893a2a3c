// Hostile inputs (issue 9): each must end in a clear error naming the problem, or in the correct
// answer, never a crash. Time and peak memory are measured outside the suite
// (docs/performance.md, "Hostile inputs": /usr/bin/time -v per case) rather than asserted, which
// would be flaky on a shared machine; ctest's --timeout catches a hang.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "core/mesh/plan_mesh.h"
#include "core/plan/json_doc.h"
#include "io/nccl_log.h"
#include "core/plan/plan_load.h"
#include "tests/temp_dir.h"

using namespace planck::core;

namespace {
std::string plan_with_mesh(const std::string& dims, const std::string& shape) {
  return R"({"format": "planck/1", "name": "hostile",
  "cluster": {"nodes": 1, "gpus_per_node": 8, "gpu": "h100-sxm"},
  "mesh": {"dims": [)" + dims + R"(], "shape": [)" + shape + R"(]},
  "parallelism": {"data_parallel": "ddp"}})";
}

bool any_message_has(const Diagnostics& d, const std::string& rule, const std::string& text) {
  for (const Diagnostic& x : d.items())
    if (x.rule == rule && x.message.find(text) != std::string::npos) return true;
  return false;
}
}  // namespace

TEST_CASE("fuzz_hostile: mesh sizes whose product passes 2^64 are mesh-invalid-dim, not a wrap") {
  // 2^32 * 2^32 * 2 = 2^65: every size fits int64, the product wraps to 0 in 64-bit arithmetic.
  LoadedPlan loaded = load_plan_text(plan_with_mesh(R"("pp", "dp", "tp")", "4294967296, 4294967296, 2"), "p.json");
  REQUIRE(loaded.plan);
  Diagnostics d;
  CHECK_FALSE(plan_mesh(*loaded.plan, &d));
  CHECK(any_message_has(d, "mesh-invalid-dim", "exceeds 2^31 - 1"));
}

TEST_CASE("fuzz_hostile: a size past 2^64 in the JSON text is a schema error, not a wrap") {
  // 18446744073709551617 = 2^64 + 1, which wraps to 1 in uint64.
  LoadedPlan loaded = load_plan_text(plan_with_mesh(R"("dp")", "18446744073709551617"), "p.json");
  Diagnostics d = loaded.diagnostics;
  if (loaded.plan) plan_mesh(*loaded.plan, &d);
  CHECK(d.has_errors());
  CHECK_FALSE((loaded.plan && plan_mesh(*loaded.plan, nullptr)));
}

TEST_CASE("fuzz_hostile: 10^6 mesh dims of size 1 give the right world or a clear error") {
  constexpr int kDims = 1'000'000;
  std::string dims, shape;
  dims.reserve(kDims * 10);
  shape.reserve(kDims * 3);
  for (int i = 0; i < kDims; ++i) {
    dims += (i ? ", \"d" : "\"d") + std::to_string(i) + "\"";
    shape += i ? ", 1" : "1";
  }
  LoadedPlan loaded = load_plan_text(plan_with_mesh(dims, shape), "p.json");
  Diagnostics d = loaded.diagnostics;
  std::optional<Mesh> mesh;
  if (loaded.plan) mesh = plan_mesh(*loaded.plan, &d);
  // d0..d999999 are no mesh dim planck knows (docs/plan-format.md names them), so the correct answer is
  // mesh-invalid-dim for the dims; never a mesh, and never a mesh claiming other than 1 x ... x 1.
  if (mesh) CHECK(mesh->world() == 1);
  CHECK(d.has_rule("mesh-invalid-dim"));
  CHECK_FALSE(mesh);
}

TEST_CASE("fuzz_hostile: 100,000-deep nesting is a plan-syntax error naming the depth") {
  constexpr int kDepth = 100'000;
  std::string text = "{\"format\": " + std::string(kDepth, '[') + std::string(kDepth, ']') + "}";
  JsonParseError err;
  CHECK_FALSE(JsonDoc::parse(text, &err));
  CHECK(err.message.find("nesting deeper than") != std::string::npos);
  LoadedPlan loaded = load_plan_text(text, "deep.json");
  CHECK_FALSE(loaded.plan);
  CHECK(loaded.diagnostics.has_rule("plan-syntax"));
}

TEST_CASE("fuzz_hostile: NUL bytes and invalid UTF-8 are plan-syntax errors with a position") {
  const std::string nul = std::string("{\"format\": \"planck/1\", \"name\": \"a") + '\0' + "b\"}";
  const std::string bad_utf8 = "{\"format\": \"planck/1\",\n \"name\": \"\xff\xfe\"}";
  const std::string overlong = "{\"name\": \"\xc0\xaf\"}";  // overlong '/' (RFC 3629 forbids)
  const std::string lone_surrogate = "{\"name\": \"\xed\xa0\x80\"}";  // U+D800 encoded directly
  for (const std::string& text : {nul, bad_utf8, overlong, lone_surrogate}) {
    CAPTURE(text.size());
    LoadedPlan loaded = load_plan_text(text, "bytes.json");
    CHECK_FALSE(loaded.plan);
    REQUIRE(loaded.diagnostics.has_rule("plan-syntax"));
    CHECK(loaded.diagnostics.items().front().line >= 1);
  }
  // The invalid bytes of bad_utf8 sit on line 2.
  CHECK(load_plan_text(bad_utf8, "bytes.json").diagnostics.items().front().line == 2);
}

TEST_CASE("fuzz_hostile: a 100 MB plan file loads with every note") {
  namespace fs = std::filesystem;
  fs::path dir = planck_test::process_temp_dir("planck-hostile");
  fs::create_directories(dir);
  fs::path path = dir / "big.json";
  constexpr int kNotes = 1'000'000;
  const std::string note(96, 'x');  // 100 bytes per entry with quotes, comma and space
  {
    std::ofstream out(path, std::ios::binary);
    out << R"({"format": "planck/1", "name": "big", "notes": [)";
    for (int i = 0; i < kNotes; ++i) out << (i ? ", \"" : "\"") << note << '"';
    out << R"(], "cluster": {"nodes": 1, "gpus_per_node": 8, "gpu": "h100-sxm"},
      "mesh": {"dims": ["dp"], "shape": [8]}, "parallelism": {"data_parallel": "ddp"}})";
  }
  CHECK(fs::file_size(path) > 100'000'000);
  LoadedPlan loaded = load_plan_file(path.string());
  fs::remove_all(dir);
  REQUIRE(loaded.plan);
  CHECK(loaded.plan->notes.size() == kNotes);
  REQUIRE(plan_mesh(*loaded.plan, nullptr));
  CHECK(plan_mesh(*loaded.plan, nullptr)->world() == 8);
}

TEST_CASE("fuzz_hostile: a 10^6-line NCCL log still yields its one 8-rank world communicator") {
  // 8 Init COMPLETE lines in the 2.16+ format of tests/data/observed/nccl-logs/nccl-issue-1646*, then 999,992
  // lines of unrelated INFO chatter: the answer is one complete group of ranks 0..7.
  constexpr int kLines = 1'000'000;
  std::string log;
  log.reserve(std::size_t{kLines} * 70);
  for (int r = 0; r < 8; ++r)
    log += "node0:100" + std::to_string(r) + ":100" + std::to_string(r) + " [" + std::to_string(r) +
           "] NCCL INFO comm 0x5" + std::to_string(r) + " rank " + std::to_string(r) +
           " nranks 8 cudaDev " + std::to_string(r) + " nvmlDev " + std::to_string(r) +
           " busId 1000 commId 0x1234abcd - Init COMPLETE\n";
  for (int i = 8; i < kLines; ++i)
    log += "node0:1000:1000 [0] NCCL INFO Channel 00/32 : 0 1 2 3 4 5 6 7 line " + std::to_string(i) + "\n";
  auto observed = planck::io::parse_nccl_log_text(log, "big.log");
  REQUIRE(observed.is_ok());
  REQUIRE(observed->groups.size() == 1);
  CHECK(observed->groups[0].size == 8);
  CHECK(observed->groups[0].complete);
  CHECK(observed->groups[0].ranks == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
}
