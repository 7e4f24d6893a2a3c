// Real multi-process runs: mpirun --oversubscribe -np 8 planck exec on the exec test plans
// (DDP, HSDP 2x4, pp x dp x tp), a launcher of the wrong size, and a rank that dies.
// Expected bytes come from the ring formulas written here (docs/sources/simulator.md §1.2).

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/exec/mpi_helpers.h"

namespace {

using Run = planck_test::CommandRun;
using planck_test::mpirun;
using planck_test::sh;
using planck_test::tmp_path;

std::string plan(const std::string& name) { return planck_test::exec_plan(name); }

std::int64_t ring_bytes(const std::string& op, std::int64_t n, std::int64_t s) {
  if (op == "all_reduce") return 2 * (n - 1) * s / n;
  if (op == "all_gather" || op == "reduce_scatter" || op == "all_to_all") return (n - 1) * s / n;
  return s;  // broadcast, send_recv
}

// Runs a plan on 8 ranks and checks everything the report must say.
nlohmann::json run_ok(const std::string& plan_name) {
  const std::string out = tmp_path(plan_name);
  std::filesystem::remove(out);
  Run r = sh(mpirun(8) + PLANCK_BIN + " exec " + plan(plan_name) +
             " --backend mpi --max-bytes 256KiB --warmup 1 --iters 2 --timeout 60 -o " + out);
  INFO(r.out);
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(std::ifstream(out));
  CHECK(j["format"] == "planck-exec/1");
  CHECK(j["backend"] == "mpi");
  CHECK(j["world"] == 8);
  CHECK(j["membership"]["ok"] == true);
  CHECK(j["mpi"]["algorithms"]["all_reduce"] == "ring");
  CHECK(j["mpi"]["transport"] == "tcp");
  CHECK(j["summary"]["ok"] == true);
  // No --topology: the run says it is uncalibrated and gives no time ratio.
  CHECK(j["summary"]["calibrated"] == false);
  CHECK(j["summary"]["time_ratio_median"].is_null());
  CHECK(r.out.find("uncalibrated") != std::string::npos);
  REQUIRE(j["ops"].size() > 0);
  for (const auto& op : j["ops"]) {
    CAPTURE(op.dump());
    const std::int64_t n = op["group_size"], s = op["bytes_per_call"];
    CHECK(s <= 256 * 1024);
    CHECK(op["wrong_elements"] == 0);
    // Measured by the transport (TCP socket counts): the ring bytes plus its message headers.
    CHECK(op["bytes_source"] == "tcp-socket");
    CHECK(op["predicted_bytes_sent_per_rank"] == ring_bytes(op["op"], n, s));
    const double api = static_cast<double>(ring_bytes(op["op"], n, s));
    const double sent = op["measured_bytes_sent_per_rank"].get<double>();
    CHECK(sent >= api);
    CHECK(sent <= api * 1.03 + 512);
    CHECK(op["traffic"]["measured"] == true);
    CHECK(op["traffic"]["ok"] == true);
    CHECK(op["wire_source"] == "netdev:lo");
    const double wire = op["wire_bytes_measured"].get<double>();
    const double predicted = op["predicted_bytes_sent_per_rank"].get<double>();
    // Gated from 64 KiB per rank: there the interface counter must agree within 3%. Below it,
    // exec reports the wire figure without judging it, because the loopback counter holds every
    // process's packets (barriers, ACKs, the machine's own) in both the busy and the idle window
    // it subtracts: CI saw 2,486 and later 2,433 of 2,506 bytes per rank, 3 and 9 packets of 66 B
    // short. Below the gate this checks only that the interface saw the traffic (half the payload
    // or more); the exact bytes are the socket counters' (measured_bytes_sent_per_rank, above).
    CHECK(op["wire_gated"] == (predicted >= 64 * 1024));
    if (predicted >= 64 * 1024) {
      CHECK(std::abs(wire / predicted - 1) <= 0.03);
    } else {
      CHECK(wire >= predicted / 2);
    }
    CHECK(op["measured_time_s"]["min"].get<double>() > 0);
  }
  std::filesystem::remove(out);
  return j;
}

std::int64_t groups_of(const nlohmann::json& j, const std::string& role, std::int64_t* size) {
  for (const auto& c : j["membership"]["communicators"]) {
    if (c["role"] == role) {
      *size = c["group_size"];
      return c["groups"];
    }
  }
  return -1;
}

}  // namespace

TEST_CASE("exec_mpi_ddp_8") {
  auto j = run_ok("ddp-8.json");
  std::int64_t size = 0;
  CHECK(groups_of(j, "dp", &size) == 1);
  CHECK(size == 8);
}

TEST_CASE("exec_mpi_hsdp_2x4") {
  auto j = run_ok("hsdp-2x4.json");
  std::int64_t size = 0;
  CHECK(groups_of(j, "fsdp", &size) == 2);
  CHECK(size == 4);
  CHECK(groups_of(j, "replicate", &size) == 4);
  CHECK(size == 2);
}

TEST_CASE("exec_mpi_tp_pp_dp") {
  auto j = run_ok("tp-pp-dp.json");
  std::int64_t size = 0;
  CHECK(groups_of(j, "tp", &size) == 4);
  CHECK(size == 2);
  CHECK(groups_of(j, "pp", &size) == 4);
  CHECK(size == 2);
}

TEST_CASE("exec_mpi_wrong_launcher_size_exits_2") {
  const std::string out = tmp_path("wrong_size.json");
  std::filesystem::remove(out);
  Run r = sh(mpirun(4) + PLANCK_BIN + " exec " + plan("hsdp-2x4.json") + " --backend mpi -o " + out);
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.find("started 4 ranks") != std::string::npos);
  CHECK(r.out.find("= 8 ranks") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("exec_mpi_killed_rank_ends_the_job") {
  const std::string out = tmp_path("killed.json");
  std::filesystem::remove(out);
  Run r = sh(mpirun(8) + PLANCK_BIN + " exec " + plan("hsdp-2x4.json") +
             " --backend mpi --max-bytes 64KiB --iters 2 --timeout 20 --kill-rank 3 -o " + out);
  INFO(r.out);
  // mpirun exits with the status of the first rank that failed; killed by SIGKILL that is
  // 128 + 9 = 137, the code docs/exec.md ("Faults") documents.
  CHECK(r.code == 137);
  CHECK(r.seconds < 60);
  CHECK(r.out.find("rank 3") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("exec_mpi_calibrate_then_exec_uses_the_measured_points") {
  // A small sweep on 8 ranks (groups of 8, 4, 2; 4 KiB to 64 KiB), then exec of HSDP 2x4 with
  // it: every op's group size was swept, so every prediction comes from the points.
  const std::string topo = tmp_path("topo.json"), out = tmp_path("calibrated.json");
  std::filesystem::remove(topo);
  std::filesystem::remove(out);
  Run c = sh(mpirun(8) + PLANCK_BIN + " calibrate --backend mpi --max-bytes 64KiB --iters 1 --timeout 60 -o " + topo);
  INFO(c.out);
  REQUIRE(c.code == 0);
  auto t = nlohmann::json::parse(std::ifstream(topo));
  CHECK(t["format"] == "planck-topology/1");
  const auto& ar = t["links"]["loopback"]["all_reduce"];
  // Sizes 4, 16, 64 KiB (rounded down to whole 4-byte elements per rank) x group sizes 8, 4, 2.
  REQUIRE(ar["points"].size() == 9);
  for (const auto& p : ar["points"]) {
    CHECK(p[0].get<int>() % 2 == 0);
    CHECK(p[2].get<double>() > 0);
  }
  CHECK(ar["bandwidth_GBps"].get<double>() > 0);
  Run e = sh(mpirun(8) + PLANCK_BIN + " exec " + plan("hsdp-2x4.json") +
             " --backend mpi --max-bytes 64KiB --warmup 1 --iters 2 --timeout 60 --topology " + topo + " -o " + out);
  INFO(e.out);
  REQUIRE(e.code == 0);
  auto j = nlohmann::json::parse(std::ifstream(out));
  CHECK(j["prediction"]["basis"] == "topology");
  for (const auto& op : j["ops"]) {
    CAPTURE(op.dump());
    CHECK(op["model"] == "measured");
    CHECK(op["predicted_time_s"].get<double>() > 0);
  }
  CHECK(j["summary"]["calibrated"] == true);
  CHECK(j["summary"]["time_ratio_median"].get<double>() > 0);
  CHECK(e.out.find("# time ratio median: ") != std::string::npos);
  CHECK(e.out.find("uncalibrated") == std::string::npos);
}
