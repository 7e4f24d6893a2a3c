#pragma once
// The seam between the planck binary and its MPI backend. OpenMPI (libmpi and the dozen
// libraries it pulls in: open-rte, open-pal, hwloc, libevent, udev) lives in a plugin,
// libplanck_mpi.so, built whenever MPI is found; `planck` loads it with dlopen only when
// `exec`, `calibrate` or `bench` start a world, so every other command starts without mapping
// it (docs/exec.md, "Plugins"). The plugin exports one C symbol, planck_mpi_plugin_v1; the
// loader refuses a table whose abi or planck version differs from its own, since the two sides
// share C++ types (Communicator, Result) and must be built from the same source.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/base/status.h"
#include "exec/communicator.h"

namespace planck::exec {

// Bumped whenever MpiPlugin or a type it passes changes.
inline constexpr int kMpiPluginAbi = 1;

// What the MPI world started with (exec/mpi/world.h configure): the transport and algorithms
// pinned through OMPI_MCA_* variables, and the user's own settings kept.
struct MpiSettings {
  std::string transport = "default";                            // "tcp" when forced
  std::vector<std::string> interfaces;                          // "lo" on one host
  std::vector<std::pair<std::string, std::string>> algorithms;  // op name -> algorithm
  std::vector<std::string> notes;                               // user overrides kept
};

struct MpiStarted {
  MpiSettings settings;
  std::unique_ptr<Communicator> world;
  int local_size = 1;  // ranks sharing this host (MPI_COMM_TYPE_SHARED)
  int local_rank = 0;
};

struct MpiPlugin {
  int abi = 0;
  const char* planck_version = "";  // PLANCK_VERSION of the build that made the plugin
  const char* built_with = "";      // e.g. "Open MPI 4.1.4"
  // Pins the transport (TCP when `force_tcp`) and the collective algorithms, initialises MPI
  // (once) and returns the world with this host's share of it.
  core::Result<MpiStarted> (*start)(bool force_tcp) = nullptr;
  void (*finalize)() = nullptr;
};

// $PLANCK_MPI_PLUGIN (a file), then <directory of the planck binary>/../lib/planck/libplanck_mpi.so.
core::Result<const MpiPlugin*> load_mpi_plugin();
std::string mpi_plugin_path();  // present on disk (not loaded), or ""

}  // namespace planck::exec

// The plugin's one exported symbol.
extern "C" const planck::exec::MpiPlugin* planck_mpi_plugin_v1();
