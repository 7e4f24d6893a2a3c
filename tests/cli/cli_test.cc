// planck verify / groups end to end: exit codes (docs/verify.md#exit-codes), output formats, atomic -o.

#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/run_command.h"
#include "tests/temp_dir.h"

namespace fs = std::filesystem;

namespace {

using Run = planck_test::CommandRun;

// Runs planck with `args` (shell words), capturing stdout; stderr goes to stdout too when `merge`.
Run planck(const std::string& args, bool merge = false) {
  return planck_test::run_command(std::string(PLANCK_BIN) + " " + args + (merge ? " 2>&1" : " 2>/dev/null"));
}

std::string plans(const char* name) { return std::string(PLANCK_PLANS_DIR) + "/" + name; }

fs::path temp_dir() {
  fs::path d = planck_test::process_temp_dir("planck-cli-test");
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST_CASE("cli_verify exit 1 on the flattened HSDP plan, 0 on the fixed one") {
  Run bad = planck("verify " + plans("torchtitan-hsdp-2x8-flattened.json"));
  CHECK(bad.code == 1);
  CHECK(bad.out.find("error[hsdp-flattened]") != std::string::npos);
  CHECK(bad.out.find("1 group of 16: [0..15]") != std::string::npos);
  CHECK(bad.out.find("2 groups of 8: [0..7], [8..15]") != std::string::npos);
  Run good = planck("verify " + plans("torchtitan-hsdp-2x8.json"));
  CHECK(good.code == 0);
}

TEST_CASE("cli_verify exit 2 with a report for syntax errors, missing files and directories") {
  fs::path d = temp_dir();
  std::ofstream(d / "broken.json") << "{\"format\": \"planck/1\",\n  \"cluster\": {\"nodes\": 2,,}";
  Run syntax = planck("verify --format json " + (d / "broken.json").string());
  CHECK(syntax.code == 2);
  auto j = nlohmann::json::parse(syntax.out);
  CHECK(j["ok"] == false);
  CHECK(j["diagnostics"][0]["rule"] == "plan-syntax");
  CHECK(j["diagnostics"][0]["line"] == 2);
  CHECK(j["diagnostics"][0]["column"] == 26);

  Run missing = planck("verify " + (d / "nope.json").string());
  CHECK(missing.code == 2);
  CHECK(missing.out.find("nope.json") != std::string::npos);
  Run dir = planck("verify " + d.string());
  CHECK(dir.code == 2);
  CHECK(dir.out.find("is a directory") != std::string::npos);
  Run usage = planck("verify", true);
  CHECK(usage.code == 2);
  Run badfmt = planck("verify --format xml " + plans("ddp-8.json"), true);
  CHECK(badfmt.code == 2);
  fs::remove_all(d);
}

TEST_CASE("cli_verify --strict fails on warnings; -o writes the file atomically") {
  Run loose = planck("verify " + plans("lingua-4x4-before.json"));
  CHECK(loose.code == 0);
  CHECK(loose.out.find("warning[") != std::string::npos);
  Run strict = planck("verify --strict " + plans("lingua-4x4-before.json"));
  CHECK(strict.code == 1);

  fs::path d = temp_dir();
  Run sarif = planck("verify --format sarif -o " + (d / "out.sarif").string() + " " +
                     plans("torchtitan-hsdp-2x8-flattened.json"));
  CHECK(sarif.code == 1);
  CHECK(sarif.out.empty());
  std::ifstream in(d / "out.sarif");
  auto j = nlohmann::json::parse(in);
  CHECK(j["version"] == "2.1.0");
  CHECK(j["runs"][0]["results"][0]["ruleId"] == "hsdp-flattened");
  int entries = 0;
  for (const auto& e : fs::directory_iterator(d)) entries += e.is_regular_file();
  CHECK(entries == 1);  // no temporary file left behind
  Run unwritable = planck("verify -o /nonexistent-dir/x.json " + plans("ddp-8.json"), true);
  CHECK(unwritable.code == 2);
  CHECK(unwritable.out.find("cannot write /nonexistent-dir/x.json") != std::string::npos);
  fs::remove_all(d);
}

TEST_CASE("cli_groups lists DeviceMesh groups; flattened names; unknown dims exit 2") {
  Run r = planck("groups " + plans("torchtitan-hsdp-2x8.json") + " --dim dp_shard --dim dp_replicate --dim dp");
  CHECK(r.code == 0);
  CHECK(r.out.find("dp_shard: 0 1 2 3 4 5 6 7\ndp_shard: 8 9 10 11 12 13 14 15\n") != std::string::npos);
  CHECK(r.out.find("dp_replicate: 0 8\ndp_replicate: 1 9\n") != std::string::npos);
  CHECK(r.out.find("dp_replicate,dp_shard: 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n") != std::string::npos);
  Run j = planck("groups --format json " + plans("megatron-tp2-pp4-dp2.json") + " --dim tp,pp");
  CHECK(j.code == 0);
  auto doc = nlohmann::json::parse(j.out);
  // Megatron docstring M1 (W=16, tp=2, pp=4): model-parallel groups [0,1,4,5,...] and [2,3,6,7,...].
  CHECK(doc["groups"]["pp,tp"][0] == nlohmann::json({0, 1, 4, 5, 8, 9, 12, 13}));
  CHECK(doc["groups"]["pp,tp"][1] == nlohmann::json({2, 3, 6, 7, 10, 11, 14, 15}));
  Run bad = planck("groups " + plans("ddp-8.json") + " --dim dp_sahrd", true);
  CHECK(bad.code == 2);
  CHECK(bad.out.find("unknown dim 'dp_sahrd'") != std::string::npos);
}

TEST_CASE("cli_version and help") {
  Run v = planck("--version");
  CHECK(v.code == 0);
  CHECK(v.out.rfind("planck ", 0) == 0);
  Run h = planck("--help");
  CHECK(h.code == 0);
  // One line per command (issue 17): the command's name starts exactly one line, and the list
  // of commands is the only thing after "Subcommands:".
  const auto list = h.out.find("Subcommands:\n");
  REQUIRE(list != std::string::npos);
  std::vector<std::string> lines;
  std::istringstream in(h.out.substr(list + 13));
  for (std::string l; std::getline(in, l);) {
    if (!l.empty()) lines.push_back(l);
  }
  const std::vector<std::string> cmds = {"verify", "groups", "observe",   "simulate", "enumerate",
                                         "render", "import", "exec",      "calibrate", "bench",
                                         "report", "diff"};
  CHECK(lines.size() == cmds.size());
  for (const std::string& cmd : cmds) {
    int starts = 0;
    for (const std::string& l : lines) starts += l.rfind("  " + cmd + " ", 0) == 0 ? 1 : 0;
    CHECK_MESSAGE(starts == 1, cmd);
  }
}

TEST_CASE("cli_verify several inputs and stdin: one block / result each, exit the highest") {
  const std::string good = plans("torchtitan-hsdp-2x8.json"), bad = plans("torchtitan-hsdp-2x8-flattened.json");
  Run both = planck("verify " + good + " " + bad);
  CHECK(both.code == 1);
  const auto first = both.out.find(good + ": ok"), second = both.out.find(bad + ": FAILED");
  CHECK(first != std::string::npos);
  CHECK(second != std::string::npos);
  CHECK(first < second);
  Run json = planck("verify --format json " + good + " " + bad + " /nonexistent-plan.json");
  CHECK(json.code == 2);
  auto j = nlohmann::json::parse(json.out);
  CHECK(j["format"] == "planck-verify-set/1");
  REQUIRE(j["results"].size() == 3);
  CHECK(j["results"][0]["ok"] == true);
  CHECK(j["results"][1]["ok"] == false);
  CHECK(j["results"][2]["diagnostics"][0]["rule"] == "plan-syntax");
  Run in = planck("verify - < " + bad);
  CHECK(in.code == 1);
  CHECK(in.out.find("error[hsdp-flattened]") != std::string::npos);
}

TEST_CASE("cli_verify --strict fails on checks-skipped; a pipeline of 4 stages and 1 micro-batch warns") {
  fs::path d = temp_dir();
  // torchtitan llama4_17bx128e's layout in miniature: pp 4 with one micro-batch per step
  // (global_batch = micro_batch x dp_degree): torchtitan itself warns that stages idle.
  std::ofstream(d / "pp.json") << R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8},
    "mesh": {"dims": ["pp", "dp_shard"], "shape": [4, 2]}, "model": "llama3-8b",
    "training": {"global_batch": 2, "micro_batch": 1, "seq_len": 8192},
    "rank_program": {"steps": ["dp_rank = dp_shard.rank", "dp_degree = dp_shard.size"]}})";
  Run pp = planck("verify --format json " + (d / "pp.json").string());
  auto j = nlohmann::json::parse(pp.out);
  std::vector<std::string> rules;
  for (const auto& diag : j["diagnostics"]) rules.push_back(diag["rule"]);
  CHECK(rules == std::vector<std::string>{"pipeline-bubble"});
  // 1 micro-batch through 4 stages: (pp - 1) / m = 3 (Narayanan et al. SC'21 §2.2).
  CHECK(j["diagnostics"][0]["message"].get<std::string>().find("at most 1 of the 4 stages work at any moment") != std::string::npos);
  CHECK(j["diagnostics"][0]["message"].get<std::string>().find("bubble is 3.00") != std::string::npos);
  CHECK(pp.code == 0);
  Run no_model = planck("verify " + plans("lingua-4x4-after.json"));
  CHECK(no_model.code == 0);
  CHECK(no_model.out.find("note[checks-skipped]") != std::string::npos);
  Run strict = planck("verify --strict " + plans("lingua-4x4-after.json"));
  CHECK(strict.code == 1);
  fs::remove_all(d);
}

TEST_CASE("cli_verify --model gives a framework config the model it does not name") {
  // A DeepSpeed config describes no model (import/deepspeed/deepspeed.cc): the model-reading rules are
  // skipped and said so. --model fills it in for every config checked, as it does for import.
  const std::string ds = std::string(PLANCK_TEST_DATA_DIR) + "/import/deepspeed/ds_config_autotp_zero2.json";
  Run without = planck("verify --format json --nodes 1 --gpus-per-node 8 " + ds);
  Run preset = planck("verify --format json --nodes 1 --gpus-per-node 8 --model llama3-8b " + ds);
  const std::string hf = std::string(PLANCK_TEST_DATA_DIR) + "/import/hf/mistralai--Mixtral-8x7B-v0.1_config.json";
  Run from_hf = planck("verify --format json --nodes 1 --gpus-per-node 8 --model " + hf + " " + ds);
  auto skipped_model = [](const Run& r) {
    auto j = nlohmann::json::parse(r.out);
    for (const auto& d : j["diagnostics"]) {
      if (d["rule"] == "checks-skipped" && d["message"].get<std::string>().find("model") != std::string::npos) return true;
    }
    return false;
  };
  CHECK(skipped_model(without));
  CHECK_FALSE(skipped_model(preset));
  CHECK_FALSE(skipped_model(from_hf));
  CHECK(preset.code != 2);
  CHECK(from_hf.code != 2);
  // A missing model file names itself; a planck plan keeps its own model.
  Run missing = planck("verify --nodes 1 --gpus-per-node 8 --model /nonexistent/model.json " + ds, true);
  CHECK(missing.code == 2);
  CHECK(missing.out.find("--model /nonexistent/model.json: neither a preset") != std::string::npos);
  Run plan = planck("verify --model llama3-8b " + plans("hsdp-2x4.json"), true);
  CHECK(plan.code == 2);
  CHECK(plan.out.find("--model applies to framework configs") != std::string::npos);
  // So do the cluster flags: a plan states its own cluster, and a flag it would ignore is refused.
  for (const char* flag : {"--gpus-per-node 4", "--nodes 2", "--nvlink-domain 8"}) {
    Run cluster = planck(std::string("simulate ") + flag + " " + plans("hsdp-2x4.json"), true);
    CHECK(cluster.code == 2);
    // The message names the option given, and only it.
    const std::string name = std::string(flag).substr(0, std::string(flag).find(' '));
    CHECK(cluster.out.find(name + " applies to framework configs") != std::string::npos);
  }
}
