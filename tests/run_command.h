#pragma once
// Runs a shell command for the tests that drive the planck binary (cli, sim_cli, exec mpirun
// runs): its exit code, everything it wrote to stdout (callers add 2>&1 or 2>/dev/null), and
// its wall time. (Namespace planck_test: cli_test has a function called planck.)
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace planck_test {

struct CommandRun {
  int code = -1;  // -1 when the command did not exit normally (a signal)
  std::string out;
  double seconds = 0;
};

inline CommandRun run_command(const std::string& cmd) {
  CommandRun r;
  const auto t0 = std::chrono::steady_clock::now();
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

// `cmd` with stderr merged into stdout and OpenMPI allowed to start as root (CI runs as root):
// the mpirun runs of the exec tests.
inline CommandRun run_mpi_command(const std::string& cmd) {
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  return run_command(cmd + " 2>&1");
}

}  // namespace planck_test
