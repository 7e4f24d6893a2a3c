// `planck render` as users run it: bundled plans to SVG / PNG / DOT, exit codes, atomic output.

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <doctest/doctest.h>

#include "tests/viz/viz_helpers.h"
#include "tests/temp_dir.h"

namespace planck::viz::test {
namespace {

namespace fs = std::filesystem;

const std::string kPlans = PLANCK_PLANS_DIR;

fs::path scratch_dir() {
  fs::path d = planck_test::process_temp_dir("planck-viz-cli");
  fs::create_directories(d);
  return d;
}

// Runs `planck render ARGS`, stderr to `err` when given; returns the exit code.
int render(const std::string& args, const fs::path& err = {}) {
  std::string cmd = std::string(PLANCK_BIN) + " render " + args + (err.empty() ? " 2>/dev/null" : " 2>" + err.string());
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

}  // namespace

TEST_CASE("viz_cli_renders_bundled_hsdp_plans") {
  fs::path d = scratch_dir();
  fs::path svg = d / "hsdp.svg";
  REQUIRE(render(kPlans + "/torchtitan-hsdp-2x8.json -o " + svg.string()) == 0);
  std::string text = read_file_or_empty(svg.string());
  CHECK(svg_count(text, "node") == 16 + 1);
  CHECK(svg_count(text, "edge") == 2 * 8);  // two node-local 8-rank fsdp rings
  CHECK(text.find("every ring stays inside one node") != std::string::npos);

  fs::path flat = d / "flat.dot";
  REQUIRE(render(kPlans + "/torchtitan-hsdp-2x8-flattened.json -o " + flat.string()) == 0);
  std::string dot = read_file_or_empty(flat.string());
  CHECK(count(dot, "constraint=\"false\"") == 16);  // one 16-rank ring
  CHECK(dot.find("rings cross nodes: 2 of 16 hops on the network") != std::string::npos);

  fs::path png = d / "mesh.png";
  REQUIRE(render(kPlans + "/megatron-tp2-pp4-dp2.json --view mesh --dim tp --dim pp -o " + png.string()) == 0);
  CHECK(png_size(read_file_or_empty(png.string())).first > 100);

  // Two runs, identical bytes (SVG and PNG).
  fs::path svg2 = d / "hsdp2.svg", png2 = d / "mesh2.png";
  REQUIRE(render(kPlans + "/torchtitan-hsdp-2x8.json -o " + svg2.string()) == 0);
  REQUIRE(render(kPlans + "/megatron-tp2-pp4-dp2.json --view mesh --dim tp --dim pp -o " + png2.string()) == 0);
  CHECK(read_file_or_empty(svg2.string()) == text);
  CHECK(read_file_or_empty(png2.string()) == read_file_or_empty(png.string()));
  fs::remove_all(d);
}

TEST_CASE("viz_cli_observed_and_sim") {
  fs::path d = scratch_dir();
  fs::path out = d / "obs.dot";
  // The correct plan against a run that sharded over the flattened 16-rank group.
  std::string log = std::string(PLANCK_TEST_DATA_DIR) + "/viz/hsdp_flattened_observed.json";
  REQUIRE(render(kPlans + "/torchtitan-hsdp-2x8.json --observed " + log + " -o " + out.string()) == 0);
  std::string dot = read_file_or_empty(out.string());
  CHECK(dot.find("HSDP RUNS AS FSDP") != std::string::npos);

  fs::path sim = d / "sim.dot";
  REQUIRE(render(kPlans + "/torchtitan-hsdp-2x8.json --sim -o " + sim.string()) == 0);
  CHECK(read_file_or_empty(sim.string()).find("per rank per step") != std::string::npos);
  fs::remove_all(d);
}

TEST_CASE("viz_cli_control_characters_in_a_plan_name_are_drawn_not_fatal") {
  // JSON allows \u0000 in a string (JSONTestSuite y_ cases) and planck loads it; Graphviz reads
  // C strings, so the drawing shows U+FFFD instead of cutting the DOT at the NUL.
  fs::path d = scratch_dir();
  fs::path plan = d / "nul.json";
  std::ofstream(plan) << R"({"format": "planck/1", "name": "a\u0000b\u0007c", "cluster": {"nodes": 1, "gpus_per_node": 4},
                            "mesh": {"dims": ["dp"], "shape": [4]}})";
  fs::path svg = d / "nul.svg";
  REQUIRE(render(plan.string() + " -o " + svg.string()) == 0);
  const std::string text = read_file_or_empty(svg.string());
  const std::string fffd = "\xEF\xBF\xBD";
  CHECK(text.find("a" + fffd + "b" + fffd + "c") != std::string::npos);
}

TEST_CASE("viz_cli_exit_codes") {
  // A folder of its own: the file count below must not see the other cases' files.
  fs::path d = scratch_dir() / "exit_codes";
  fs::create_directories(d);
  fs::path err = d / "err.txt";
  fs::path out = d / "x.svg";
  // Unreadable plan: exit 2, nothing written.
  CHECK(render((d / "missing.json").string() + " -o " + out.string(), err) == 2);
  CHECK_FALSE(fs::exists(out));
  // Invalid mesh (2 x 3 != 2 nodes x 4 GPUs): exit 2 naming the rule.
  fs::path bad = d / "bad.json";
  std::ofstream(bad) << R"({"format": "planck/1", "cluster": {"nodes": 2, "gpus_per_node": 4},
                           "mesh": {"dims": ["dp_shard", "tp"], "shape": [2, 3]}})";
  CHECK(render(bad.string() + " -o " + out.string(), err) == 2);
  CHECK(read_file_or_empty(err.string()).find("mesh-world-mismatch") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
  // Unknown extension, unknown dim, --view mesh with --observed: bad usage, exit 2.
  CHECK(render(kPlans + "/ddp-8.json -o " + (d / "x.jpg").string(), err) == 2);
  CHECK(read_file_or_empty(err.string()).find("x.jpg") != std::string::npos);
  CHECK(render(kPlans + "/ddp-8.json --dim tensor -o " + out.string(), err) == 2);
  CHECK(read_file_or_empty(err.string()).find("tensor") != std::string::npos);
  CHECK(render(kPlans + "/ddp-8.json --view mesh --observed x.json -o " + out.string()) == 2);
  // A directory that does not exist: exit 2, no temporary left behind.
  CHECK(render(kPlans + "/ddp-8.json -o " + (d / "nodir" / "x.svg").string()) == 2);
  CHECK(render(kPlans + "/ddp-8.json -o " + out.string()) == 0);
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(d)) ++files;
  CHECK(files == 3);  // err.txt, bad.json, x.svg
  fs::remove_all(d);
}

}  // namespace planck::viz::test
