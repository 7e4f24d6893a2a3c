// planck diff (issue 21): the communicators that change and the cross-node bytes per step between
// two plans, byte for byte what verify's hsdp-flattened witness states for the same two layouts;
// the regression gate; diagnostics gained and lost.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "report/diff.h"
#include "tests/run_command.h"

namespace {

planck_test::CommandRun run(const std::string& args) {
  return planck_test::run_command(std::string(PLANCK_BIN) + " " + args + " 2>/dev/null");
}

std::string plan(const char* name) { return std::string(PLANCK_PLANS_DIR) + "/" + name; }
const std::string kHsdp = plan("torchtitan-hsdp-2x8.json");
const std::string kFlat = plan("torchtitan-hsdp-2x8-flattened.json");

nlohmann::json diff_json(const std::string& a, const std::string& b, const std::string& extra = "") {
  const auto r = run("diff " + a + " " + b + " --format json" + extra);
  REQUIRE(r.code == 0);
  return nlohmann::json::parse(r.out);
}

const nlohmann::json* role_change(const nlohmann::json& j, const char* role) {
  for (const auto& c : j.at("communicators")) {
    if (c.at("role") == role) return &c;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("diff: HSDP -> flattened states the fsdp and replicate changes and verify's extra cross-node bytes") {
  const auto j = diff_json(kHsdp, kFlat);
  CHECK(j.at("format") == "planck-diff/1");
  // torchtitan #711: fsdp over dp_shard (2 groups of 8, one node each) became the flattened
  // dp_replicate x dp_shard group (1 of 16, both nodes); the replicate all-reduce disappears.
  const auto* fsdp = role_change(j, "fsdp");
  REQUIRE(fsdp != nullptr);
  CHECK(fsdp->at("change") == "resized");
  CHECK(fsdp->at("a").at("dims") == "dp_shard");
  CHECK(fsdp->at("a").at("group_size") == 8);
  CHECK(fsdp->at("a").at("nodes_spanned") == 1);
  CHECK(fsdp->at("b").at("dims") == "dp_replicate,dp_shard");
  CHECK(fsdp->at("b").at("group_size") == 16);
  CHECK(fsdp->at("b").at("nodes_spanned") == 2);
  const auto* repl = role_change(j, "replicate");
  REQUIRE(repl != nullptr);
  CHECK(repl->at("change") == "removed");
  CHECK(repl->at("a").at("group_size") == 2);

  // The witness verify gives when the HSDP plan's run shows the flattened group.
  const auto v = run("verify " + kHsdp + " --observed " + std::string(PLANCK_TEST_DATA_DIR) +
                        "/observed/torchtitan/hsdp_flattened.log --format json");
  REQUIRE(v.code == 1);
  const auto vj = nlohmann::json::parse(v.out);
  const auto& diags = vj.at("diagnostics");
  const auto it = std::find_if(diags.begin(), diags.end(), [](const auto& d) { return d.at("rule") == "hsdp-flattened"; });
  REQUIRE(it != diags.end());
  const auto extra = it->at("witness").at("values").at("extra_cross_node_bytes_per_step").get<std::int64_t>();
  const auto& cross = j.at("metrics").at("cross_node_bytes_per_step");
  CHECK(extra > 0);
  CHECK(cross.at("delta").get<std::int64_t>() == extra);
  CHECK(cross.at("a").get<std::int64_t>() == it->at("witness").at("values").at("planned_cross_node_bytes_per_step"));
  CHECK(cross.at("b").get<std::int64_t>() == it->at("witness").at("values").at("cross_node_bytes_per_step"));

  // The text says the same number, in bytes.
  const auto t = run("diff " + kHsdp + " " + kFlat);
  REQUIRE(t.code == 0);
  CHECK(t.out.find("extra cross-node bytes per rank per step: " + std::to_string(extra) + " B") != std::string::npos);
  CHECK(t.out.find("fsdp       resized") != std::string::npos);
  CHECK(t.out.find("replicate  removed") != std::string::npos);
  // Diagnostics gained: the flattened plan breaks the hsdp-flattened rule; going back loses it.
  const auto gained = j.at("diagnostics").at("gained");
  CHECK(std::any_of(gained.begin(), gained.end(), [](const auto& d) { return d.at("rule") == "hsdp-flattened"; }));
  const auto back = diff_json(kFlat, kHsdp);
  const auto lost = back.at("diagnostics").at("lost");
  CHECK(std::any_of(lost.begin(), lost.end(), [](const auto& d) { return d.at("rule") == "hsdp-flattened"; }));
  CHECK(back.at("diagnostics").at("gained").empty());
}

TEST_CASE("diff: a plan against itself changes nothing and passes the gate") {
  const auto j = diff_json(kHsdp, kHsdp, " --fail-on regression");
  for (const auto& c : j.at("communicators")) CHECK(c.at("change") == "unchanged");
  for (const auto& item : j.at("metrics").items()) {
    const std::string key = item.key();  // clang 14: no structured binding in CAPTURE's lambda
    const auto& m = item.value();
    CAPTURE(key);
    CHECK(m.at("delta") == 0);
  }
  CHECK(j.at("regressions").empty());
  CHECK(j.at("diagnostics").at("gained").empty());
  CHECK(j.at("diagnostics").at("lost").empty());
}

TEST_CASE("diff: --fail-on regression exits 1 only when a gated figure worsens by more than --threshold") {
  CHECK(run("diff " + kHsdp + " " + kFlat).code == 0);  // reporting alone never fails
  const auto r = run("diff " + kHsdp + " " + kFlat + " --fail-on regression --format json");
  CHECK(r.code == 1);
  const auto j = nlohmann::json::parse(r.out);
  const auto& reg = j.at("regressions");
  CHECK(std::find(reg.begin(), reg.end(), "cross_node_bytes_per_step") != reg.end());
  // 4.02 GB -> 233 GB is +5,700%: under a threshold above that it is not a regression.
  const double pct = j.at("metrics").at("cross_node_bytes_per_step").at("change_pct").get<double>();
  CHECK(run("diff " + kHsdp + " " + kFlat + " --fail-on regression --threshold " + std::to_string(pct + 1)).code == 0);
  CHECK(run("diff " + kHsdp + " " + kFlat + " --fail-on regression --threshold " + std::to_string(pct - 1)).code == 1);
}

TEST_CASE("diff: the regression rule on its own figures") {
  planck::report::Metric m;
  m.known = true;
  m.gates = true;
  m.before = 100;
  m.after = 105;  // +5% is not more than 5%
  CHECK_FALSE(m.worse_by_more_than(5));
  m.after = 105.5;
  CHECK(m.worse_by_more_than(5));
  CHECK_FALSE(m.worse_by_more_than(6));
  m.after = 50;  // better is never a regression
  CHECK_FALSE(m.worse_by_more_than(0));
  m.before = 0;  // from nothing to something: no percentage, always worse
  m.after = 1;
  CHECK_FALSE(m.change_pct().has_value());
  CHECK(m.worse_by_more_than(1e9));
  m.gates = false;  // intra-node bytes and exposed time are reported, not gated
  CHECK_FALSE(m.worse_by_more_than(0));
}

TEST_CASE("diff: an unreadable plan is exit 2 naming the file") {
  const auto r = planck_test::run_command(std::string(PLANCK_BIN) + " diff " + kHsdp + " /nonexistent/plan.json 2>&1");
  CHECK(r.code == 2);
  CHECK(r.out.find("/nonexistent/plan.json") != std::string::npos);
}

// Issue 31: FSDP32 with one micro-batch of 4 sequences against pp 2 x FSDP16 with 8 micro-batches
// of 1, not resharded after forward (torchtitan's default policy under PP). torch's pipelining
// keeps each unit gathered from its first forward to REDUCE_GRAD (stage.py; quoted in
// tests/sim/sim_bytes_test.cc), so B gathers half the model once where A gathers all of it twice:
// fewer bytes across nodes, not the regression planck reported when it gathered per micro-batch.
TEST_CASE("diff: FSDP under a pipeline gathers once per step, so moving to pp 2 is no cross-node regression") {
  const std::string dir = std::string(PLANCK_TEST_DATA_DIR) + "/fsdp_pipeline/";
  const auto j = diff_json(dir + "fsdp32.json", dir + "pp2-fsdp16.json");
  const auto& cross = j.at("metrics").at("cross_node_bytes_per_step");
  CHECK(cross.at("b").get<double>() < cross.at("a").get<double>());
  for (const auto& key : j.at("regressions")) CHECK(key != "cross_node_bytes_per_step");
}

// Issue 31: a slower step that stays inside both plans' stated intervals is not called a
// regression by default; an explicit --threshold gates it as before.
TEST_CASE("diff: a step time within both stated intervals is no regression unless --threshold is given") {
  planck::report::PlanDiff d;
  planck::report::Metric m;
  m.key = "step_time_s";
  m.known = m.gates = m.has_band = true;
  m.before = 5.0;
  m.after = 5.5;  // +10%
  m.before_low = 4.5, m.before_high = 6.0;  // published / predicted 0.9-1.2
  m.after_low = 4.95, m.after_high = 6.6;   // the same ratios around 5.5
  d.metrics.push_back(m);
  CHECK(m.within_bands());
  CHECK(planck::report::regressions(d, 5, false).empty());
  CHECK(planck::report::regressions(d, 5, true).size() == 1);
  d.metrics[0].after = 6.5;  // outside A's interval
  d.metrics[0].after_low = 5.85, d.metrics[0].after_high = 7.8;
  CHECK_FALSE(d.metrics[0].within_bands());
  CHECK(planck::report::regressions(d, 5, false).size() == 1);
}

TEST_CASE("diff: MoE plans carry the measured MoE error band") {
  // Qwen3-30B-A3B with ep 16 over 2 nodes, plain all-to-all against DeepEP-style dispatch: the
  // step time moves, and the diff says how far MoE predictions are from measured runs
  // (sim/moe_band.h, docs/simulator.md "MoE validation"); a dense diff says nothing of it.
  auto write = [&](const std::string& name, const std::string& dispatcher) {
    const std::string path = "/tmp/planck_diff_test_" + name;
    std::FILE* f = std::fopen(path.c_str(), "w");
    REQUIRE(f != nullptr);
    const std::string text = R"({"format": "planck/1", "cluster": {"nodes": 2, "gpus_per_node": 8},
      "mesh": {"dims": ["ep"], "shape": [16]},
      "parallelism": {"data_parallel": "zero1", "moe_dispatcher": ")" + dispatcher + R"("},
      "model": "qwen3-30b-a3b", "training": {"global_batch": 16, "seq_len": 4096}})";
    std::fputs(text.c_str(), f);
    std::fclose(f);
    return path;
  };
  const auto j = diff_json(write("moe-a2a.json", "alltoall"), write("moe-deepep.json", "deepep"));
  REQUIRE(j.contains("error_band"));
  CHECK(j["error_band"].get<double>() > 0);
  CHECK_FALSE(diff_json(kHsdp, kFlat).contains("error_band"));
  const auto text = run("diff /tmp/planck_diff_test_moe-a2a.json /tmp/planck_diff_test_moe-deepep.json");
  CHECK(text.out.find("MoE step times carry a measured") != std::string::npos);
}
