#pragma once
// The NCCL backend: one ncclComm_t and its CUDA stream behind exec::Communicator. Buffers are
// device memory; every call enqueues on the stream and then waits for it, polling
// ncclCommGetAsyncError, and aborts the communicator (ncclCommAbort) when the configured
// timeout passes, so a dead peer surfaces as an error instead of a hang. Kept thin on purpose:
// the logic above it (runner, checks, report) is exercised by the MPI and threads tests, since
// no GPU is available where planck is developed.

#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>

#include "exec/communicator.h"

namespace planck::exec::nccl {

class Communicator final : public exec::Communicator {
 public:
  Communicator(ncclComm_t comm, std::chrono::milliseconds timeout);
  ~Communicator() override;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* backend() const override { return "nccl"; }
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

  DataType exact_type(int bytes) const override;
  core::Result<Buffer> allocate(std::int64_t bytes) override;
  core::Status to_device(Buffer& dst, const void* host, std::int64_t bytes) override;
  core::Status to_host(void* host, const Buffer& src, std::int64_t bytes) override;
  core::Result<double> timed(const std::function<core::Status()>& body) override;

 private:
  // Checks the enqueue result, then waits for the stream with the timeout and async-error poll.
  core::Status finish(ncclResult_t enqueued, const char* call);

  ncclComm_t comm_;
  cudaStream_t stream_ = nullptr;
  std::chrono::milliseconds timeout_;
  int rank_ = 0;
  int size_ = 1;
  bool aborted_ = false;
  Buffer barrier_buffer_;  // 4 bytes of device memory, allocated on the first barrier
};

}  // namespace planck::exec::nccl
