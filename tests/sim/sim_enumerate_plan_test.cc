// planck enumerate --plan TEMPLATE as users run it (docs/simulator.md "enumerate --plan"): every
// candidate layout is the template with its own mesh, checked by every verify rule. The expected
// verdicts come from the rank arithmetic and the HSDP shape written out below, never from planck.

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/run_command.h"
#include "tests/temp_dir.h"

namespace {

using Run = planck_test::CommandRun;
using Json = nlohmann::json;
using Rules = std::set<std::string>;

Run run(const std::string& args, bool merge = false) {
  return planck_test::run_command(std::string(PLANCK_BIN) + " " + args + (merge ? " 2>&1" : " 2>/dev/null"));
}

std::string plan(const std::string& name) { return std::string(PLANCK_PLANS_DIR) + "/" + name; }

std::filesystem::path scratch(const std::string& name, const std::string& content) {
  auto d = planck_test::process_temp_dir("planck-enum-plan");
  std::filesystem::create_directories(d);
  std::ofstream(d / name) << content;
  return d / name;
}

Json enumerate_json(const std::string& args) {
  Run r = run("enumerate " + args + " --format json");
  REQUIRE_MESSAGE(r.code == 0, args);
  return Json::parse(r.out);
}

std::int64_t dim(const Json& layout, const std::string& name) {
  const auto& dims = layout["mesh"]["dims"];
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == name) return layout["mesh"]["shape"][i].get<std::int64_t>();
  }
  return 1;
}

Rules rules(const Json& list) { return list.get<Rules>(); }

// Lingua apps/main/train.py before d1fd421 (issue #58): dp_rank = dp_replicate.rank * dp_degree +
// dp_shard.rank with dp_degree still dp_replicate.size at that point, so dp_rank = r x R + s over
// r < R, s < S, against dp_degree = R x S. The rules verify fires for each way it breaks
// (docs/verify.md): a value >= R x S, two coordinates sharing a value, a value in [0, R x S) no
// coordinate gets.
Rules prefix_lingua_findings(std::int64_t R, std::int64_t S) {
  std::vector<int> hits(static_cast<std::size_t>(R * S), 0);
  bool out_of_range = false, collision = false;
  for (std::int64_t r = 0; r < R; ++r) {
    for (std::int64_t s = 0; s < S; ++s) {
      const std::int64_t v = r * R + s;
      if (v >= R * S) {
        out_of_range = true;
        continue;
      }
      if (++hits[static_cast<std::size_t>(v)] > 1) collision = true;
    }
  }
  Rules out;
  if (out_of_range) out.insert("rank-out-of-range");
  if (collision) out.insert("rank-collision");
  if (std::count(hits.begin(), hits.end(), 0) > 0) out.insert("rank-gap");
  return out;
}

// Clean layouts first, then rejected ones; the count matches.
void check_ranked_clean_first(const Json& doc) {
  bool seen_rejected = false;
  std::int64_t rejected = 0;
  for (const auto& l : doc["layouts"]) {
    REQUIRE(l.contains("rejected"));
    if (l["rejected"].empty()) {
      CHECK_MESSAGE(!seen_rejected, "a clean layout ranks after a rejected one: " << l["mesh"].dump());
    } else {
      seen_rejected = true;
      ++rejected;
      CHECK(l["pareto"] == false);
    }
  }
  CHECK(doc["rejected_layouts"].get<std::int64_t>() == rejected);
}

}  // namespace

TEST_CASE("enumerate_plan_lingua_prefix_formula_rejects_exactly_the_broken_layouts") {
  for (const char* shape : {"2x4", "4x4", "8x4"}) {
    CAPTURE(shape);
    const Json before =
        enumerate_json("--plan " + plan(std::string("lingua-") + shape + "-before.json") + " --model llama3-8b");
    const Json after =
        enumerate_json("--plan " + plan(std::string("lingua-") + shape + "-after.json") + " --model llama3-8b");
    std::int64_t broken = 0;
    for (const auto& l : before["layouts"]) {
      const std::int64_t R = dim(l, "dp_replicate"), S = dim(l, "dp_shard");
      CAPTURE(l["mesh"].dump());
      const Rules expected = prefix_lingua_findings(R, S);
      CHECK(rules(l["rejected"]) == expected);
      // Right on this mesh only where R = 1 or R = S: verify's rank-latent warning, not a rejection.
      if (expected.empty()) CHECK(rules(l["warnings"]).count("rank-latent") == 1);
      broken += expected.empty() ? 0 : 1;
    }
    CHECK(broken > 0);
    check_ranked_clean_first(before);
    // The fixed formula, r x S + s, is right everywhere: no layout is rejected or latent, and the
    // same layouts are found (only the rank program differs).
    CHECK(after["rejected_layouts"] == 0);
    for (const auto& l : after["layouts"]) {
      CHECK(l["rejected"].empty());
      CHECK(rules(l["warnings"]).count("rank-latent") == 0);
      CHECK(l["unchecked"].empty());
    }
    CHECK(after["valid"] == before["valid"]);
    // The best layout is clean, so it is what enumerate recommends.
    CHECK(before["layouts"][0]["rejected"].empty());
  }
}

TEST_CASE("enumerate_plan_text_and_csv_carry_the_verdict") {
  const std::string args = "--plan " + plan("lingua-8x4-before.json") + " --model llama3-8b --top 1000";
  const Json doc = enumerate_json(args);
  Run text = run("enumerate " + args);
  REQUIRE(text.code == 0);
  // One 'x' per rejected row, after the rank number.
  std::int64_t marked = 0;
  for (std::size_t at = text.out.find('\n'); at != std::string::npos; at = text.out.find('\n', at + 1)) {
    const std::string head = text.out.substr(at + 1, 5);
    if (!head.empty() && std::isdigit(static_cast<unsigned char>(head[0])) && head.find('x') != std::string::npos)
      ++marked;
  }
  CHECK(marked == doc["rejected_layouts"].get<std::int64_t>());
  CHECK(text.out.find("rejected: rank-out-of-range") != std::string::npos);
  Run csv = run("enumerate " + args + " --format csv");
  REQUIRE(csv.code == 0);
  const std::string header = csv.out.substr(0, csv.out.find('\n'));
  const std::string tail = ",rejected,warnings,unchecked";
  REQUIRE(header.size() > tail.size());
  CHECK(header.compare(header.size() - tail.size(), tail.size(), tail) == 0);
  // Row k's rejected column is the JSON row's rules joined by ';' (both ordered the same way).
  std::size_t row = 0, pos = csv.out.find('\n') + 1;
  while (pos < csv.out.size()) {
    const std::size_t end = csv.out.find('\n', pos);
    const std::string line = csv.out.substr(pos, end - pos);
    std::vector<std::string> cells;
    for (std::size_t a = 0, b; a <= line.size(); a = b + 1) {
      b = line.find(',', a);
      if (b == std::string::npos) b = line.size();
      cells.push_back(line.substr(a, b - a));
    }
    REQUIRE(cells.size() >= 3);
    std::string want;
    for (const auto& r : doc["layouts"][row]["rejected"]) want += (want.empty() ? "" : ";") + r.get<std::string>();
    CHECK(cells[cells.size() - 3] == want);
    ++row;
    pos = end + 1;
  }
  CHECK(row == doc["layouts"].size());
  // Without --plan nothing is checked and nothing claims to be: no verdict fields or columns.
  Run plain = run("enumerate --world 8 --gpus-per-node 4 --model llama3-8b --format json");
  REQUIRE(plain.code == 0);
  const Json p = Json::parse(plain.out);
  CHECK(!p.contains("rejected_layouts"));
  CHECK(!p["layouts"][0].contains("rejected"));
  Run plain_csv = run("enumerate --world 8 --gpus-per-node 4 --model llama3-8b --format csv");
  CHECK(plain_csv.out.find("rejected") == std::string::npos);
}

TEST_CASE("enumerate_plan_hsdp_flattened_template") {
  // torchtitan #711: fully_shard got the flattened (dp_replicate, dp_shard) mesh, i.e. fsdp_dims
  // holding the replicate dim. Every HSDP candidate (dp_replicate > 1 and dp_shard > 1) with
  // those fsdp_dims shards across its replicas: hsdp-flattened; FSDP (r = 1) and DDP (s = 1)
  // candidates are unaffected.
  const Json flat = enumerate_json("--plan " + plan("torchtitan-hsdp-2x8-flattened.json"));
  std::int64_t hsdp = 0;
  for (const auto& l : flat["layouts"]) {
    CAPTURE(l["mesh"].dump());
    const bool is_hsdp = l["parallelism"]["data_parallel"] == "hsdp";
    if (is_hsdp) CHECK((dim(l, "dp_replicate") > 1 && dim(l, "dp_shard") > 1));
    CHECK(rules(l["rejected"]) == (is_hsdp ? Rules{"hsdp-flattened"} : Rules{}));
    // The template's activation_checkpointing, selective, is the lightest tried.
    CHECK(l["training"]["activation_checkpointing"] != "none");
    hsdp += is_hsdp ? 1 : 0;
  }
  CHECK(hsdp > 0);
  check_ranked_clean_first(flat);
  // The template's world, model and training: 2 nodes x 8, 64 sequences of 8192 tokens.
  CHECK(flat["world"] == 16);
  CHECK(flat["global_batch"] == 64);
  CHECK(flat["layouts"][0]["tokens_per_step"].get<double>() == 64.0 * 8192);
  const Json fixed = enumerate_json("--plan " + plan("torchtitan-hsdp-2x8.json"));
  CHECK(fixed["rejected_layouts"] == 0);
  // The template states micro_batch 1 and grad_sync last_microbatch_replicate: kept, not searched.
  for (const auto& l : fixed["layouts"]) {
    CHECK(l["training"]["micro_batch"] == 1);
    CHECK(l["training"]["grad_sync"] == "last_microbatch_replicate");
  }
}

TEST_CASE("enumerate_plan_flags_override_the_template") {
  // hsdp-2x4.json: 2 nodes x 4 GPUs, global batch 32, micro-batch 2, seq 4096.
  const Json t = enumerate_json("--plan " + plan("hsdp-2x4.json"));
  CHECK(t["world"] == 8);
  CHECK(t["global_batch"] == 32);
  CHECK(t["global_batch_default"] == false);
  for (const auto& l : t["layouts"]) {
    const std::int64_t dp = dim(l, "dp_replicate") * dim(l, "dp_shard");
    CHECK(l["training"]["grad_accumulation"].get<std::int64_t>() * 2 * dp == 32);  // micro-batch 2
    CHECK(l["tokens_per_step"].get<double>() == 32.0 * 4096);
  }
  const Json o = enumerate_json("--plan " + plan("hsdp-2x4.json") +
                                " --world 16 --global-batch 64 --seq-len 2048 --micro-batch 1");
  CHECK(o["world"] == 16);
  CHECK(o["global_batch"] == 64);
  for (const auto& l : o["layouts"]) {
    const std::int64_t dp = dim(l, "dp_replicate") * dim(l, "dp_shard");
    CHECK(l["training"]["grad_accumulation"].get<std::int64_t>() * dp == 64);
    CHECK(l["tokens_per_step"].get<double>() == 64.0 * 2048);
  }
  // A template without a rank_program: the rank rules cannot run, and every layout says so.
  const Json noprog = enumerate_json("--plan " + plan("megatron-tp2-pp4-dp2.json"));
  CHECK(rules(noprog["unchecked"]).count("rank-out-of-range") == 1);
  for (const auto& l : noprog["layouts"]) CHECK(rules(l["unchecked"]).count("rank-collision") == 1);
}

TEST_CASE("enumerate_plan_bad_template_exit_2") {
  Run missing = run("enumerate --plan /nonexistent/template.json", true);
  CHECK(missing.code == 2);
  CHECK(missing.out.find("/nonexistent/template.json") != std::string::npos);
  auto broken = scratch("broken.json", "{\"format\": \"planck/1\", \"cluster\": ");
  Run syntax = run("enumerate --plan " + broken.string(), true);
  CHECK(syntax.code == 2);
  CHECK(syntax.out.find(broken.string()) != std::string::npos);
  CHECK(syntax.out.find("plan-syntax") != std::string::npos);
  auto badprog = scratch("badprog.json", R"({"format": "planck/1", "model": "llama3-8b",
    "cluster": {"nodes": 1, "gpus_per_node": 8}, "mesh": {"dims": ["dp_shard"], "shape": [8]},
    "rank_program": {"steps": ["dp_rank = dp_shard.rank +", "dp_degree = dp_shard.size"]}})");
  Run prog = run("enumerate --plan " + badprog.string(), true);
  CHECK(prog.code == 2);
  CHECK(prog.out.find(badprog.string()) != std::string::npos);
  CHECK(prog.out.find("rank-program-invalid") != std::string::npos);
  // No model in the template and none on the command line.
  Run nomodel = run("enumerate --plan " + plan("lingua-8x4-before.json"), true);
  CHECK(nomodel.code == 2);
  CHECK(nomodel.out.find("--model") != std::string::npos);
  CHECK(nomodel.out.find("lingua-8x4-before.json") != std::string::npos);
  // --world that the template's 4 GPUs per node do not divide.
  Run world = run("enumerate --plan " + plan("lingua-8x4-before.json") + " --model llama3-8b --world 30", true);
  CHECK(world.code == 2);
  CHECK(world.out.find("gpus_per_node of --plan") != std::string::npos);
  // A framework config is imported as verify reads it; Lingua does not state its cluster, so
  // --world and --gpus-per-node give it.
  const std::string yaml = std::string(PLANCK_SOURCE_DIR) + "/tests/data/corpus/lingua/llama_1B.yaml";
  Run config = run("enumerate --plan " + yaml, true);
  CHECK(config.code == 2);
  CHECK(config.out.find("does not state the cluster size") != std::string::npos);
  Run sized = run("enumerate --plan " + yaml + " --world 16 --gpus-per-node 8 --model llama3-8b --top 3", true);
  CHECK(sized.code == 0);
  CHECK(sized.out.find("every layout is the plan " + yaml) != std::string::npos);
  // A template every layout breaks (dp_rank off by one): all shown, all rejected, exit 1.
  auto offbyone = scratch("offbyone.json", R"({"format": "planck/1", "model": "llama3-8b",
    "cluster": {"nodes": 1, "gpus_per_node": 8}, "mesh": {"dims": ["dp_shard"], "shape": [8]},
    "rank_program": {"steps": ["dp_rank = dp_shard.rank + 1", "dp_degree = dp_shard.size"]}})");
  Run all = run("enumerate --plan " + offbyone.string() + " --format json");
  CHECK(all.code == 1);
  const Json doc = Json::parse(all.out);
  CHECK(doc["valid"].get<std::int64_t>() > 0);
  CHECK(doc["rejected_layouts"] == doc["valid"]);
  // Without --plan the layout flags stay required.
  Run bare = run("enumerate --world 8", true);
  CHECK(bare.code == 2);
  CHECK(bare.out.find("--model") != std::string::npos);
}
