#include "exec/collective.h"

#include <cmath>
#include <cstring>
#include <string>

namespace planck::exec {
namespace {

using core::CollOp;

std::uint64_t wrap(DataType type, std::uint64_t v) {
  switch (type) {
    case DataType::kUint8: return v & 0xffu;
    case DataType::kUint16: return v & 0xffffu;
    case DataType::kUint32: return v & 0xffffffffu;
    default: return v;
  }
}

// IEEE half encoding of a small non-negative integer (exact up to 2048).
std::uint16_t half_from_int(std::uint64_t v) {
  if (v == 0) return 0;
  int e = 0;
  while ((v >> (e + 1)) != 0) ++e;
  std::uint64_t mantissa = e <= 10 ? (v << (10 - e)) & 0x3ffu : (v >> (e - 10)) & 0x3ffu;
  return static_cast<std::uint16_t>(((e + 15) << 10) | mantissa);
}

double half_to_double(std::uint16_t bits) {
  const int e = (bits >> 10) & 0x1f;
  const int m = bits & 0x3ff;
  const double sign = (bits & 0x8000) ? -1.0 : 1.0;
  if (e == 0) return sign * std::ldexp(m, -24);
  if (e == 31) return m ? NAN : sign * INFINITY;
  return sign * std::ldexp(1024 + m, e - 25);
}

constexpr std::uint64_t kPoison = 0xA5A5A5A5A5A5A5A5ull;

}  // namespace

core::Result<std::int64_t> count_for_bytes(CollOp op, int n, std::int64_t bytes, DataType type) {
  const std::int64_t unit = dtype_size(type) * (core::collective(op).size_n_chunks() ? n : 1);
  if (bytes < 0 || n < 1 || bytes % unit != 0) {
    return core::Status::error(std::string(core::op_name(op)) + " of " + std::to_string(bytes) + " bytes over " +
                               std::to_string(n) + " ranks does not split into whole " + dtype_name(type) +
                               " elements per rank");
  }
  return bytes / unit;
}

std::int64_t bytes_for_count(CollOp op, int n, std::int64_t count, DataType type) {
  return count * dtype_size(type) * (core::collective(op).size_n_chunks() ? n : 1);
}

core::Status run_collective(Communicator& comm, CollOp op, const void* send, void* recv, std::int64_t count,
                            DataType type) {
  const int n = comm.size();
  switch (op) {
    case CollOp::kAllReduce: return comm.all_reduce(send, recv, count, type);
    case CollOp::kAllGather: return comm.all_gather(send, recv, count, type);
    case CollOp::kReduceScatter: return comm.reduce_scatter(send, recv, count, type);
    case CollOp::kAllToAll: return comm.all_to_all(send, recv, count, type);
    case CollOp::kBroadcast: return comm.broadcast(recv, count, type, 0);
    case CollOp::kSendRecv:
      return comm.send_recv(send, (comm.rank() + 1) % n, recv, (comm.rank() + n - 1) % n, count, type);
  }
  return core::Status::error("unknown collective");
}

std::uint64_t source_value(int rank, std::int64_t index, std::uint32_t seed) {
  // splitmix64 finaliser: neighbouring ranks, chunks and seeds all differ, so a chunk landing
  // at the wrong offset or a stale buffer from another op is caught.
  std::uint64_t z = (static_cast<std::uint64_t>(rank) << 40) ^ static_cast<std::uint64_t>(index) ^
                    (static_cast<std::uint64_t>(seed) << 52) ^ 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (z ^ (z >> 31)) & 7u;
}

void store_value(DataType type, unsigned char* base, std::int64_t index, std::uint64_t value) {
  const int size = dtype_size(type);
  unsigned char* p = base + index * size;
  if (type == DataType::kFloat16) {
    std::uint16_t h = half_from_int(value);
    std::memcpy(p, &h, 2);
    return;
  }
  std::uint64_t w = wrap(type, value);
  std::memcpy(p, &w, static_cast<std::size_t>(size));  // little-endian host
}

bool value_equals(DataType type, const unsigned char* base, std::int64_t index, std::uint64_t expected) {
  const int size = dtype_size(type);
  const unsigned char* p = base + index * size;
  if (type == DataType::kFloat16) {
    std::uint16_t h = 0;
    std::memcpy(&h, p, 2);
    return half_to_double(h) == static_cast<double>(expected);
  }
  std::uint64_t v = 0;
  std::memcpy(&v, p, static_cast<std::size_t>(size));
  return v == wrap(type, expected);
}

std::vector<unsigned char> make_send(CollOp op, DataType type, int rank, int n, std::int64_t count,
                                     std::uint32_t seed) {
  const std::int64_t elems = op == CollOp::kBroadcast ? count : send_elements(op, n, count);
  std::vector<unsigned char> out(static_cast<std::size_t>(elems * dtype_size(type)));
  for (std::int64_t i = 0; i < elems; ++i) {
    const bool poison = op == CollOp::kBroadcast && rank != 0;
    if (poison) {
      std::memcpy(out.data() + i * dtype_size(type), &kPoison, static_cast<std::size_t>(dtype_size(type)));
    } else {
      store_value(type, out.data(), i, source_value(rank, i, seed));
    }
  }
  return out;
}

std::vector<unsigned char> make_recv(CollOp op, DataType type, int rank, int n, std::int64_t count,
                                     std::uint32_t seed) {
  if (op == CollOp::kBroadcast) return make_send(op, type, rank, n, count, seed);
  std::vector<unsigned char> out(static_cast<std::size_t>(recv_elements(op, n, count) * dtype_size(type)));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = 0xA5;
  return out;
}

std::int64_t count_wrong(CollOp op, DataType type, int rank, int n, std::int64_t count, std::uint32_t seed,
                         const std::vector<unsigned char>& recv) {
  const std::int64_t elems = recv_elements(op, n, count);
  if (static_cast<std::int64_t>(recv.size()) < elems * dtype_size(type)) return elems;
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < elems; ++i) {
    std::uint64_t expected = 0;
    switch (op) {
      case CollOp::kAllReduce:
        for (int r = 0; r < n; ++r) expected += source_value(r, i, seed);
        break;
      case CollOp::kAllGather: expected = source_value(static_cast<int>(i / count), i % count, seed); break;
      case CollOp::kReduceScatter:
        for (int r = 0; r < n; ++r) expected += source_value(r, rank * count + i, seed);
        break;
      case CollOp::kAllToAll:
        // Chunk j of the receive buffer is chunk `rank` of peer j's send buffer.
        expected = source_value(static_cast<int>(i / count), rank * count + i % count, seed);
        break;
      case CollOp::kBroadcast: expected = source_value(0, i, seed); break;
      case CollOp::kSendRecv: expected = source_value((rank + n - 1) % n, i, seed); break;
    }
    if (!value_equals(type, recv.data(), i, expected)) ++wrong;
  }
  return wrong;
}

}  // namespace planck::exec
