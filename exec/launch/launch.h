#pragma once
// Starting a run under a launcher (mpirun / srun): picks the backend (nccl when built and a GPU
// is visible, else mpi), pins MPI's transport and algorithms, initialises the world and the
// wire counters the backend's links have. Shared by `planck exec` and `planck calibrate`.

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "core/base/status.h"
#include "exec/communicator.h"
#include "exec/counters.h"
#include "exec/report.h"
#include "exec/traffic.h"

namespace planck::exec {

struct LaunchOptions {
  std::string backend;  // "", "mpi" or "nccl"; "" = the default rule above
  bool force_tcp = true;  // MPI over TCP (loopback on one host) so interface counters see it
  std::chrono::milliseconds timeout{std::chrono::seconds(30)};
};

struct Launch {
  std::unique_ptr<Communicator> world;      // the backend's world communicator
  std::unique_ptr<Communicator> bootstrap;  // the MPI world under NCCL (kept alive until shutdown)
  std::string backend;
  std::optional<MpiInfo> mpi;
  std::string link;  // link class this run exercises: "loopback", "shm", "nvlink" or "net"
  std::unique_ptr<WireCounter> wire;
  std::string wire_unavailable;  // why wire is null
  std::unique_ptr<PeerTrafficSource> traffic;  // per-peer bytes by the transport
  std::string traffic_unavailable;             // why traffic is null
  bool single_host = true;
};

// Backends compiled into this binary, e.g. "mpi, nccl" (for messages).
std::string built_backends();

// An error names what is missing (exit 2: "missing backend").
core::Result<Launch> launch(const LaunchOptions& options);
// Rank 0 of the world, before or without a launch (launcher variables; 0 when unknown).
int launcher_rank();
// Whether a launcher (mpirun, srun, a PMI/PMIx one) started this process.
bool under_launcher();
// Ends the run: frees communicators, then MPI_Finalize.
void shutdown(Launch& launch);

}  // namespace planck::exec
