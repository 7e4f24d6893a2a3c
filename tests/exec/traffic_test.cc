// Per-peer traffic: the matrices the prediction must give for ring all-reduce / all-gather /
// reduce-scatter and pairwise all-to-all over 2, 3, 4 and 8 ranks, written out here, and the
// comparison rules (unpredicted pair, 3% per pair, the 64 KiB gate).
//
// Where the bytes go (OpenMPI 4.1 coll/base, the algorithms exec pins): the ring all-reduce,
// all-gather and reduce-scatter send every block to rank + 1; the pairwise all-to-all sends
// block j to rank j. Bytes per call of S (docs/sources/simulator.md §1.2): all-reduce 2(n-1)/n x S to the
// next rank, all-gather / reduce-scatter (n-1)/n x S to the next rank, all-to-all S/n to each
// other rank. S = 840 divides by 2, 3, 4 and 8.

#include <doctest/doctest.h>

#include <vector>

#include "core/mesh/mesh.h"
#include "exec/traffic.h"

namespace {

using planck::core::CollOp;
using planck::exec::TrafficMatrix;
using Rows = std::vector<std::vector<std::int64_t>>;

constexpr std::int64_t kS = 840;

TrafficMatrix predict(CollOp op, std::int64_t n) {
  auto mesh = planck::core::Mesh::create({"dp"}, {n});
  REQUIRE(mesh);
  return planck::exec::predict_traffic(op, kS, mesh->groups({"dp"}), n);
}

void check_rows(const TrafficMatrix& m, const Rows& rows) {
  REQUIRE(m.world == static_cast<std::int64_t>(rows.size()));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (std::size_t j = 0; j < rows.size(); ++j) {
      CAPTURE(i);
      CAPTURE(j);
      CHECK(m.at(static_cast<std::int64_t>(i), static_cast<std::int64_t>(j)) == rows[i][j]);
    }
  }
}

// 8 ranks, every byte to the next rank: W on (i, i+1 mod 8).
Rows ring8(std::int64_t w) {
  return {{0, w, 0, 0, 0, 0, 0, 0}, {0, 0, w, 0, 0, 0, 0, 0}, {0, 0, 0, w, 0, 0, 0, 0}, {0, 0, 0, 0, w, 0, 0, 0},
          {0, 0, 0, 0, 0, w, 0, 0}, {0, 0, 0, 0, 0, 0, w, 0}, {0, 0, 0, 0, 0, 0, 0, w}, {w, 0, 0, 0, 0, 0, 0, 0}};
}

}  // namespace

TEST_CASE("traffic_ring_all_reduce_2_3_4_8") {
  check_rows(predict(CollOp::kAllReduce, 2), {{0, 840}, {840, 0}});  // 2 x 1/2 x 840
  check_rows(predict(CollOp::kAllReduce, 3), {{0, 1120, 0}, {0, 0, 1120}, {1120, 0, 0}});  // 2 x 2/3 x 840
  check_rows(predict(CollOp::kAllReduce, 4),
             {{0, 1260, 0, 0}, {0, 0, 1260, 0}, {0, 0, 0, 1260}, {1260, 0, 0, 0}});  // 2 x 3/4 x 840
  check_rows(predict(CollOp::kAllReduce, 8), ring8(1470));                         // 2 x 7/8 x 840
}

TEST_CASE("traffic_ring_all_gather_and_reduce_scatter_2_3_4_8") {
  for (CollOp op : {CollOp::kAllGather, CollOp::kReduceScatter}) {
    CAPTURE(planck::core::op_name(op));
    check_rows(predict(op, 2), {{0, 420}, {420, 0}});                       // 1/2 x 840
    check_rows(predict(op, 3), {{0, 560, 0}, {0, 0, 560}, {560, 0, 0}});  // 2/3 x 840
    check_rows(predict(op, 4), {{0, 630, 0, 0}, {0, 0, 630, 0}, {0, 0, 0, 630}, {630, 0, 0, 0}});  // 3/4 x 840
    check_rows(predict(op, 8), ring8(735));                                                       // 7/8 x 840
  }
}

TEST_CASE("traffic_pairwise_all_to_all_2_3_4_8") {
  check_rows(predict(CollOp::kAllToAll, 2), {{0, 420}, {420, 0}});
  check_rows(predict(CollOp::kAllToAll, 3), {{0, 280, 280}, {280, 0, 280}, {280, 280, 0}});
  check_rows(predict(CollOp::kAllToAll, 4),
             {{0, 210, 210, 210}, {210, 0, 210, 210}, {210, 210, 0, 210}, {210, 210, 210, 0}});
  Rows eight(8, std::vector<std::int64_t>(8, 105));
  for (int i = 0; i < 8; ++i) eight[i][i] = 0;
  check_rows(predict(CollOp::kAllToAll, 8), eight);
}

TEST_CASE("traffic_chain_broadcast_and_send_recv") {
  check_rows(predict(CollOp::kBroadcast, 3), {{0, 840, 0}, {0, 0, 840}, {0, 0, 0}});
  check_rows(predict(CollOp::kSendRecv, 3), {{0, 840, 0}, {0, 0, 840}, {840, 0, 0}});
}

TEST_CASE("traffic_groups_map_members_to_world_ranks") {
  // HSDP 2x4: replicate = dp_replicate groups {r, r+4}; its all-reduce stays inside them.
  auto mesh = planck::core::Mesh::create({"dp_replicate", "dp_shard"}, {2, 4});
  REQUIRE(mesh);
  const TrafficMatrix m = planck::exec::predict_traffic(CollOp::kAllReduce, kS, mesh->groups({"dp_replicate"}), 8);
  for (std::int64_t from = 0; from < 8; ++from) {
    for (std::int64_t to = 0; to < 8; ++to) CHECK(m.at(from, to) == ((to == (from + 4) % 8) ? 840 : 0));
  }
}

TEST_CASE("traffic_compare_finds_unpredicted_pairs_and_pairs_off_by_more_than_3_percent") {
  TrafficMatrix predicted(3), measured(3);
  predicted.at(0, 1) = 1 << 20;
  predicted.at(1, 2) = 1 << 20;
  predicted.at(2, 0) = 1000;  // below the 64 KiB gate
  measured.at(0, 1) = (1 << 20) + 500;             // headers: inside 3%
  measured.at(1, 2) = (1 << 20) * 105 / 100;       // 5% over
  measured.at(2, 0) = 1100;                        // 10% over, but not gated
  measured.at(1, 0) = 192;                         // rendezvous ACKs going back: below the floor
  measured.at(2, 1) = 40000;                       // above 3% of 1 MiB: traffic nobody predicted
  const auto c = planck::exec::compare_traffic(predicted, measured);
  CHECK(c.measured);
  REQUIRE(c.off.size() == 1);
  CHECK(c.off[0].from == 1);
  CHECK(c.off[0].to == 2);
  REQUIRE(c.unpredicted.size() == 1);
  CHECK(c.unpredicted[0].from == 2);
  CHECK(c.unpredicted[0].to == 1);
  CHECK(c.max_peer_error == doctest::Approx(0.05).epsilon(1e-3));
  CHECK_FALSE(c.ok());
  CHECK(c.predicted_total == 2 * (1 << 20) + 1000);
}

TEST_CASE("traffic_compare_accepts_headers_only") {
  TrafficMatrix predicted(2), measured(2);
  predicted.at(0, 1) = predicted.at(1, 0) = 1 << 20;
  measured.at(0, 1) = measured.at(1, 0) = (1 << 20) + 288;
  const auto c = planck::exec::compare_traffic(predicted, measured);
  CHECK(c.ok());
  CHECK(c.unpredicted.empty());
  CHECK(c.off.empty());
}
