// One NCCL_DEBUG=INFO line per init-line format generation (docs/sources/ecosystem.md §4),
// behind each launcher prefix, and what must be refused.

#include <doctest/doctest.h>

#include <string>

#include "io/nccl_line.h"

using planck::io::NcclLineKind;
using planck::io::parse_nccl_line;

TEST_CASE("observed_line_init_formats_2_8_to_master") {
  struct Case {
    const char* line;
    bool has_comm_id, has_parent, complete;
  };
  const Case cases[] = {
      // 2.8 - 2.15
      {"h:1:2 [7] NCCL INFO comm 0x7fdf08000d00 rank 15 nranks 16 cudaDev 7 busId e7000 - Init COMPLETE", false, false, true},
      // 2.16 - 2.18.1
      {"h:1:2 [7] NCCL INFO comm 0x7fdf08000d00 rank 15 nranks 16 cudaDev 7 busId e7000 commId 0xabc - Init COMPLETE", true, false, true},
      // 2.18.3 - 2.20
      {"h:1:2 [7] NCCL INFO comm 0x1277bf60 rank 15 nranks 16 cudaDev 7 nvmlDev 7 busId 65000 commId 0xbd10cc2bcb56e132 - Init START", true, false, false},
      // 2.21 - 2.22 split, commId last
      {"h:1:2 [7] NCCL INFO ncclCommSplit comm 0x5951 rank 15 nranks 16 cudaDev 7 nvmlDev 7 busId 1a000 parent 0x5950 color 1684518034 key 0 commId 0x5a16 - Init START", true, true, false},
      // 2.23 - 2.25 split START: no commId, no space before '-'
      {"h:1:2 [7] NCCL INFO ncclCommSplit comm 0x5951 rank 15 nranks 16 cudaDev 7 nvmlDev 7 busId 1a000 parent 0x5950 color -3 key 4- Init START", false, true, false},
      // 2.26 - 2.28 splitCount
      {"h:1:2 [7] NCCL INFO ncclCommSplit comm 0x5951 rank 15 nranks 16 cudaDev 7 nvmlDev 7 busId 1a000 parent 0x5950 splitCount 2 color 5 key 4 - Init COMPLETE", false, true, true},
      // 2.30: [Rank N] before the API name, childCount
      {"h:1:2 [7] NCCL INFO [Rank 15] ncclCommInitRankConfig comm 0x5951 rank 15 nranks 16 cudaDev 7 nvmlDev 7 busId 1a000 commId 0x77 - Init START", true, false, false},
      {"h:1:2 [7] NCCL INFO ncclCommSplit comm 0x5951 rank 15 nranks 16 cudaDev 7 nvmlDev 7 busId 1a000 parent 0x5950 childCount 2 color 5 key 4- Init START", false, true, false},
      // current master: commId before parent
      {"h:1:2 [7] NCCL INFO ncclCommSplit comm 0x5951 rank 15 nranks 16 cudaDev 7 nvmlDev 7 busId 1a000 commId 0x99 parent 0x5950 childCount 1 color 5 key 4 - Init COMPLETE", true, true, true},
  };
  for (const auto& c : cases) {
    CAPTURE(c.line);
    auto l = parse_nccl_line(c.line);
    REQUIRE(l.kind == NcclLineKind::kInit);
    CHECK(l.host == "h");
    CHECK(l.pid == 1);
    CHECK(l.rank == 15);
    CHECK(l.nranks == 16);
    CHECK(l.device == 7);
    CHECK(l.comm_id.has_value() == c.has_comm_id);
    CHECK(l.parent.has_value() == c.has_parent);
    CHECK(l.complete == c.complete);
  }
}

TEST_CASE("observed_line_prefixes") {
  const std::string msg = "comm 0x10 rank 1 nranks 2 cudaDev 3 busId 1a000 commId 0x5 - Init COMPLETE";
  const char* prefixes[] = {"", "[rank3]:", "gpu-a17: ", "[2025-03-19 12:03:46] ", "[1,3]<stdout>:", "0: ",
                            "2025-03-19T12:03:46.123Z "};
  for (const char* p : prefixes) {
    std::string line = std::string(p) + "gpu-a17:382:675 [3] NCCL INFO " + msg;
    CAPTURE(line);
    auto l = parse_nccl_line(line);
    REQUIRE(l.kind == NcclLineKind::kInit);
    CHECK(l.host == "gpu-a17");
    CHECK(l.pid == 382);
    CHECK(l.tid == 675);
    CHECK(*l.comm_id == 5);
  }
}

TEST_CASE("observed_line_other_kinds") {
  auto topo = parse_nccl_line("[rank0]:w-1:382:675 [0] NCCL INFO comm 0x43be0680 rank 0 nRanks 4 nNodes 1 localRanks 4 localRank 0 MNNVL 0");
  CHECK(topo.kind == NcclLineKind::kTopology);
  CHECK(topo.nranks == 4);
  CHECK(*topo.comm == 0x43be0680);
  auto split = parse_nccl_line("m:22:23 [0] NCCL INFO bootstrapSplit: comm 0x5951 parent 0x5950 rank 0 nranks 2 color 1684518034 key 0 prev 2 next 2 - DONE");
  CHECK(split.kind == NcclLineKind::kBootstrapSplit);
  CHECK(*split.color == 1684518034);
  auto timing = parse_nccl_line("d-01:1106802:1106870 [3] NCCL INFO Init timings - ncclCommInitRankConfig: rank 3 nranks 8 total 55.01 (kernels 52.45, alloc 0.41)");
  CHECK(timing.kind == NcclLineKind::kInitTimings);
  CHECK(timing.func == "ncclCommInitRankConfig");
  CHECK(timing.rank == 3);
  auto destroy = parse_nccl_line("h:1:2 [0] NCCL INFO comm 0x10 rank 0 nranks 2 cudaDev 0 busId 1a000 commId 0x5 - Destroy COMPLETE");
  CHECK(destroy.kind == NcclLineKind::kDestroy);
  auto tests = parse_nccl_line("#  Rank  5 Group  0 Pid  40112 on    node07 device  5 [0x9c] NVIDIA H100 80GB HBM3");
  CHECK(tests.kind == NcclLineKind::kTestsRank);
  CHECK(tests.rank == 5);
  CHECK(tests.host == "node07");
  auto old_tests = parse_nccl_line("#   Rank  1 Pid  40112 on node07 device  1 [0x1b] Tesla V100");
  CHECK(old_tests.kind == NcclLineKind::kTestsRank);
}

TEST_CASE("observed_line_refuses_garbage") {
  const char* bad[] = {
      "",
      "NCCL INFO comm 0x10 rank 0 nranks 2 cudaDev 0 busId 1a000 - Init COMPLETE",               // no HOST:PID:TID
      "h:1:2 [0] NCCL INFO comm 0x10 rank 0 nranks 2 cudaDev 0 nvm",                             // truncated
      "h:1:2 [0] NCCL INFO comm 0x10 rank 2 nranks 2 cudaDev 0 busId 1a000 - Init COMPLETE",     // rank >= nranks
      "h:1:2 [0] NCCL INFO comm 0x10 rank 0 nranks 0 cudaDev 0 busId 1a000 - Init COMPLETE",     // empty comm
      "h:1:2 [0] NCCL INFO comm 0x10 rank 0 nranks 99999999999 cudaDev 0 busId 1a000 - Init COMPLETE",
      "h:1:2 [0] NCCL INFO comm 0xZZ rank 0 nranks 2 cudaDev 0 busId 1a000 - Init COMPLETE",     // bad pointer
      "h:1:2 [0] NCCL INFO comm 0x10 rank 0 nranks 2 cudaDev 0 busId 1a000 commId 0x12345678901234567 - Init COMPLETE",
      "h:1:2 [0] NCCL INFO comm 0x10 rank 0 nranks 2 cudaDev 0 busId 1a000 - Init FINISHED",
      "h:1:2 [0] NCCL INFO comm 0x1 rank 9 nrankh:3:4 [1] NCCL INFO comm 0x2 rank 1 nranks 8 cudaDev 1 busId 28000 - Init COMPLETE",
      "h:1:2 [0] NCCL INFO Channel 00/24 : 0 1 2 3",
      "h:1:2 [0] NCCL INFO NCCL version 2.18.3+cuda12.2",
      "h:1:2 [0] NCCL INFO comm 0x10 rank 0 nranks 2 cudaDev 0 busId 1a000 commId 0x5 - Init COMPLETE trailing",
  };
  for (const char* b : bad) {
    CAPTURE(b);
    CHECK(parse_nccl_line(b).kind == NcclLineKind::kNone);
  }
  // A line of 10^5 tokens is refused without scanning them all.
  std::string many = "h:1:2 [0] NCCL INFO comm 0x10";
  for (int i = 0; i < 100000; ++i) many += " x";
  CHECK(parse_nccl_line(many).kind == NcclLineKind::kNone);
}
