#pragma once
// The in-process test double: every rank is a thread, every collective a rendezvous over
// shared memory (gloo test/base_test.h spawns threads as ranks the same way). It implements
// the whole Communicator contract, including split, abort and timeouts, so the runner's logic
// is unit-tested without a launcher.

#include <chrono>
#include <memory>
#include <string>

#include "exec/communicator.h"

namespace planck::exec::threads {

struct Shared;  // one per communicator (communicator.cc)

class Communicator final : public exec::Communicator {
 public:
  Communicator(std::shared_ptr<Shared> shared, int rank);
  ~Communicator() override;

  int rank() const override { return rank_; }
  int size() const override;
  const char* backend() const override { return "threads"; }
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

 private:
  // Publishes this rank's pointers, waits for every member, runs `body` (which reads the
  // peers' published buffers), then waits again so no buffer is reused while being read.
  core::Status exchange(const char* what, const void* send, void* recv,
                        const std::function<core::Status()>& body);
  core::Status wait_all(const char* what);

  std::shared_ptr<Shared> shared_;
  int rank_;
};

}  // namespace planck::exec::threads
