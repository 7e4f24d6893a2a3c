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

// One row of facts per collective (nccl-tests src/common.h testColl: name, bus factor, buffer
// sizes). Adding a collective is one row here plus its dispatch in exec/collective.cc; sim/,
// exec/ and bench/ read every size and cost fact from the row.
struct CollectiveRow {
  CollOp op;
  const char* name;
  // Passes of (n-1)/n of the buffer around a ring: 2 for all-reduce (reduce-scatter then
  // all-gather), 1 for all-gather / reduce-scatter / all-to-all, 0 when every sending rank sends
  // the whole buffer (broadcast's pipelined chain, send_recv).
  int ring_passes;
  bool point_to_point;  // send_recv: one step to one peer, whatever the group size
  bool send_n_chunks;   // the send buffer holds n chunks of the API's count (reduce_scatter, all_to_all)
  bool recv_n_chunks;   // the receive buffer holds n chunks (all_gather, all_to_all)
  // nccl-tests' size covers all n chunks (all_gather's output, reduce_scatter's input, all_to_all's
  // per-rank send buffer); else it is the buffer of `count` elements.
  bool size_n_chunks() const { return send_n_chunks || recv_n_chunks; }
};

inline constexpr CollectiveRow kCollectives[] = {
    {CollOp::kAllReduce, "all_reduce", 2, false, false, false},
    {CollOp::kAllGather, "all_gather", 1, false, false, true},
    {CollOp::kReduceScatter, "reduce_scatter", 1, false, true, false},
    {CollOp::kAllToAll, "all_to_all", 1, false, true, true},
    {CollOp::kBroadcast, "broadcast", 0, false, false, false},
    {CollOp::kSendRecv, "send_recv", 0, true, false, false},
};
inline constexpr CollOp kAllCollOps[] = {CollOp::kAllReduce, CollOp::kAllGather, CollOp::kReduceScatter,
                                         CollOp::kAllToAll,  CollOp::kBroadcast, CollOp::kSendRecv};

static_assert(sizeof(kCollectives) / sizeof(kCollectives[0]) == sizeof(kAllCollOps) / sizeof(kAllCollOps[0]),
              "one row per collective");

const CollectiveRow& collective(CollOp op);

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

// Elements in the send / receive buffer of one call whose API count is `count` in a group of n
// (nccl-tests getCollByteCount).
std::int64_t send_elements(CollOp op, std::int64_t n, std::int64_t count);
std::int64_t recv_elements(CollOp op, std::int64_t n, std::int64_t count);

}  // namespace planck::core
