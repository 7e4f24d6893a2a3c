#include "exec/nccl/world.h"

#include <string>

#include "exec/nccl/communicator.h"

namespace planck::exec::nccl {

int visible_gpus() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
}

core::Result<std::unique_ptr<exec::Communicator>> init(exec::Communicator& bootstrap, int local_rank,
                                                       std::chrono::milliseconds timeout) {
  const int gpus = visible_gpus();
  if (gpus < 1) {
    return core::Status::error("--backend nccl: no CUDA device visible at world rank " +
                               std::to_string(bootstrap.rank()) +
                               " (no GPU or no driver on this host): run on GPU hosts, or use --backend mpi");
  }
  if (cudaSetDevice(local_rank % gpus) != cudaSuccess) {
    return core::Status::error("cudaSetDevice(" + std::to_string(local_rank % gpus) + ") failed at world rank " +
                               std::to_string(bootstrap.rank()));
  }
  ncclUniqueId id{};
  if (bootstrap.rank() == 0) {
    if (ncclResult_t rc = ncclGetUniqueId(&id); rc != ncclSuccess) {
      return core::Status::error(std::string("ncclGetUniqueId failed: ") + ncclGetErrorString(rc));
    }
  }
  if (auto st = bootstrap.broadcast(&id, static_cast<std::int64_t>(sizeof(id)), DataType::kUint8, 0); !st) {
    return core::Status::error("broadcast of the NCCL unique id failed: " + st.message());
  }
  ncclComm_t comm = nullptr;
  if (ncclResult_t rc = ncclCommInitRank(&comm, bootstrap.size(), id, bootstrap.rank()); rc != ncclSuccess) {
    return core::Status::error(std::string("ncclCommInitRank failed at world rank ") + std::to_string(bootstrap.rank()) +
                               ": " + ncclGetErrorString(rc));
  }
  return std::unique_ptr<exec::Communicator>(std::make_unique<Communicator>(comm, timeout));
}

}  // namespace planck::exec::nccl
