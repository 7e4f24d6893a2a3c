// planck report (issue 21): one self-contained HTML file with the sections docs/report.md lists,
// no network reference, the pipeline timeline's actions counted from the plan, errors named.

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/run_command.h"

namespace {

std::string plan(const char* name) { return std::string(PLANCK_PLANS_DIR) + "/" + name; }
std::string tmp(const std::string& name) { return "/tmp/planck_report_test_" + name; }

planck_test::CommandRun run(const std::string& args) {
  return planck_test::run_command(std::string(PLANCK_BIN) + " " + args + " 2>&1");
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::size_t count(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + needle.size())) ++n;
  return n;
}

}  // namespace

TEST_CASE("report: every section, self-contained, for the flattened HSDP plan with baseline, observed and enumerate") {
  const std::string enumerate = tmp("enumerate.json"), out = tmp("flat.html");
  REQUIRE(run("enumerate --world 16 --gpus-per-node 8 --model llama3-8b --global-batch 64 --format json -o " +
                 enumerate).code == 0);
  const auto r = run("report " + plan("torchtitan-hsdp-2x8-flattened.json") + " --baseline " +
                        plan("torchtitan-hsdp-2x8.json") + " --observed " + std::string(PLANCK_TEST_DATA_DIR) +
                        "/observed/torchtitan/hsdp_flattened.log --enumerate " + enumerate + " -o " + out);
  CAPTURE(r.out);
  REQUIRE(r.code == 0);
  const std::string html = slurp(out);
  for (const char* id : {"verdict", "diagnostics", "baseline", "diagrams", "observed", "schedule", "memory", "pipeline",
                         "enumerate"}) {
    CAPTURE(id);
    CHECK(count(html, std::string("<section id=\"") + id + "\"") == 1);
  }
  CHECK(html.find("FAILS verify") != std::string::npos);
  CHECK(html.find("hsdp-flattened") != std::string::npos);
  CHECK(html.find("fix: ") != std::string::npos);  // the diagnostic's hint
  // Self-contained: no script, no external stylesheet, image or font; only the SVG namespace URI.
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("<link") == std::string::npos);
  CHECK(html.find("src=") == std::string::npos);
  CHECK(html.find("url(") == std::string::npos);
  CHECK(count(html, "http") == count(html, "http://www.w3.org/"));
  CHECK(html.find("<?xml") == std::string::npos);  // Graphviz's prolog dropped inside HTML
  // Diagrams inline: mesh, communicators, observed, memory bar, scatter.
  CHECK(count(html, "<svg") == 5);
  CHECK(html.find("chosen: ") != std::string::npos);
  std::remove(enumerate.c_str());
  std::remove(out.c_str());
}

TEST_CASE("report: the pipeline timeline draws every action of the step") {
  // plans/megatron-tp2-pp4-dp2.json: pp = 4, interleaved 1F1B with virtual_stages = 2, 16
  // micro-batches (grad_accumulation). Each of the pp x v = 8 stages runs every micro-batch
  // forward once: 8 x 16 = 128 F boxes, and as many backward (B) boxes.
  const std::string out = tmp("megatron.html");
  REQUIRE(run("report " + plan("megatron-tp2-pp4-dp2.json") + " -o " + out).code == 0);
  const std::string html = slurp(out);
  const std::size_t pp = 4, v = 2, m = 16;
  CHECK(count(html, "<title>F micro-batch") == pp * v * m);
  CHECK(count(html, "<title>B micro-batch") == pp * v * m);
  for (int r = 0; r < 4; ++r) CHECK(html.find(">rank " + std::to_string(r) + "<") != std::string::npos);
  CHECK(html.find(">rank 4<") == std::string::npos);
  std::remove(out.c_str());
}

TEST_CASE("report: a plan without pipeline parallelism says why there is no timeline") {
  const std::string out = tmp("ddp.html");
  REQUIRE(run("report " + plan("ddp-8.json") + " -o " + out).code == 0);
  const std::string html = slurp(out);
  CHECK(html.find("pp = 1: one stage") != std::string::npos);
  CHECK(html.find("Passes verify") != std::string::npos);
  std::remove(out.c_str());
}

TEST_CASE("report: bad inputs are exit 2 naming the file, and nothing is written") {
  const std::string out = tmp("bad.html"), bad = tmp("bad_enumerate.json");
  std::ofstream(bad) << "{\"format\": \"planck-sim/1\"}";
  auto r = run("report " + plan("ddp-8.json") + " --enumerate " + bad + " -o " + out);
  CHECK(r.code == 2);
  CHECK(r.out.find(bad) != std::string::npos);
  CHECK(r.out.find("planck-enumerate/1") != std::string::npos);
  r = run("report " + plan("ddp-8.json") + " --baseline /nonexistent/base.json -o " + out);
  CHECK(r.code == 2);
  CHECK(r.out.find("/nonexistent/base.json") != std::string::npos);
  CHECK(run("report " + plan("ddp-8.json")).code == 2);  // -o is required
  std::ifstream written(out);
  CHECK_FALSE(written.good());
  std::remove(bad.c_str());
}
