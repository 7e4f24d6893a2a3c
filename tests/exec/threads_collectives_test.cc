// Every collective of the threads backend over 1, 2, 3, 7 and 8 ranks and sizes from 0 bytes
// to 1 MiB, each result checked element by element against the definition of the collective
// (MPI-4.0 §6), computed here independently of exec/collective.cc's checker.

#include <doctest/doctest.h>

#include <cstring>
#include <thread>
#include <vector>

#include "exec/collective.h"
#include "exec/threads/world.h"

namespace {

using planck::core::CollOp;
using planck::core::Status;
using planck::exec::Communicator;
using planck::exec::DataType;

constexpr int kRankCounts[] = {1, 2, 3, 7, 8};
// Bytes per rank chunk: zero, odd, a page-ish, and 1 MiB / 8 so the largest buffer is 1 MiB.
constexpr std::int64_t kChunkBytes[] = {0, 4, 36, 4096, 131072};

std::uint32_t value(int rank, std::int64_t i) { return static_cast<std::uint32_t>(rank * 1000003 + i * 7 + 1); }

// Runs `op` on n threads with uint32 elements; each rank checks its own output.
void check_op(CollOp op, int n, std::int64_t chunk_bytes) {
  const std::int64_t count = chunk_bytes / 4;
  std::vector<std::int64_t> wrong(n, -1);
  auto statuses = planck::exec::threads::run(n, [&](Communicator& c) -> Status {
    const int r = c.rank();
    std::vector<std::uint32_t> send(static_cast<std::size_t>(planck::exec::send_elements(op, n, count)));
    std::vector<std::uint32_t> recv(static_cast<std::size_t>(planck::exec::recv_elements(op, n, count)), 0xdeadbeef);
    for (std::size_t i = 0; i < send.size(); ++i) send[i] = value(r, static_cast<std::int64_t>(i));
    if (op == CollOp::kBroadcast) {
      for (std::size_t i = 0; i < recv.size(); ++i) recv[i] = r == 0 ? value(0, static_cast<std::int64_t>(i)) : 0;
    }
    Status st = planck::exec::run_collective(c, op, send.data(), recv.data(), count, DataType::kUint32);
    if (!st) return st;
    std::int64_t bad = 0;
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(recv.size()); ++i) {
      std::uint32_t want = 0;
      switch (op) {
        case CollOp::kAllReduce:
          for (int q = 0; q < n; ++q) want += value(q, i);
          break;
        case CollOp::kAllGather: want = value(static_cast<int>(i / count), i % count); break;
        case CollOp::kReduceScatter:
          for (int q = 0; q < n; ++q) want += value(q, r * count + i);
          break;
        case CollOp::kAllToAll: want = value(static_cast<int>(i / count), r * count + i % count); break;
        case CollOp::kBroadcast: want = value(0, i); break;
        case CollOp::kSendRecv: want = value((r + n - 1) % n, i); break;
      }
      if (recv[static_cast<std::size_t>(i)] != want) ++bad;
    }
    wrong[r] = bad;
    return Status::ok();
  });
  for (int r = 0; r < n; ++r) {
    CAPTURE(r);
    REQUIRE_MESSAGE(statuses[r].is_ok(), statuses[r].message());
    CHECK(wrong[r] == 0);
  }
}

}  // namespace

TEST_CASE("exec_threads_every_collective_every_size") {
  for (CollOp op : planck::core::kAllCollOps) {
    for (int n : kRankCounts) {
      for (std::int64_t bytes : kChunkBytes) {
        // 1 MiB at most per buffer: the n-chunk buffers of 8 ranks hold 8 x 128 KiB.
        CAPTURE(planck::core::op_name(op));
        CAPTURE(n);
        CAPTURE(bytes);
        check_op(op, n, bytes);
      }
    }
  }
}

TEST_CASE("exec_threads_split_by_color_and_key") {
  // 7 ranks, colors r % 3 (-1 for rank 6: joins none), key = -r: new ranks in reverse order.
  constexpr int n = 7;
  std::vector<int> new_rank(n, -2), new_size(n, -2), sum(n, -2);
  auto st = planck::exec::threads::run(n, [&](Communicator& c) -> Status {
    const int r = c.rank();
    auto sub = c.split(r == 6 ? -1 : r % 3, -r);
    if (!sub) return sub.status();
    if (!*sub) {
      new_rank[r] = -1;
      return Status::ok();
    }
    new_rank[r] = (*sub)->rank();
    new_size[r] = (*sub)->size();
    std::uint32_t mine = static_cast<std::uint32_t>(r), total = 0;
    if (auto s = (*sub)->all_reduce(&mine, &total, 1, DataType::kUint32); !s) return s;
    sum[r] = static_cast<int>(total);
    return Status::ok();
  });
  for (const auto& s : st) REQUIRE_MESSAGE(s.is_ok(), s.message());
  // color 0: {0, 3} -> keys {0, -3}: rank 3 first. color 1: {1, 4}. color 2: {2, 5}.
  CHECK(new_rank[0] == 1);
  CHECK(new_rank[3] == 0);
  CHECK(new_rank[4] == 0);
  CHECK(new_rank[1] == 1);
  CHECK(new_rank[6] == -1);
  CHECK(new_size[5] == 2);
  CHECK(sum[0] == 3);
  CHECK(sum[1] == 5);
  CHECK(sum[2] == 7);
}

TEST_CASE("exec_threads_timeout_names_the_missing_rank") {
  planck::exec::threads::Options opt;
  opt.timeout = std::chrono::milliseconds(200);
  auto st = planck::exec::threads::run(
      3,
      [&](Communicator& c) -> Status {
        if (c.rank() == 2) {
          // Rank 2 never joins the barrier: the others must give up and name it.
          std::this_thread::sleep_for(std::chrono::milliseconds(600));
          return Status::ok();
        }
        return c.barrier();
      },
      opt);
  REQUIRE_FALSE(st[0].is_ok());
  CHECK(st[0].message().find("rank(s) 2 of 3") != std::string::npos);
}

TEST_CASE("exec_threads_failed_rank_aborts_the_others") {
  auto start = std::chrono::steady_clock::now();
  auto st = planck::exec::threads::run(4, [&](Communicator& c) -> Status {
    if (c.rank() == 1) return Status::error("injected failure");
    return c.barrier();
  });
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));  // not the 30 s timeout
  CHECK_FALSE(st[0].is_ok());
  CHECK(st[0].message().find("rank 1 failed: injected failure") != std::string::npos);
}
