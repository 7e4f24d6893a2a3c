#include "exec/traffic.h"

#include <algorithm>
#include <cmath>

namespace planck::exec {
namespace {

struct PatternRow {
  core::CollOp op;
  PeerPattern pattern;
};
// The algorithms exec/mpi/world.cc pins (and NCCL's ring for the ring ops).
constexpr PatternRow kPatterns[] = {
    {core::CollOp::kAllReduce, PeerPattern::kRingNext},     {core::CollOp::kAllGather, PeerPattern::kRingNext},
    {core::CollOp::kReduceScatter, PeerPattern::kRingNext}, {core::CollOp::kAllToAll, PeerPattern::kAllPairs},
    {core::CollOp::kBroadcast, PeerPattern::kChainNext},    {core::CollOp::kSendRecv, PeerPattern::kRingNext},
};

}  // namespace

std::int64_t TrafficMatrix::total() const {
  std::int64_t t = 0;
  for (std::int64_t b : bytes) t += b;
  return t;
}

PeerPattern peer_pattern(core::CollOp op) {
  for (const PatternRow& r : kPatterns) {
    if (r.op == op) return r.pattern;
  }
  return PeerPattern::kRingNext;
}

std::vector<std::pair<std::int64_t, std::int64_t>> peer_bytes(core::CollOp op, std::int64_t n, std::int64_t i,
                                                             std::int64_t bytes) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  if (n <= 1 || bytes <= 0) return out;
  switch (peer_pattern(op)) {
    case PeerPattern::kRingNext:
      // Every byte the ring algorithm sends goes to the next member (collectives.h gives how many).
      out.push_back({(i + 1) % n, core::wire_bytes_per_rank(op, n, bytes)});
      break;
    case PeerPattern::kAllPairs:
      // Pairwise exchange: chunk j of the send buffer goes to member j.
      for (std::int64_t j = 0; j < n; ++j) {
        if (j != i) out.push_back({j, (bytes + n - 1) / n});
      }
      break;
    case PeerPattern::kChainNext:
      if (i + 1 < n) out.push_back({i + 1, bytes});
      break;
  }
  return out;
}

TrafficMatrix predict_traffic(core::CollOp op, std::int64_t bytes, const core::GroupSet& groups, std::int64_t world) {
  TrafficMatrix m(world);
  for (std::int64_t g = 0; g < groups.num_groups(); ++g) {
    const std::vector<std::int64_t> members = groups.members(g);
    const auto n = static_cast<std::int64_t>(members.size());
    for (std::int64_t i = 0; i < n; ++i) {
      for (const auto& [j, b] : peer_bytes(op, n, i, bytes)) m.at(members[static_cast<std::size_t>(i)], members[static_cast<std::size_t>(j)]) += b;
    }
  }
  return m;
}

TrafficCheck compare_traffic(const TrafficMatrix& predicted, const TrafficMatrix& measured) {
  TrafficCheck c;
  c.measured = true;
  c.predicted_total = predicted.total();
  c.measured_total = measured.total();
  const std::int64_t largest = *std::max_element(predicted.bytes.begin(), predicted.bytes.end());
  const auto floor = std::max<std::int64_t>(kUnpredictedFloorBytes,
                                            static_cast<std::int64_t>(kUnpredictedShare * static_cast<double>(largest)));
  const std::int64_t n = std::min(predicted.world, measured.world);
  for (std::int64_t from = 0; from < n; ++from) {
    for (std::int64_t to = 0; to < n; ++to) {
      const PeerBytes p{from, to, predicted.at(from, to), measured.at(from, to)};
      if (p.predicted == 0 && p.measured == 0) continue;
      c.pairs.push_back(p);
      if (p.predicted == 0) {
        if (p.measured > floor) c.unpredicted.push_back(p);
        continue;
      }
      if (p.predicted < kPeerGateBytes) continue;
      const double e = std::fabs(static_cast<double>(p.measured) / static_cast<double>(p.predicted) - 1);
      c.max_peer_error = std::max(c.max_peer_error, e);
      if (e > kPeerTolerance) c.off.push_back(p);
    }
  }
  return c;
}

}  // namespace planck::exec
