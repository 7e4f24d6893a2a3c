// exec faults under mpirun (docs/exec.md, "Faults"): a rank frozen by SIGSTOP is named by the
// surviving ranks' watchdogs within --timeout; numeric flags are refused before any launch.

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/run_command.h"

namespace {

using Run = planck_test::CommandRun;

Run sh(const std::string& cmd) { return planck_test::run_mpi_command(cmd); }

std::string plan(const std::string& name) { return std::string(PLANCK_TEST_DATA_DIR) + "/exec/" + name; }

}  // namespace

TEST_CASE("exec_mpi_sigstop_rank_3_of_8_is_named_within_the_timeout") {
  // Many iterations so the run is still going when rank 3 (found by its OMPI_COMM_WORLD_RANK)
  // is frozen 4 s in; the others block in a collective with it and their watchdogs fire.
  const std::string marker = (std::filesystem::temp_directory_path() / "planck_sigstop_test.json").string();
  const int timeout_s = 8;
  const std::string script =
      "timeout 120 " + std::string(PLANCK_MPIEXEC) + " --oversubscribe -np 8 " + PLANCK_BIN + " exec " +
      plan("hsdp-2x4.json") + " --backend mpi --max-bytes 64KiB --iters 100000 --timeout " +
      std::to_string(timeout_s) + " -o " + marker + " & job=$!; sleep 4; stopped=; "
      "for p in $(pgrep -f '" + marker + "'); do "
      "  if tr '\\0' '\\n' < /proc/$p/environ 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=3; then "
      "    kill -STOP $p && stopped=$p; fi; done; "
      "echo \"stopped pid $stopped at $(date +%s.%N)\"; wait $job; rc=$?; echo \"ended at $(date +%s.%N)\"; "
      "[ -n \"$stopped\" ] && kill -KILL $stopped 2>/dev/null; exit $rc";
  Run r = sh("{ " + script + "; }");  // one group, so 2>&1 covers every command
  INFO(r.out);
  REQUIRE(r.out.find("stopped pid ") != std::string::npos);
  REQUIRE(r.out.find("stopped pid  ") == std::string::npos);  // a pid was found and stopped
  CHECK(r.code == 2);  // the watchdog's exit code, passed on by mpirun
  CHECK(r.out.find("rank 3 (pid") != std::string::npos);
  CHECK(r.out.find("stopped responding") != std::string::npos);
  // Named within the timeout: stop at ~4 s, error by 4 + timeout + a few seconds of teardown.
  CHECK(r.seconds < 4 + timeout_s + 10);
}

TEST_CASE("exec_flags_refused_before_launch") {
  const std::string exec = std::string(PLANCK_BIN) + " exec " + plan("hsdp-2x4.json");
  Run nan = sh(exec + " --timeout nan");
  CHECK(nan.code == 2);
  CHECK(nan.out.find("'nan' is not seconds, a finite number") != std::string::npos);
  Run kill = sh(exec + " --kill-rank 99");
  CHECK(kill.code == 2);
  CHECK(kill.out.find("--kill-rank 99 is not a rank") != std::string::npos);
  CHECK(kill.out.find("ranks 0 to 7") != std::string::npos);
  Run gpn = sh(std::string(PLANCK_BIN) + " enumerate --world 8 --gpus-per-node 0 --model llama3-8b");
  CHECK(gpn.code == 2);
  CHECK(gpn.out.find("'0' is not a whole number from 1 to 2147483647") != std::string::npos);
  CHECK(gpn.out.find("1.79") == std::string::npos);
}

TEST_CASE("exec_output_path_checked_before_any_rank_starts_a_collective") {
  Run r = sh("timeout 60 " + std::string(PLANCK_MPIEXEC) + " --oversubscribe -np 8 " + PLANCK_BIN + " exec " +
             plan("hsdp-2x4.json") + " --backend mpi -o /nonexistent-dir/r.json");
  INFO(r.out);
  // Rank 0 exits 2 before MPI_Init; mpirun then aborts the job, passing on 2 or, when it loses a
  // race with its own output forwarding, 141 (SIGPIPE): non-zero either way (docs/exec.md).
  CHECK(r.code != 0);
  CHECK(r.out.find("cannot write /nonexistent-dir/r.json: directory /nonexistent-dir does not exist") != std::string::npos);
  CHECK(r.out.find("membership") == std::string::npos);
  CHECK(r.seconds < 30);
}
