#pragma once
// Starting the MPI world: transport and collective-algorithm pinning (before MPI_Init), init,
// finalize.
//
// Why pin: the prediction models ring all-reduce / all-gather / reduce-scatter, pairwise
// all-to-all and a pipelined chain broadcast (core/schedule/collectives.h). OpenMPI's coll_tuned picks
// other algorithms by size unless its dynamic rules are on, so exec sets them through
// OMPI_MCA_* variables in its own environment before MPI_Init (OpenMPI reads MCA parameters
// from the environment at init). Why TCP: the wire-byte check reads interface counters
// (/proc/net/dev), which see TCP but not shared memory; on one host OpenMPI excludes loopback
// from its TCP transport unless btl_tcp_if_include names it. A variable the user or the
// launcher already set (mpirun --mca X Y exports OMPI_MCA_X) is kept and reported as such.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/base/status.h"
#include "exec/mpi/communicator.h"
#include "exec/mpi_plugin.h"

namespace planck::exec::mpi {

using Settings = MpiSettings;

// Sets the OMPI_MCA_* variables (not already set) for the pinned algorithms and, when
// `force_tcp`, for TCP over loopback (single host) or over the default interfaces. Call before
// init(). Returns what is in effect.
Settings configure(bool force_tcp);

// MPI_Init_thread (once) and the world communicator.
core::Result<std::unique_ptr<Communicator>> init(int* argc, char*** argv);
bool initialized();
void finalize();

}  // namespace planck::exec::mpi
