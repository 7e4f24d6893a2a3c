// Per-peer traffic measured by the transport under mpirun: the ring and pairwise matrices over
// 2, 3, 4 and 8 ranks, HSDP 2x4's replicate traffic confined to its groups, the faults that
// must make exec exit 1 (wrong data, a wrong split colour, a prediction 5% off) with a whole
// report and no temporaries left, and --expect naming the pair that crosses nodes.
//
// Expected pairs and bytes come from the algorithms written out here (OpenMPI 4.1 coll/base:
// ring sends to rank + 1, pairwise all-to-all sends block j to rank j; docs/sources/simulator.md §1.2).
// Measured bytes are TCP payload: the algorithm's bytes plus a few dozen header bytes per
// message, so they are checked as >= the formula and within 3% + 512 bytes of it; pairs the
// algorithm leaves empty carry at most rendezvous ACKs (under 1 KiB).

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>
#include <vector>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "tests/exec/mpi_helpers.h"

namespace {

using planck_test::mpirun;
using planck_test::sh;
using planck_test::tmp_path;
using Pairs = std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t>;

std::string write_plan(const std::string& name, const std::string& body) {
  const std::string path = tmp_path(name);
  std::ofstream(path) << body;
  return path;
}

// FSDP over n ranks (all-gather, reduce-scatter) and EP over n ranks (all-to-all, plus the
// dense gradients' all-reduce over the same ranks).
std::string fsdp_plan(int n) {
  return write_plan("fsdp" + std::to_string(n) + ".json",
                    R"({"format":"planck/1","name":"fsdp","cluster":{"nodes":1,"gpus_per_node":)" + std::to_string(n) +
                        R"(,"gpu":"cpu"},"mesh":{"dims":["dp_shard"],"shape":[)" + std::to_string(n) +
                        R"(]},"parallelism":{"data_parallel":"fsdp"},"model":{"layers":2,"hidden":256,"ffn_hidden":512,"heads":4,"kv_heads":4,"vocab":512},"training":{"global_batch":)" +
                        std::to_string(n) + R"(,"micro_batch":1,"seq_len":128}})");
}
std::string ep_plan(int n) {
  return write_plan("ep" + std::to_string(n) + ".json",
                    R"({"format":"planck/1","name":"ep","cluster":{"nodes":1,"gpus_per_node":)" + std::to_string(n) +
                        R"(,"gpu":"cpu"},"mesh":{"dims":["ep"],"shape":[)" + std::to_string(n) +
                        R"(]},"parallelism":{"data_parallel":"none"},"model":{"layers":2,"hidden":256,"ffn_hidden":512,"heads":4,"kv_heads":4,"vocab":512,"experts":24,"experts_per_token":2,"moe_ffn_hidden":256},"training":{"global_batch":)" +
                        std::to_string(n) + R"(,"micro_batch":1,"seq_len":128}})");
}

nlohmann::json run(int np, const std::string& plan, const std::string& extra, int expect_code, std::string* out_text = nullptr) {
  const std::string out = tmp_path("traffic.json");
  std::filesystem::remove(out);
  auto r = sh(mpirun(np) + PLANCK_BIN + " exec " + plan + " --backend mpi --warmup 0 --iters 1 --timeout 60 --wire-min-bytes 0 " + extra +
              " -o " + out);
  INFO(r.out);
  REQUIRE(r.code == expect_code);
  if (out_text) *out_text = r.out;
  CHECK(planck_test::no_temporaries(out));
  if (!std::filesystem::exists(out)) return nlohmann::json();
  auto j = nlohmann::json::parse(std::ifstream(out));  // a whole document, or parse throws
  std::filesystem::remove(out);
  return j;
}

// Group of n consecutive ranks from `base`: what each member sends where, one call of S bytes.
Pairs expected_pairs(const std::string& op, std::int64_t base, std::int64_t n, std::int64_t s) {
  Pairs p;
  for (std::int64_t i = 0; i < n; ++i) {
    if (op == "all_to_all") {
      for (std::int64_t j = 0; j < n; ++j) {
        if (j != i) p[{base + i, base + j}] = s / n;
      }
    } else {
      const std::int64_t w = op == "all_reduce" ? 2 * (n - 1) * s / n : (n - 1) * s / n;
      p[{base + i, base + (i + 1) % n}] = w;
    }
  }
  return p;
}

// Every measured pair against the expected ones (all groups of the op).
void check_pairs(const nlohmann::json& op, const Pairs& expected) {
  CAPTURE(op.dump());
  REQUIRE(op["traffic"]["measured"] == true);
  Pairs seen;
  for (const auto& p : op["traffic"]["pairs"]) seen[{p[0].get<std::int64_t>(), p[1].get<std::int64_t>()}] = p[3];
  for (const auto& [pair, bytes] : expected) {
    const std::int64_t from = pair.first, to = pair.second;  // clang 14: no structured binding in CAPTURE
    CAPTURE(from);
    CAPTURE(to);
    REQUIRE(seen.count(pair));
    CHECK(seen[pair] >= bytes);
    CHECK(static_cast<double>(seen[pair]) <= static_cast<double>(bytes) * 1.03 + 512);
  }
  for (const auto& [pair, bytes] : seen) {
    if (expected.count(pair)) continue;
    const std::int64_t from = pair.first, to = pair.second;  // clang 14: no structured binding in CAPTURE
    CAPTURE(from);
    CAPTURE(to);
    CHECK(bytes <= 1024);
  }
}

}  // namespace

TEST_CASE("exec_mpi_traffic_ring_and_pairwise_2_3_4_8") {
  for (int n : {2, 3, 4, 8}) {
    CAPTURE(n);
    for (const std::string& plan : {fsdp_plan(n), ep_plan(n)}) {
      auto j = run(n, plan, "--max-bytes 96KiB", 0);
      REQUIRE(j["ops"].size() > 0);
      for (const auto& op : j["ops"]) {
        CHECK(op["group_size"] == n);
        check_pairs(op, expected_pairs(op["op"], 0, n, op["bytes_per_call"]));
      }
    }
  }
}

TEST_CASE("exec_mpi_traffic_hsdp_replicate_stays_in_its_groups") {
  // dp_replicate x dp_shard = 2 x 4: replicate groups {r, r+4}, fsdp groups {0..3}, {4..7}.
  auto j = run(8, planck_test::exec_plan("hsdp-2x4.json"), "--max-bytes 256KiB", 0);
  bool replicate = false;
  for (const auto& op : j["ops"]) {
    const std::int64_t s = op["bytes_per_call"];
    if (op["role"] == "replicate") {
      replicate = true;
      Pairs e;
      for (std::int64_t r = 0; r < 8; ++r) e[{r, (r + 4) % 8}] = s;  // 2 x (2-1)/2 x S to the other member
      check_pairs(op, e);
    } else {
      Pairs e = expected_pairs(op["op"], 0, 4, s);
      e.merge(expected_pairs(op["op"], 4, 4, s));
      check_pairs(op, e);
    }
  }
  CHECK(replicate);
}

TEST_CASE("exec_mpi_fault_wrong_data_exits_1") {
  auto j = run(4, fsdp_plan(4), "--max-bytes 64KiB --inject wrong-data:2", 1);
  CHECK(j["summary"]["ok"] == false);
  std::int64_t wrong = 0;
  for (const auto& op : j["ops"]) wrong += op["wrong_elements"].get<std::int64_t>();
  CHECK(wrong > 0);
}

TEST_CASE("exec_mpi_fault_wrong_colour_exits_1") {
  auto j = run(8, planck_test::exec_plan("hsdp-2x4.json"), "--max-bytes 64KiB --inject wrong-colour:1", 1);
  CHECK(j["summary"]["ok"] == false);
  CHECK(j["membership"]["ok"] == false);
  CHECK(j["ops"].empty());
}

TEST_CASE("exec_mpi_fault_prediction_5_percent_off_exits_1") {
  std::string text;
  auto j = run(4, fsdp_plan(4), "--max-bytes 1MiB --inject perturb:0.05", 1, &text);
  CHECK(j["summary"]["traffic_ok"] == false);
  CHECK(j["summary"]["max_peer_error"].get<double>() > 0.03);
  CHECK(text.find("OFF by more than 3%") != std::string::npos);
}

TEST_CASE("exec_mpi_fault_prediction_40_percent_low_exits_1") {
  std::string text;
  auto j = run(4, fsdp_plan(4), "--max-bytes 1MiB --inject perturb:-0.4", 1, &text);
  CHECK(j["summary"]["traffic_ok"] == false);
  // Measured / (predicted x 0.6) - 1 = 1/0.6 - 1 = 0.667 on every gated pair (headers aside).
  CHECK(j["summary"]["max_peer_error"].get<double>() > 0.6);
}

TEST_CASE("exec_mpi_fault_that_changes_nothing_is_exit_2_not_a_pass") {
  // FSDP over 4 ranks has one group per role: wrong-colour's "next group" is the rank's own.
  std::string text;
  auto c = run(4, fsdp_plan(4), "--max-bytes 64KiB --inject wrong-colour:1", 2, &text);
  CHECK(text.find("--inject wrong-colour:1 changed nothing this run checks") != std::string::npos);
  CHECK(text.find("each role has one group") != std::string::npos);
  // 16 KiB calls put no rank pair at the 64 KiB judging gate: a perturbed prediction is not judged.
  auto p = run(4, fsdp_plan(4), "--max-bytes 16KiB --inject perturb:0.5", 2, &text);
  CHECK(text.find("--inject perturb:0.5 changed nothing this run checks") != std::string::npos);
  CHECK(text.find("raise --max-bytes") != std::string::npos);
}

TEST_CASE("exec_mpi_inject_kill_ends_the_job_naming_the_rank") {
  std::string text;
  run(4, fsdp_plan(4), "--max-bytes 64KiB --inject kill:2", 137, &text);
  CHECK(text.find("rank 2: killing itself as asked (--inject kill:2)") != std::string::npos);
}

TEST_CASE("exec_mpi_expect_flattened_hsdp_names_a_pair_across_nodes") {
  // torchtitan #711: FSDP handed the flattened 16-rank mesh instead of dp_shard (8 per node).
  const std::string plans = std::string(PLANCK_PLANS_DIR) + "/";
  std::string text;
  auto j = run(16, plans + "torchtitan-hsdp-2x8-flattened.json",
               "--max-bytes 16384 --expect " + plans + "torchtitan-hsdp-2x8.json", 1, &text);
  // The 16-rank ring's step from rank 7 to rank 8 leaves node 0; the intended groups of 8 never do.
  CHECK(text.find("UNPREDICTED traffic") != std::string::npos);
  CHECK(text.find("rank 7 (node 0) -> rank 8 (node 1)") != std::string::npos);
  CHECK(j["summary"]["traffic_ok"] == false);
}

TEST_CASE("exec_mpi_bench_three_layouts_ranking_and_tau_from_the_report") {
  // DDP 8, HSDP 2x4, pp x dp x tp = 2 x 2 x 2: one world of 8.
  const std::string out = tmp_path("bench.json");
  std::filesystem::remove(out);
  auto r = sh(mpirun(8) + PLANCK_BIN + " bench " + planck_test::exec_plan("ddp-8.json") + " " +
              planck_test::exec_plan("hsdp-2x4.json") + " " + planck_test::exec_plan("tp-pp-dp.json") +
              " --backend mpi --max-bytes 64KiB --warmup 1 --iters 2 --timeout 60 -o " + out);
  INFO(r.out);
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(std::ifstream(out));
  CHECK(j["format"] == "planck-bench/1");
  REQUIRE(j["layouts"].size() == 3);
  std::vector<double> pred, meas;
  for (const auto& l : j["layouts"]) {
    pred.push_back(l["predicted_step_s"]);
    meas.push_back(l["measured_step_s"]);
    CHECK(l["ok"] == true);
  }
  // The ranking: names sorted by the report's own measured step times.
  std::vector<std::size_t> idx{0, 1, 2};
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return meas[a] < meas[b]; });
  for (std::size_t k = 0; k < 3; ++k) {
    CHECK(j["summary"]["measured_ranking"][k] == j["layouts"][idx[k]]["name"]);
    CHECK(j["layouts"][idx[k]]["measured_rank"] == k + 1);
  }
  // Kendall's tau-a over the 3 pairs, recomputed here.
  int score = 0;
  for (int a = 0; a < 3; ++a) {
    for (int b = a + 1; b < 3; ++b) {
      const double x = (pred[a] - pred[b]) * (meas[a] - meas[b]);
      score += x > 0 ? 1 : (x < 0 ? -1 : 0);
    }
  }
  CHECK(j["summary"]["kendall_tau"].get<double>() == doctest::Approx(score / 3.0));
  CHECK(r.out.find("Kendall tau") != std::string::npos);
  std::filesystem::remove(out);
}

TEST_CASE("exec_bench_layouts_of_different_worlds_exit_2") {
  auto r = sh(std::string(PLANCK_BIN) + " bench " + planck_test::exec_plan("ddp-8.json") + " " + fsdp_plan(4));
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.find("has 4 ranks") != std::string::npos);
  CHECK(r.out.find("layouts must share one world") != std::string::npos);
}
