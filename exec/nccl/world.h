#pragma once
// Starting the NCCL world over a bootstrap world (MPI under mpirun): one GPU per local rank, the
// unique id made by rank 0 and broadcast over the bootstrap communicator as bytes (Debian's
// OpenMPI is not CUDA-aware, so the bootstrap only ever carries this id and host data), then
// ncclCommInitRank. Compiled into the GPU plugin (exec/gpu_plugin.h), never into `planck`.

#include <chrono>
#include <memory>

#include "core/base/status.h"
#include "exec/communicator.h"

namespace planck::exec::nccl {

// CUDA devices this process sees (0 when there is no driver or GPU).
int visible_gpus();

core::Result<std::unique_ptr<exec::Communicator>> init(exec::Communicator& bootstrap, int local_rank,
                                                       std::chrono::milliseconds timeout);

}  // namespace planck::exec::nccl
