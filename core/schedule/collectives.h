#pragma once
// One table of collective facts, shared by sim/, exec/ and bench/ (as nccl-tests src/common.h).
// Sizes follow nccl-tests' convention (docs/sources/simulator.md §1.1): the buffer for all-reduce and
// broadcast, the full output (n x chunk) for all-gather, the full input for reduce-scatter, the
// per-rank send buffer for all-to-all, the bytes sent for send_recv. GB means 1e9 bytes.

#include <cstdint>
#include <optional>
#include <string_view>

namespace planck::core {

enum class CollOp { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kBroadcast, kSendRecv };
inline constexpr CollOp kAllCollOps[] = {CollOp::kAllReduce, CollOp::kAllGather, CollOp::kReduceScatter,
                                         CollOp::kAllToAll,  CollOp::kBroadcast, CollOp::kSendRecv};

const char* op_name(CollOp op);  // "all_reduce", ...
std::optional<CollOp> parse_op(std::string_view name);

// nccl-tests bus-bandwidth factor: busbw = algbw x factor (doc/PERFORMANCE.md).
// all-reduce 2(n-1)/n; all-gather, reduce-scatter, all-to-all (n-1)/n; broadcast, send_recv 1.
double bus_factor(CollOp op, std::int64_t n);

// Bytes the busiest rank puts on the wire for one call of `bytes` (nccl-tests size convention)
// in a group of n under the ring / pairwise algorithms (docs/sources/simulator.md §1.2): all-reduce
// 2(n-1)/n x S, all-gather and reduce-scatter (n-1)/n x S, all-to-all (n-1)/n x S, broadcast S
// (pipelined chain: every rank but the last sends the whole buffer), send_recv S.
// Exact integer arithmetic (128-bit intermediate), rounded up: a chunk that does not divide
// evenly still has to be sent by someone.
std::int64_t wire_bytes_per_rank(CollOp op, std::int64_t n, std::int64_t bytes);

// Sequential steps of the ring algorithm (latency terms): all-reduce 2(n-1), all-gather and
// reduce-scatter n-1, all-to-all n-1, broadcast n-1 (pipeline fill), send_recv 1.
std::int64_t ring_steps(CollOp op, std::int64_t n);

}  // namespace planck::core
