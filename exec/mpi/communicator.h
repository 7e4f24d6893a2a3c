#pragma once
// The OpenMPI backend: one MPI communicator behind exec::Communicator. Errors return (the
// world runs with MPI_ERRORS_RETURN) and become Status values naming the call and MPI's reason.

#include <mpi.h>

#include "exec/communicator.h"

namespace planck::exec::mpi {

class Communicator final : public exec::Communicator {
 public:
  // Wraps `comm`; frees it on destruction when `owned` (never MPI_COMM_WORLD).
  Communicator(MPI_Comm comm, bool owned);
  ~Communicator() override;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  MPI_Comm handle() const { return comm_; }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* backend() const override { return "mpi"; }
  core::Result<std::unique_ptr<exec::Communicator>> split(int color, int key) override;
  core::Status all_reduce(const void* send, void* recv, std::int64_t count, DataType type) override;
  core::Status all_gather(const void* send, void* recv, std::int64_t count, DataType type) override;
  core::Status reduce_scatter(const void* send, void* recv, std::int64_t count, DataType type) override;
  core::Status all_to_all(const void* send, void* recv, std::int64_t count, DataType type) override;
  core::Status broadcast(void* buffer, std::int64_t count, DataType type, int root) override;
  core::Status send(const void* buffer, std::int64_t count, DataType type, int peer) override;
  core::Status recv(void* buffer, std::int64_t count, DataType type, int peer) override;
  core::Status send_recv(const void* send_buffer, int dst, void* recv_buffer, int src, std::int64_t count,
                         DataType type) override;
  core::Status barrier() override;
  void abort(const std::string& reason) override;
  core::Result<double> timed(const std::function<core::Status()>& body) override;

 private:
  MPI_Comm comm_;
  bool owned_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace planck::exec::mpi
