// Inputs are bounded and clean (docs/files.md): '-' is stdin everywhere, an endless input stops at
// the 512 MiB cap, a Latin-1 host name in a log is no internal error, groups refuses a listing it
// cannot hold, and a topology profile with no figures is refused (issue 22's probes).

#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/run_command.h"
#include "tests/temp_dir.h"

namespace fs = std::filesystem;

namespace {

using Run = planck_test::CommandRun;

Run planck(const std::string& args) { return planck_test::run_command(std::string(PLANCK_BIN) + " " + args + " 2>&1"); }

std::string plans(const char* name) { return std::string(PLANCK_PLANS_DIR) + "/" + name; }

fs::path temp_dir() {
  fs::path d = planck_test::process_temp_dir("planck-input-cli-test");
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST_CASE("stdin '-' is read by verify and observe") {
  Run v = planck("verify - < " + plans("ddp-8.json"));
  CHECK(v.code == 0);
  CHECK(v.out.find("-: ok") != std::string::npos);
  Run o = planck("observe - --format text < " + std::string(PLANCK_TEST_DATA_DIR) + "/observed/synth/nccl-2.21.log");
  CHECK(o.code == 0);
  CHECK(o.out.find("world: 8") != std::string::npos);
}

TEST_CASE("observe of an endless input stops at the cap with exit 2") {
  Run r = planck_test::run_command("timeout 60 " + std::string(PLANCK_BIN) + " observe /dev/zero 2>&1");
  CHECK(r.code == 2);  // not 124: it ended by itself
  CHECK(r.out.find("more than 536870912 bytes (512 MiB)") != std::string::npos);
}

TEST_CASE("a Latin-1 byte in a log's host name is replaced, not an internal error") {
  const fs::path log = temp_dir() / "latin1.log";
  {
    std::ofstream out(log, std::ios::binary);
    // Two ranks of one world on host "n\xe9ud" (Latin-1 e-acute), as tests/data/observed/synth/.
    for (int r = 0; r < 2; ++r) {
      out << "n\xe9ud:100" << r << ":100" << r << " [" << r << "] NCCL INFO comm 0x5" << r << " rank " << r
          << " nranks 2 cudaDev " << r << " busId 1" << r << "000 - Init COMPLETE\n";
    }
  }
  Run r = planck("observe " + log.string());
  CHECK(r.code == 0);
  CHECK(r.out.find("internal error") == std::string::npos);
  CHECK(r.out.find("n\xef\xbf\xbdud") != std::string::npos);  // U+FFFD in place of the byte
}

TEST_CASE("groups refuses a listing over its memory bound before allocating, naming the size") {
  const fs::path plan = temp_dir() / "huge.json";
  std::ofstream(plan) << R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 2147483647},
    "mesh": {"dims": ["dp_shard"], "shape": [2147483647]}, "parallelism": {"data_parallel": "fsdp"}})";
  Run r = planck_test::run_command("timeout 60 " + std::string(PLANCK_BIN) + " groups " + plan.string() + " 2>&1");
  CHECK(r.code == 2);
  CHECK(r.out.find("1 GiB") != std::string::npos);
  CHECK(r.out.find("2147483647 ranks") != std::string::npos);
  CHECK(r.seconds < 10);
}

TEST_CASE("a topology profile with no figures is refused, a partial one named in a note") {
  const fs::path empty = temp_dir() / "empty-topo.json";
  std::ofstream(empty) << R"({"format":"planck-topology/1"})";
  Run e = planck("simulate " + plans("hsdp-2x4.json") + " --topology " + empty.string());
  CHECK(e.code == 2);
  CHECK(e.out.find("no link figures") != std::string::npos);
  const fs::path part = temp_dir() / "part-topo.json";
  std::ofstream(part) << R"({"format":"planck-topology/1","links":{"nvlink":{"all_reduce":)"
                         R"({"latency_s":1e-5,"step_latency_s":0,"bandwidth_GBps":100}}}})";
  Run p = planck("simulate " + plans("hsdp-2x4.json") + " --topology " + part.string());
  CHECK(p.code == 0);
  CHECK(p.out.find("partial topology profile") != std::string::npos);
  CHECK(p.out.find("all_gather on nvlink") != std::string::npos);
}
