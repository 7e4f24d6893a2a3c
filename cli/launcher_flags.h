#pragma once
// The launcher flags `planck exec` and `planck calibrate` share (--backend, --timeout,
// --mpi-transport), the exec::LaunchOptions they mean, and the watchdog both install: a step
// that outlives --timeout ends the job with an error naming the rank (docs/exec.md, "Faults").

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "exec/launch/launch.h"
#include "exec/runner.h"

namespace planck::cli {

struct LauncherFlags {
  std::string backend;  // "" = nccl when built and a GPU is visible, else mpi
  double timeout_s = 30;
  std::string mpi_transport = "tcp";

  exec::LaunchOptions launch_options() const;
};

// Adds the three flags; `timeout_s` keeps its current value as the default.
void add_launcher_flags(CLI::App& app, LauncherFlags& flags);

// On expiry prints "planck: rank R: <step> did not complete within T s: ..." and exits 2 at once
// (std::_Exit: the other ranks are blocked in the collective, nothing can be cleaned up).
std::unique_ptr<exec::Watchdog> exit_on_hang(int rank, double timeout_s);

}  // namespace planck::cli
