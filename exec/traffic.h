#pragma once
// Per-peer traffic of one scheduled collective: who sends how many bytes to whom, predicted
// from the schedule and the pinned algorithm, measured by the transport, and compared.
//
// Prediction (the algorithms exec/mpi/world.cc pins in OpenMPI's coll_tuned; docs/sources/simulator.md
// §1.2): ring all-reduce, ring all-gather and ring reduce-scatter send everything to the next
// rank of the group; pairwise all-to-all sends one chunk to every other member; the pipelined
// chain broadcast sends the whole buffer from member i to member i+1 (the last sends nothing);
// send_recv shifts the buffer to the next member. A rank's bytes to itself never leave the
// process and are not counted.
//
// Measurement comes in through PeerTrafficSource, one per transport: mpi/ uses the kernel's
// per-socket TCP byte counts (exec/socket_traffic.h); a GPU transport (an NCCL profiler plugin
// or NVML per-link counters) fills the same per-op record.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/mesh/mesh.h"
#include "core/schedule/collectives.h"

namespace planck::exec {

class Communicator;

// bytes[from * world + to], world ranks.
struct TrafficMatrix {
  std::int64_t world = 0;
  std::vector<std::int64_t> bytes;
  explicit TrafficMatrix(std::int64_t n = 0) : world(n), bytes(static_cast<std::size_t>(n * n), 0) {}
  std::int64_t& at(std::int64_t from, std::int64_t to) { return bytes[static_cast<std::size_t>(from * world + to)]; }
  std::int64_t at(std::int64_t from, std::int64_t to) const {
    return bytes[static_cast<std::size_t>(from * world + to)];
  }
  std::int64_t total() const;
};

// How one member i of a group of n spreads one call of `bytes` (nccl-tests size convention)
// over the other members: (member index, bytes) pairs. One row per algorithm shape, so a
// table of collectives can name the shape instead of switching on the op.
enum class PeerPattern { kRingNext, kAllPairs, kChainNext };
PeerPattern peer_pattern(core::CollOp op);
std::vector<std::pair<std::int64_t, std::int64_t>> peer_bytes(core::CollOp op, std::int64_t n, std::int64_t i,
                                                             std::int64_t bytes);

// The predicted matrix of one call on every group of `groups` (world ranks).
TrafficMatrix predict_traffic(core::CollOp op, std::int64_t bytes, const core::GroupSet& groups, std::int64_t world);

struct PeerBytes {
  std::int64_t from = 0, to = 0;
  std::int64_t predicted = 0, measured = 0;
};

struct TrafficCheck {
  std::string source;           // "tcp-socket", or "unmeasured: <why>"
  bool measured = false;
  std::int64_t predicted_total = 0, measured_total = 0;
  std::vector<PeerBytes> pairs;  // every pair with predicted or measured bytes
  double max_peer_error = 0;     // largest |measured / predicted - 1| over the gated predicted pairs
  std::vector<PeerBytes> unpredicted;  // pairs that carry traffic the prediction does not have
  std::vector<PeerBytes> off;          // gated predicted pairs more than kPeerTolerance off
  bool ok() const { return !measured || (unpredicted.empty() && off.empty()); }
};

// Largest tolerated per-pair deviation.
inline constexpr double kPeerTolerance = 0.03;
// A predicted pair below this many bytes is reported but not held to kPeerTolerance: the
// transport's per-message headers (OpenMPI's match / fragment headers, rendezvous ACKs going
// the other way) are a visible share of smaller calls.
inline constexpr std::int64_t kPeerGateBytes = 64 * 1024;
// Traffic on a pair the prediction leaves empty is a finding once it exceeds this share of the
// op's largest predicted pair or 1 KiB, whichever is larger (headers and ACKs stay below).
inline constexpr double kUnpredictedShare = 0.03;
inline constexpr std::int64_t kUnpredictedFloorBytes = 1024;

TrafficCheck compare_traffic(const TrafficMatrix& predicted, const TrafficMatrix& measured);

// A transport's per-peer byte counter. begin() and end() are called on every rank, right
// around one call; end() is collective over `world` and returns the matrix of bytes every rank
// sent to every other rank between the two.
class PeerTrafficSource {
 public:
  virtual ~PeerTrafficSource() = default;
  virtual std::string source() const = 0;
  virtual core::Status begin() = 0;
  virtual core::Result<TrafficMatrix> end(Communicator& world) = 0;
};

}  // namespace planck::exec
