#pragma once
// One NCCL_DEBUG=INFO line, tokenised by hand (no regex: logs can hold 10^6 hostile lines).
//
// Line prefix (NCCL src/debug.cc): `HOST:PID:TID [CUDADEV] NCCL INFO <msg>`, possibly behind a
// launcher prefix (torchrun `[rank3]:`, pdsh `host: `, mpirun `[1,0]<stdout>:`, timestamps):
// the prefix is found by walking back from " NCCL INFO ", so anything in front of HOST is ignored.
// Messages understood (formats NCCL 2.8 .. 2.30, docs/sources/ecosystem.md §4):
//   [Rank R] [ncclCommXxx] comm P rank R nranks N cudaDev D [nvmlDev D] busId B
//       [commId C] [parent P [splitCount|childCount K] color C key K] [commId C] - Init START|COMPLETE
//   comm P rank R nRanks N nNodes N localRanks N localRank N MNNVL N          (topology, 2.20+)
//   bootstrapSplit: comm P parent P rank R nranks N color C key K prev R next R - DONE
//   Init timings - ncclCommXxx: rank R nranks N total ...                       (2.23+)
//   comm P rank R nranks N cudaDev D busId B commId C - Destroy|Abort COMPLETE
// and nccl-tests' own `#  Rank R [Group G] Pid P on HOST device D [...]` lines (global ranks).

#include <cstdint>
#include <optional>
#include <string_view>

namespace planck::io {

enum class NcclLineKind { kNone, kInit, kTopology, kBootstrapSplit, kInitTimings, kDestroy, kTestsRank };

struct NcclLine {
  NcclLineKind kind = NcclLineKind::kNone;
  std::string_view host;     // points into the parsed line
  std::int64_t pid = -1;
  std::int64_t tid = -1;
  int device = -1;           // cudaDev field when the message has one, else the prefix's [DEV]
  std::string_view func;     // ncclCommInitRank, ncclCommSplit, ... ("" when not printed)
  std::optional<std::uint64_t> comm;    // process-local communicator pointer
  std::int64_t rank = -1;
  std::int64_t nranks = -1;
  std::optional<std::uint64_t> bus_id;
  std::optional<std::uint64_t> comm_id;  // 64-bit hash shared by all members (2.16+)
  std::optional<std::uint64_t> parent;   // split children
  std::optional<std::int64_t> color;
  bool complete = false;                 // Init COMPLETE (vs START)
};

// Largest rank count NCCL can report (int) and planck accepts (docs/plan-format.md: worlds above 2^31 - 1).
inline constexpr std::int64_t kMaxRanks = 2147483647;

// Parses one line (no trailing newline). Anything unrecognised, truncated or garbled is kNone.
NcclLine parse_nccl_line(std::string_view line);

}  // namespace planck::io
