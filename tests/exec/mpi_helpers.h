#pragma once
// Helpers of the tests that start planck under mpirun (PLANCK_BIN, PLANCK_MPIEXEC from CMake).

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/run_command.h"

namespace planck_test {

// stdout and stderr of `cmd`, with OpenMPI allowed to start as root (CI runs as root).
inline CommandRun sh(const std::string& cmd) {
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  return run_command(cmd + " 2>&1");
}

inline std::string tmp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("planck_exec_test_" + name)).string();
}

inline std::string mpirun(int np) {
  // `timeout` bounds a hung run so a broken build fails instead of stalling CI.
  return std::string("timeout 120 ") + PLANCK_MPIEXEC + " --oversubscribe -np " + std::to_string(np) + " ";
}

inline std::string exec_plan(const std::string& name) { return std::string(PLANCK_TEST_DATA_DIR) + "/exec/" + name; }

// No "<output>.tmp.<pid>" left beside a report: the atomic writer's temporaries are gone.
inline bool no_temporaries(const std::string& output) {
  const std::filesystem::path p(output);
  for (const auto& e : std::filesystem::directory_iterator(p.parent_path())) {
    if (e.path().filename().string().rfind(p.filename().string() + ".tmp", 0) == 0) return false;
  }
  return true;
}

}  // namespace planck_test
