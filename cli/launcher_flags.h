#pragma once
// The launcher flags `planck exec` and `planck calibrate` share (--backend, --timeout,
// --mpi-transport), the exec::LaunchOptions they mean, the watchdog both install (a step that
// outlives --timeout ends the job with an error naming the rank that stopped; docs/exec.md,
// "Faults"), and (through cli/number_flags.h) the numeric flag checks every command uses.

#include <cstdint>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/number_flags.h"
#include "exec/heartbeat.h"
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

// Above 1 GiB per call, prints (on `root`) a warning that the run will take minutes with no output
// (calls x bytes at a few GB/s); the run goes on.
void warn_if_slow(bool root, std::int64_t max_bytes, int calls_per_op);

// The watchdog and this rank's heartbeat slot, kept together (the watchdog stamps the slot).
struct HangGuard {
  std::unique_ptr<exec::Heartbeats> heartbeats;
  std::unique_ptr<exec::Watchdog> watchdog;
  exec::Watchdog* get() const { return watchdog.get(); }
};

// On expiry prints "planck: rank R: <step> did not complete within T s: rank 3 (pid P) stopped
// responding: no heartbeat for ..." and exits 2 at once (std::_Exit: the other ranks are blocked
// in the collective, nothing can be cleaned up).
HangGuard exit_on_hang(int rank, int world, double timeout_s);

}  // namespace planck::cli
