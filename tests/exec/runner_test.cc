// The runner on the threads backend: membership, scaling, exact data, API bytes and report
// shape for the HSDP 2x4 test plan, and the checker catching a corrupted element.

#include <doctest/doctest.h>

#include <cmath>
#include <mutex>

#include <nlohmann/json.hpp>

#include "core/mesh/plan_mesh.h"
#include "core/plan/plan_load.h"
#include "core/schedule/schedule.h"
#include "exec/collective.h"
#include "exec/runner.h"
#include "exec/threads/world.h"

namespace {

using planck::core::CollOp;
using planck::core::Status;

struct Loaded {
  planck::core::Plan plan;
  planck::core::Mesh mesh;
  planck::core::Schedule schedule;
};

Loaded load(const std::string& name) {
  auto lp = planck::core::load_plan_file(std::string(PLANCK_TEST_DATA_DIR) + "/exec/" + name);
  REQUIRE(lp.plan);
  auto mesh = planck::core::plan_mesh(*lp.plan, nullptr);
  REQUIRE(mesh);
  auto sched = planck::core::lower(*lp.plan, *mesh);
  REQUIRE_MESSAGE(sched, sched.message());
  return {*lp.plan, *mesh, *sched};
}

// Bytes the busiest rank sends for one call of S bytes in a group of n (ring / pairwise /
// chain, docs/sources/simulator.md §1.2), written out here rather than taken from core.
std::int64_t ring_bytes(CollOp op, std::int64_t n, std::int64_t s) {
  switch (op) {
    case CollOp::kAllReduce: return 2 * (n - 1) * s / n;
    case CollOp::kAllGather:
    case CollOp::kReduceScatter:
    case CollOp::kAllToAll: return (n - 1) * s / n;
    case CollOp::kBroadcast:
    case CollOp::kSendRecv: return s;
  }
  return -1;
}

}  // namespace

TEST_CASE("exec_runner_hsdp_2x4_on_threads") {
  Loaded l = load("hsdp-2x4.json");
  REQUIRE_FALSE(l.schedule.collectives.empty());
  const std::int64_t max_bytes = 64 * 1024;
  std::vector<planck::exec::ExecReport> reports(8);
  auto st = planck::exec::threads::run(8, [&](planck::exec::Communicator& c) -> Status {
    planck::exec::RunOptions o;
    o.warmup = 1;
    o.iters = 2;
    o.max_bytes = max_bytes;
    return planck::exec::run_plan(c, l.mesh, l.schedule, o, reports[c.rank()]);
  });
  for (const auto& s : st) REQUIRE_MESSAGE(s.is_ok(), s.message());
  const auto& r = reports[0];
  CHECK(r.ok);
  CHECK(r.membership_ok);
  // HSDP 2x4: fsdp = dp_shard groups (2 of 4), replicate = dp_replicate groups (4 of 2).
  bool saw_fsdp = false, saw_replicate = false;
  for (const auto& m : r.membership) {
    if (m.role == "fsdp") {
      saw_fsdp = true;
      CHECK(m.groups == 2);
      CHECK(m.group_size == 4);
    }
    if (m.role == "replicate") {
      saw_replicate = true;
      CHECK(m.groups == 4);
      CHECK(m.group_size == 2);
    }
  }
  CHECK(saw_fsdp);
  CHECK(saw_replicate);
  REQUIRE(r.ops.size() == l.schedule.collectives.size());
  for (const auto& op : r.ops) {
    CAPTURE(op.role);
    CAPTURE(planck::core::op_name(op.op));
    CHECK(op.bytes_per_call <= max_bytes);
    CHECK(op.bytes_per_call > 0);
    CHECK(op.wrong_elements == 0);
    CHECK(op.measured_bytes_sent_per_rank == ring_bytes(op.op, op.group_size, op.bytes_per_call));
    CHECK(op.predicted_bytes_sent_per_rank == op.measured_bytes_sent_per_rank);
    CHECK(op.measured_time_s.min <= op.measured_time_s.median);
    CHECK(op.measured_time_s.median <= op.measured_time_s.max);
    CHECK_FALSE(op.wire_bytes_measured.has_value());
  }
  auto j = nlohmann::json::parse(planck::exec::report_json(r));
  CHECK(j["format"] == "planck-exec/1");
  CHECK(j["summary"]["ok"] == true);
  CHECK(j["summary"]["max_bytes_error"] == 0.0);
  CHECK(j["ops"][0]["bytes_source"] == "api");
}

TEST_CASE("exec_runner_wrong_world_size_is_an_error_before_any_collective") {
  Loaded l = load("hsdp-2x4.json");
  planck::exec::ExecReport report;
  auto st = planck::exec::threads::run(3, [&](planck::exec::Communicator& c) -> Status {
    planck::exec::ExecReport mine;
    return planck::exec::run_plan(c, l.mesh, l.schedule, {}, c.rank() == 0 ? report : mine);
  });
  REQUIRE_FALSE(st[0].is_ok());
  CHECK(st[0].message().find("started 3 ranks") != std::string::npos);
  CHECK(st[0].message().find("has 8") != std::string::npos);
  CHECK(report.ops.empty());
}

TEST_CASE("exec_checker_counts_one_corrupted_element") {
  // reduce_scatter over 3 ranks, 5 elements each: corrupt element 2 of rank 1's result.
  for (auto type : {planck::exec::DataType::kUint8, planck::exec::DataType::kUint16, planck::exec::DataType::kUint32,
                    planck::exec::DataType::kUint64}) {
    std::vector<std::int64_t> wrong(3, -1);
    auto st = planck::exec::threads::run(3, [&](planck::exec::Communicator& c) -> Status {
      auto send = planck::exec::make_send(CollOp::kReduceScatter, type, c.rank(), 3, 5, 9);
      auto recv = planck::exec::make_recv(CollOp::kReduceScatter, type, c.rank(), 3, 5, 9);
      if (auto s = planck::exec::run_collective(c, CollOp::kReduceScatter, send.data(), recv.data(), 5, type); !s) return s;
      if (c.rank() == 1) recv[2 * planck::exec::dtype_size(type)] ^= 0x40;
      wrong[c.rank()] = planck::exec::count_wrong(CollOp::kReduceScatter, type, c.rank(), 3, 5, 9, recv);
      return Status::ok();
    });
    for (const auto& s : st) REQUIRE(s.is_ok());
    CHECK(wrong[0] == 0);
    CHECK(wrong[1] == 1);
    CHECK(wrong[2] == 0);
  }
}

TEST_CASE("exec_checker_float16_values_stay_exact") {
  // 256 ranks' values (each < 8) sum to at most 1792 < 2048, where half precision is exact.
  std::vector<unsigned char> buf(2);
  planck::exec::store_value(planck::exec::DataType::kFloat16, buf.data(), 0, 1792);
  CHECK(planck::exec::value_equals(planck::exec::DataType::kFloat16, buf.data(), 0, 1792));
  CHECK_FALSE(planck::exec::value_equals(planck::exec::DataType::kFloat16, buf.data(), 0, 1793));
  planck::exec::store_value(planck::exec::DataType::kFloat16, buf.data(), 0, 3);
  // 3.0 in IEEE half: exponent 16, mantissa 0x200 -> 0x4200.
  CHECK(buf[0] == 0x00);
  CHECK(buf[1] == 0x42);
}

TEST_CASE("exec_scaling_keeps_whole_elements_per_rank") {
  planck::core::ScheduledCollective c;
  c.op = CollOp::kAllGather;
  c.group_size = 7;
  c.dtype_bytes = 2;
  c.bytes_per_call = 1000003;
  // factor 0.5: 500001.5 bytes -> floor to a multiple of 7 x 2 = 14 -> 499996.
  CHECK(planck::exec::scaled_bytes(c, 0.5) == 499996);
  // A tiny call keeps one element per rank rather than vanishing.
  CHECK(planck::exec::scaled_bytes(c, 1e-9) == 14);
  c.bytes_per_call = 0;
  CHECK(planck::exec::scaled_bytes(c, 0.5) == 0);
  planck::core::Schedule s;
  s.collectives = {c, c};
  s.collectives[0].bytes_per_call = 4 << 20;
  s.collectives[1].bytes_per_call = 1 << 20;
  CHECK(planck::exec::scale_factor(s, 1 << 20) == doctest::Approx(0.25));
  CHECK(planck::exec::scale_factor(s, 8 << 20) == 1.0);
}

TEST_CASE("exec_netdev_parser_sums_transmit_bytes") {
  const std::string text =
      "Inter-|   Receive                                                |  Transmit\n"
      " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n"
      "    lo: 1000      10    0    0    0     0          0         0     1000      10    0    0    0     0       0          0\n"
      "  eth0: 5000      50    0    0    0     0          0         0     7000      70    0    0    0     0       0          0\n"
      "  eth1: 1        1    0    0    0     0          0         0     30      1    0    0    0     0       0          0\n";
  CHECK(*planck::exec::parse_netdev_tx(text, {"lo"}) == 1000);
  CHECK(*planck::exec::parse_netdev_tx(text, {}) == 7030);
  auto missing = planck::exec::parse_netdev_tx(text, {"ib0"});
  REQUIRE_FALSE(missing);
  CHECK(missing.message().find("'ib0'") != std::string::npos);
}
