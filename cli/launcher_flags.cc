#include "cli/launcher_flags.h"

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cmath>
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

CLI::Validator whole_number(std::int64_t lo, std::int64_t hi) {
  const std::string range = "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, range](std::string& value) -> std::string {
        char* end = nullptr;
        errno = 0;
        const long long v = std::strtoll(value.c_str(), &end, 10);
        if (value.empty() || *end != '\0' || errno == ERANGE || v < lo || v > hi) {
          return "'" + value + "' is not " + range;
        }
        return "";
      },
      range);
}

CLI::Validator finite_seconds(double lo, double hi) {
  char range[96];
  std::snprintf(range, sizeof range, "seconds, a finite number from %g to %g", lo, hi);
  const std::string r = range;
  return CLI::Validator(
      [lo, hi, r](std::string& value) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(value.c_str(), &end);
        if (value.empty() || *end != '\0' || !std::isfinite(v) || v < lo || v > hi) {
          return "'" + value + "' is not " + r;
        }
        return "";
      },
      r);
}

void warn_if_slow(bool root, std::int64_t max_bytes, int calls_per_op) {
  constexpr std::int64_t kSlowBytes = std::int64_t{1} << 30;
  if (!root || max_bytes <= kSlowBytes) return;
  std::fprintf(stderr,
               "planck: warning: --max-bytes %lld (%.0f GiB) makes each of the largest calls move that much per "
               "rank, %d times per collective: at a few GB/s this takes minutes with no output (the default is "
               "64MiB)\n",
               static_cast<long long>(max_bytes), static_cast<double>(max_bytes) / (1 << 30), calls_per_op);
}

void add_launcher_flags(CLI::App& app, LauncherFlags& flags) {
  app.add_option("--backend", flags.backend, "nccl or mpi (default: nccl when the GPU plugin libplanck_gpu.so loads and sees a GPU, else mpi)")
      ->check(CLI::IsMember({"nccl", "mpi"}));
  char timeout_default[32];
  std::snprintf(timeout_default, sizeof timeout_default, "%g", flags.timeout_s);
  app.add_option("--timeout", flags.timeout_s,
                 "seconds any one step may take before the job is ended (exit 2) with an error naming the rank "
                 "that stopped (0.1 to 86400)")
      ->check(finite_seconds(0.1, 86400.0))
      ->default_str(timeout_default);
  app.add_option("--mpi-transport", flags.mpi_transport,
                 "tcp: force OpenMPI onto TCP (loopback on one host) so interface counters measure wire bytes; "
                 "auto: OpenMPI's own choice (shared memory on one host: wire bytes unmeasured)")
      ->check(CLI::IsMember({"tcp", "auto"}))
      ->default_str("tcp");
}

HangGuard exit_on_hang(int rank, int world, double timeout_s) {
  const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout_s * 1000));
  // Ten beats per timeout, at most one a second: cheap, and a stopped rank is silent for many.
  const auto interval = std::clamp(timeout / 10, std::chrono::milliseconds(10), std::chrono::milliseconds(1000));
  HangGuard g;
  g.heartbeats = std::make_unique<exec::Heartbeats>(rank, world, interval);
  exec::Heartbeats* hb = g.heartbeats.get();
  g.watchdog = std::make_unique<exec::Watchdog>(
      timeout,
      [rank, timeout_s, hb](const std::string& what) {
        // A rank that died is normally reported by the launcher first; this catches hangs too.
        const std::string who = hb->blame(timeout_s);
        std::fprintf(stderr, "planck: rank %d: %s did not complete within %g s: %s; ending the job (exit 2; raise "
                     "--timeout for slow links)\n", rank, what.c_str(), timeout_s, who.c_str());
        std::fflush(stderr);
        std::_Exit(kExitCannotRun);
      },
      hb);
  return g;
}

}  // namespace planck::cli
