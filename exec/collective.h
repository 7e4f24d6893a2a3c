#pragma once
// One scheduled collective as the runner drives it: buffer layout per op, the dispatch to a
// Communicator, and rank-dependent data whose result is exactly checkable (nccl-tests
// CheckData: fill before the timed loop, count wrong elements after it).

#include <cstdint>
#include <vector>

#include "core/schedule/collectives.h"
#include "core/base/status.h"
#include "exec/communicator.h"

namespace planck::exec {

// Element counts of one call, from the collective's row (core/schedule/collectives.h). `count` is
// what the Communicator call takes: the buffer for all_reduce/broadcast/send_recv, the per-rank
// chunk for all_gather/reduce_scatter/all_to_all.
using core::recv_elements;
using core::send_elements;

// The `count` for a call of `bytes` in nccl-tests' size convention (core/schedule/collectives.h) in a
// group of n: an error when the bytes do not split into whole elements per rank.
core::Result<std::int64_t> count_for_bytes(core::CollOp op, int n, std::int64_t bytes, DataType type);
// The inverse: the nccl-tests size of a call with this count (what the API was handed).
std::int64_t bytes_for_count(core::CollOp op, int n, std::int64_t count, DataType type);

// One call on `comm`. Broadcast is in place from rank 0 (`recv` is the buffer); send_recv
// shifts around the ring: send to rank+1, receive from rank-1.
core::Status run_collective(Communicator& comm, core::CollOp op, const void* send, void* recv, std::int64_t count,
                            DataType type);

// Small integers in [0, 8): sums over up to 256 ranks stay exact even in float16.
std::uint64_t source_value(int rank, std::int64_t index, std::uint32_t seed);

// The host image of `rank`'s send buffer (for broadcast: the in-place buffer, poisoned off
// the root so that a broadcast that did nothing is caught).
std::vector<unsigned char> make_send(core::CollOp op, DataType type, int rank, int n, std::int64_t count,
                                     std::uint32_t seed);
// The receive image before the call: poisoned, so untouched elements count as wrong.
std::vector<unsigned char> make_recv(core::CollOp op, DataType type, int rank, int n, std::int64_t count,
                                     std::uint32_t seed);
// Elements of `recv` (host image after the call) that differ from what the collective must
// produce on `rank` in a group of n.
std::int64_t count_wrong(core::CollOp op, DataType type, int rank, int n, std::int64_t count, std::uint32_t seed,
                         const std::vector<unsigned char>& recv);

// Element codecs (little-endian host images).
void store_value(DataType type, unsigned char* base, std::int64_t index, std::uint64_t value);
bool value_equals(DataType type, const unsigned char* base, std::int64_t index, std::uint64_t expected);

}  // namespace planck::exec
