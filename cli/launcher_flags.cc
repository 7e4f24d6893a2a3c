#include "cli/launcher_flags.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "cli/command.h"

namespace planck::cli {

exec::LaunchOptions LauncherFlags::launch_options() const {
  exec::LaunchOptions lo;
  lo.backend = backend;
  lo.force_tcp = mpi_transport == "tcp";
  lo.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout_s * 1000));
  return lo;
}

void add_launcher_flags(CLI::App& app, LauncherFlags& flags) {
  app.add_option("--backend", flags.backend, "nccl or mpi (default: nccl when built and a GPU is visible, else mpi)")
      ->check(CLI::IsMember({"nccl", "mpi"}));
  char timeout_default[32];
  std::snprintf(timeout_default, sizeof timeout_default, "%g", flags.timeout_s);
  app.add_option("--timeout", flags.timeout_s,
                 "seconds any one step may take before the job is ended with an error naming the rank")
      ->check(CLI::Range(0.1, 86400.0))
      ->default_str(timeout_default);
  app.add_option("--mpi-transport", flags.mpi_transport,
                 "tcp: force OpenMPI onto TCP (loopback on one host) so interface counters measure wire bytes; "
                 "auto: OpenMPI's own choice (shared memory on one host: wire bytes unmeasured)")
      ->check(CLI::IsMember({"tcp", "auto"}))
      ->default_str("tcp");
}

std::unique_ptr<exec::Watchdog> exit_on_hang(int rank, double timeout_s) {
  const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout_s * 1000));
  return std::make_unique<exec::Watchdog>(timeout, [rank, timeout_s](const std::string& what) {
    // A rank that died is normally reported by the launcher first; this catches hangs too.
    std::fprintf(stderr,
                 "planck: rank %d: %s did not complete within %.0f s: a peer rank died or hangs; ending the job "
                 "(raise --timeout for slow links)\n",
                 rank, what.c_str(), timeout_s);
    std::fflush(stderr);
    std::_Exit(kExitCannotRun);
  });
}

}  // namespace planck::cli
