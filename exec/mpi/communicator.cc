#include "exec/mpi/communicator.h"

#include <climits>
#include <cstdio>
#include <string>
#include <vector>

namespace planck::exec::mpi {
namespace {

MPI_Datatype mpi_type(DataType type) {
  switch (type) {
    case DataType::kUint8: return MPI_UINT8_T;
    case DataType::kUint16: return MPI_UINT16_T;
    case DataType::kUint32: return MPI_UINT32_T;
    case DataType::kUint64: return MPI_UINT64_T;
    case DataType::kFloat16: return MPI_DATATYPE_NULL;  // MPI has no half type
  }
  return MPI_DATATYPE_NULL;
}

core::Status check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return core::Status::ok();
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return core::Status::error(std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(len)));
}

// MPI counts are int: larger calls are refused with the numbers rather than truncated.
core::Status fits(const char* call, std::int64_t count, DataType type, int n = 1) {
  if (count < 0 || count > INT_MAX / (n > 0 ? n : 1)) {
    return core::Status::error(std::string(call) + " of " + std::to_string(count) + " elements x " +
                               std::to_string(n) + " ranks exceeds MPI's int count; lower --max-bytes");
  }
  if (mpi_type(type) == MPI_DATATYPE_NULL) {
    return core::Status::error(std::string(call) + ": MPI has no " + dtype_name(type) + " type");
  }
  return core::Status::ok();
}

}  // namespace

Communicator::Communicator(MPI_Comm comm, bool owned) : comm_(comm), owned_(owned) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
}

Communicator::~Communicator() {
  if (owned_ && comm_ != MPI_COMM_NULL && comm_ != MPI_COMM_WORLD) MPI_Comm_free(&comm_);
}

core::Result<std::unique_ptr<exec::Communicator>> Communicator::split(int color, int key) {
  MPI_Comm out = MPI_COMM_NULL;
  if (auto st = check(MPI_Comm_split(comm_, color < 0 ? MPI_UNDEFINED : color, key, &out), "MPI_Comm_split"); !st) {
    return st;
  }
  if (out == MPI_COMM_NULL) return std::unique_ptr<exec::Communicator>();
  return std::unique_ptr<exec::Communicator>(new Communicator(out, true));
}

core::Status Communicator::all_reduce(const void* send, void* recv, std::int64_t count, DataType type) {
  if (auto st = fits("MPI_Allreduce", count, type); !st) return st;
  return check(MPI_Allreduce(send, recv, static_cast<int>(count), mpi_type(type), MPI_SUM, comm_), "MPI_Allreduce");
}

core::Status Communicator::all_gather(const void* send, void* recv, std::int64_t count, DataType type) {
  if (auto st = fits("MPI_Allgather", count, type, size_); !st) return st;
  const int c = static_cast<int>(count);
  return check(MPI_Allgather(send, c, mpi_type(type), recv, c, mpi_type(type), comm_), "MPI_Allgather");
}

core::Status Communicator::reduce_scatter(const void* send, void* recv, std::int64_t count, DataType type) {
  if (auto st = fits("MPI_Reduce_scatter", count, type, size_); !st) return st;
  // MPI_Reduce_scatter, not _block: OpenMPI's tuned component offers its ring algorithm only
  // for the vector form (coll_tuned_reduce_scatter_algorithm 3).
  std::vector<int> counts(static_cast<std::size_t>(size_), static_cast<int>(count));
  return check(MPI_Reduce_scatter(send, recv, counts.data(), mpi_type(type), MPI_SUM, comm_), "MPI_Reduce_scatter");
}

core::Status Communicator::all_to_all(const void* send, void* recv, std::int64_t count, DataType type) {
  if (auto st = fits("MPI_Alltoall", count, type, size_); !st) return st;
  const int c = static_cast<int>(count);
  return check(MPI_Alltoall(send, c, mpi_type(type), recv, c, mpi_type(type), comm_), "MPI_Alltoall");
}

core::Status Communicator::broadcast(void* buffer, std::int64_t count, DataType type, int root) {
  if (auto st = fits("MPI_Bcast", count, type); !st) return st;
  return check(MPI_Bcast(buffer, static_cast<int>(count), mpi_type(type), root, comm_), "MPI_Bcast");
}

core::Status Communicator::send(const void* buffer, std::int64_t count, DataType type, int peer) {
  if (auto st = fits("MPI_Send", count, type); !st) return st;
  return check(MPI_Send(buffer, static_cast<int>(count), mpi_type(type), peer, 0, comm_), "MPI_Send");
}

core::Status Communicator::recv(void* buffer, std::int64_t count, DataType type, int peer) {
  if (auto st = fits("MPI_Recv", count, type); !st) return st;
  return check(MPI_Recv(buffer, static_cast<int>(count), mpi_type(type), peer, 0, comm_, MPI_STATUS_IGNORE),
               "MPI_Recv");
}

core::Status Communicator::send_recv(const void* send_buffer, int dst, void* recv_buffer, int src,
                                     std::int64_t count, DataType type) {
  if (auto st = fits("MPI_Sendrecv", count, type); !st) return st;
  const int c = static_cast<int>(count);
  return check(MPI_Sendrecv(send_buffer, c, mpi_type(type), dst, 1, recv_buffer, c, mpi_type(type), src, 1, comm_,
                            MPI_STATUS_IGNORE),
               "MPI_Sendrecv");
}

core::Status Communicator::barrier() { return check(MPI_Barrier(comm_), "MPI_Barrier"); }

void Communicator::abort(const std::string& reason) {
  std::fprintf(stderr, "planck: %s\n", reason.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 2);  // 2: could not run (docs/verify.md#exit-codes)
}

core::Result<double> Communicator::timed(const std::function<core::Status()>& body) {
  const double t0 = MPI_Wtime();
  core::Status st = body();
  const double t1 = MPI_Wtime();
  if (!st) return st;
  return t1 - t0;
}

}  // namespace planck::exec::mpi
