#include "exec/threads/communicator.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <utility>
#include <vector>

#include "exec/threads/shared.h"

namespace planck::exec::threads {
namespace {

template <typename T>
void sum_into(unsigned char* out, const std::vector<const unsigned char*>& inputs, std::int64_t offset,
              std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) {
    T acc = 0;
    for (const unsigned char* in : inputs) {
      T v;
      std::memcpy(&v, in + (offset + i) * sizeof(T), sizeof(T));
      acc = static_cast<T>(acc + v);  // unsigned: wraps modulo 2^bits, as MPI and NCCL do
    }
    std::memcpy(out + i * sizeof(T), &acc, sizeof(T));
  }
}

// out[0..count) = sum over ranks of inputs[r][offset..offset+count).
core::Status reduce(DataType type, unsigned char* out, const std::vector<const unsigned char*>& inputs,
                    std::int64_t offset, std::int64_t count) {
  switch (type) {
    case DataType::kUint8: sum_into<std::uint8_t>(out, inputs, offset, count); break;
    case DataType::kUint16: sum_into<std::uint16_t>(out, inputs, offset, count); break;
    case DataType::kUint32: sum_into<std::uint32_t>(out, inputs, offset, count); break;
    case DataType::kUint64: sum_into<std::uint64_t>(out, inputs, offset, count); break;
    case DataType::kFloat16:
      return core::Status::error("the threads backend sums integers only; float16 is for NCCL");
  }
  return core::Status::ok();
}

core::Status check_count(const char* what, std::int64_t count) {
  if (count < 0) return core::Status::error(std::string(what) + ": negative element count " + std::to_string(count));
  return core::Status::ok();
}

}  // namespace

Communicator::Communicator(std::shared_ptr<Shared> shared, int rank) : shared_(std::move(shared)), rank_(rank) {}
Communicator::~Communicator() = default;

int Communicator::size() const { return shared_->n; }

core::Status Communicator::wait_all(const char* what) { return shared_->rendezvous(rank_, what); }

core::Status Communicator::exchange(const char* what, const void* send, void* recv,
                                    const std::function<core::Status()>& body) {
  {
    std::lock_guard<std::mutex> lk(shared_->mu);
    shared_->send[rank_] = static_cast<const unsigned char*>(send);
    shared_->recv[rank_] = static_cast<unsigned char*>(recv);
  }
  if (auto st = wait_all(what); !st) return st;
  core::Status result = body();
  if (auto st = wait_all(what); !st) return st;
  return result;
}

core::Result<std::unique_ptr<exec::Communicator>> Communicator::split(int color, int key) {
  Shared& s = *shared_;
  {
    std::lock_guard<std::mutex> lk(s.mu);
    s.colors[rank_] = {color, key};
  }
  if (auto st = wait_all("split"); !st) return st;
  std::vector<std::pair<int, int>> members;  // (key, old rank) of my color
  for (int r = 0; r < s.n; ++r) {
    if (s.colors[r].first == color) members.push_back({s.colors[r].second, r});
  }
  std::sort(members.begin(), members.end());
  const int leader = members.front().second;
  int new_rank = 0;
  while (members[new_rank].second != rank_) ++new_rank;
  if (color >= 0 && leader == rank_) {
    auto child = std::make_shared<Shared>(static_cast<int>(members.size()), s.world);
    std::lock_guard<std::mutex> lk(s.mu);
    s.children[rank_] = std::move(child);
  }
  if (auto st = wait_all("split"); !st) return st;
  std::shared_ptr<Shared> child;
  if (color >= 0) {
    std::lock_guard<std::mutex> lk(s.mu);
    child = s.children[leader];
  }
  if (auto st = wait_all("split"); !st) return st;  // the leader's slot may be reused after this
  if (color < 0) return std::unique_ptr<exec::Communicator>();
  return std::unique_ptr<exec::Communicator>(new Communicator(std::move(child), new_rank));
}

core::Status Communicator::all_reduce(const void* send, void* recv, std::int64_t count, DataType type) {
  if (auto st = check_count("all_reduce", count); !st) return st;
  return exchange("all_reduce", send, recv, [&] {
    std::vector<const unsigned char*> in(shared_->send.begin(), shared_->send.end());
    return reduce(type, static_cast<unsigned char*>(recv), in, 0, count);
  });
}

core::Status Communicator::all_gather(const void* send, void* recv, std::int64_t count, DataType type) {
  if (auto st = check_count("all_gather", count); !st) return st;
  const std::int64_t chunk = count * dtype_size(type);
  return exchange("all_gather", send, recv, [&] {
    for (int r = 0; r < shared_->n; ++r) {
      if (chunk > 0) std::memcpy(static_cast<unsigned char*>(recv) + r * chunk, shared_->send[r], chunk);
    }
    return core::Status::ok();
  });
}

core::Status Communicator::reduce_scatter(const void* send, void* recv, std::int64_t count, DataType type) {
  if (auto st = check_count("reduce_scatter", count); !st) return st;
  return exchange("reduce_scatter", send, recv, [&] {
    std::vector<const unsigned char*> in(shared_->send.begin(), shared_->send.end());
    return reduce(type, static_cast<unsigned char*>(recv), in, rank_ * count, count);
  });
}

core::Status Communicator::all_to_all(const void* send, void* recv, std::int64_t count, DataType type) {
  if (auto st = check_count("all_to_all", count); !st) return st;
  const std::int64_t chunk = count * dtype_size(type);
  return exchange("all_to_all", send, recv, [&] {
    for (int r = 0; r < shared_->n; ++r) {
      if (chunk > 0) {
        std::memcpy(static_cast<unsigned char*>(recv) + r * chunk, shared_->send[r] + rank_ * chunk, chunk);
      }
    }
    return core::Status::ok();
  });
}

core::Status Communicator::broadcast(void* buffer, std::int64_t count, DataType type, int root) {
  if (auto st = check_count("broadcast", count); !st) return st;
  if (root < 0 || root >= shared_->n) {
    return core::Status::error("broadcast root " + std::to_string(root) + " outside 0.." + std::to_string(shared_->n - 1));
  }
  const std::int64_t bytes = count * dtype_size(type);
  // Phase 1 publishes the root's buffer; non-roots copy; phase 2 keeps it alive until done.
  return exchange("broadcast", buffer, buffer, [&] {
    if (rank_ != root && bytes > 0) std::memcpy(buffer, shared_->send[root], bytes);
    return core::Status::ok();
  });
}

core::Status Communicator::send(const void* buffer, std::int64_t count, DataType type, int peer) {
  if (auto st = check_count("send", count); !st) return st;
  if (peer < 0 || peer >= shared_->n) return core::Status::error("send to rank " + std::to_string(peer) + " outside the communicator of " + std::to_string(shared_->n));
  const auto* p = static_cast<const unsigned char*>(buffer);
  std::vector<unsigned char> message(p, p + count * dtype_size(type));
  {
    std::lock_guard<std::mutex> lk(shared_->mu);
    shared_->mail[rank_ * shared_->n + peer].push_back(std::move(message));
  }
  shared_->cv.notify_all();
  return core::Status::ok();
}

core::Status Communicator::recv(void* buffer, std::int64_t count, DataType type, int peer) {
  if (auto st = check_count("recv", count); !st) return st;
  if (peer < 0 || peer >= shared_->n) return core::Status::error("recv from rank " + std::to_string(peer) + " outside the communicator of " + std::to_string(shared_->n));
  std::vector<unsigned char> message;
  if (auto st = shared_->take_mail(peer, rank_, &message); !st) return st;
  const std::int64_t bytes = count * dtype_size(type);
  if (static_cast<std::int64_t>(message.size()) != bytes) {
    return core::Status::error("recv of " + std::to_string(bytes) + " bytes from rank " + std::to_string(peer) +
                               " got a message of " + std::to_string(message.size()) + " bytes");
  }
  if (bytes > 0) std::memcpy(buffer, message.data(), message.size());
  return core::Status::ok();
}

core::Status Communicator::send_recv(const void* send_buffer, int dst, void* recv_buffer, int src,
                                     std::int64_t count, DataType type) {
  // Sends are buffered here, so send-then-receive cannot deadlock.
  if (auto st = send(send_buffer, count, type, dst); !st) return st;
  return recv(recv_buffer, count, type, src);
}

core::Status Communicator::barrier() { return wait_all("barrier"); }

void Communicator::abort(const std::string& reason) { shared_->world->abort(reason); }

}  // namespace planck::exec::threads
