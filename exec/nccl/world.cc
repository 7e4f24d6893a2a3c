#include "exec/nccl/world.h"

#include <string>

namespace planck::exec::nccl {

int visible_gpus() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
}

core::Result<std::unique_ptr<Communicator>> init(mpi::Communicator& world, int local_rank,
                                                 std::chrono::milliseconds timeout) {
  const int gpus = visible_gpus();
  if (gpus < 1) return core::Status::error("no CUDA device visible at world rank " + std::to_string(world.rank()));
  if (cudaSetDevice(local_rank % gpus) != cudaSuccess) {
    return core::Status::error("cudaSetDevice(" + std::to_string(local_rank % gpus) + ") failed at world rank " +
                               std::to_string(world.rank()));
  }
  ncclUniqueId id{};
  if (world.rank() == 0) {
    if (ncclResult_t rc = ncclGetUniqueId(&id); rc != ncclSuccess) {
      return core::Status::error(std::string("ncclGetUniqueId failed: ") + ncclGetErrorString(rc));
    }
  }
  if (MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, world.handle()) != MPI_SUCCESS) {
    return core::Status::error("MPI_Bcast of the NCCL unique id failed");
  }
  ncclComm_t comm = nullptr;
  if (ncclResult_t rc = ncclCommInitRank(&comm, world.size(), id, world.rank()); rc != ncclSuccess) {
    return core::Status::error(std::string("ncclCommInitRank failed at world rank ") + std::to_string(world.rank()) +
                               ": " + ncclGetErrorString(rc));
  }
  return std::make_unique<Communicator>(comm, timeout);
}

}  // namespace planck::exec::nccl
