#pragma once
// Topology profile "planck-topology/1": measured latency and bandwidth per link class and
// collective op, written by `planck calibrate`, read by `planck simulate --topology` and
// `planck exec --topology`. Format (docs/simulator.md, "Topology profile"):
//
//   { "format": "planck-topology/1",
//     "source": "planck calibrate --backend mpi, 8 ranks on host a17",      (free text, optional)
//     "placement": { "intra_node": "loopback", "inter_node": "loopback" },  (optional)
//     "links": {
//       "loopback": {
//         "all_reduce": { "latency_s": 2.1e-05, "step_latency_s": 0.0, "bandwidth_GBps": 3.2,
//                         "points": [[8, 4096, 3.1e-04], [8, 16384, 3.6e-04], ...],  (optional)
//                         "fit": { ...anything calibrate wants to record... } },
//         "default":    { "latency_s": 2.0e-05, "bandwidth_GBps": 3.0 } } } }
//
// A prediction for one call of `bytes` (nccl-tests size convention) in a group of n ranks is
//   time_s = latency_s + step_latency_s x ring_steps(op, n) + wire_bytes_per_rank(op, n, bytes)
//            / (bandwidth_GBps x 1e9)
// i.e. bandwidth_GBps is nccl-tests' *bus* bandwidth (bytes each rank puts on the wire per
// second, docs/sources/simulator.md §1.1 identity), so one fitted figure holds across group sizes.
// `points` are calibrate's measurements, [group_size, bytes, seconds]. When the call's group
// size was measured, its time comes from them instead: a power law between the two measured
// sizes around `bytes` (straight line in log-log), and beyond the measured range the nearest
// point scaled by the line, t(end) x line(bytes) / line(end). One line per op cannot follow a
// link whose bandwidth changes with size (TCP loopback: 0.6 GB/s at 4 MiB, 0.14 at 64 MiB).
// Link classes: nvlink (GPUs inside a node), net (a group spanning nodes, bound by its NICs),
// shm (CPU ranks on one host through shared memory), loopback (CPU ranks over TCP loopback).
// GB = 1e9 bytes.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/schedule/collectives.h"
#include "core/base/status.h"
#include "sim/compute_profile.h"

namespace planck::sim {

enum class LinkClass { kNvlink, kNet, kShm, kLoopback };
inline constexpr int kLinkClassCount = 4;
inline constexpr int kCollOpCount = 6;  // core::kAllCollOps

const char* link_name(LinkClass link);  // "nvlink", "net", "shm", "loopback"
std::optional<LinkClass> parse_link(std::string_view name);

// One measured call: `bytes` (nccl-tests size convention) in groups of `group_size`.
struct MeasuredPoint {
  std::int64_t group_size = 0;
  std::int64_t bytes = 0;
  double time_s = 0;
};

// Puts points in the order LinkFit::points keeps: by (group_size, bytes).
void sort_points(std::vector<MeasuredPoint>& points);

// One fitted line: per-call latency, per-ring-step latency, bus bandwidth; and optionally the
// measurements it was fitted to.
struct LinkFit {
  double latency_s = 0;
  double step_latency_s = 0;
  double bandwidth_gbps = 0;  // GB/s of bytes on the wire per rank ("bandwidth_GBps")
  std::vector<MeasuredPoint> points;  // sorted by (group_size, bytes), no duplicates
  nlohmann::json fit;                 // calibrate's record of the sweep (kept as written, not interpreted)

  struct Estimate {
    double time_s = 0;
    bool measured = false;  // from `points` (group size measured), else the line
  };
  // One call of `bytes` in a group of n (rules above).
  Estimate estimate(core::CollOp op, std::int64_t n, std::int64_t bytes) const;
  double time_s(core::CollOp op, std::int64_t n, std::int64_t bytes) const { return estimate(op, n, bytes).time_s; }
  // The line alone.
  double line_time_s(core::CollOp op, std::int64_t n, std::int64_t bytes) const;
};

struct Topology {
  std::string source;
  // Link class used by a group inside one node and by a group spanning nodes.
  LinkClass intra_node = LinkClass::kNvlink;
  LinkClass inter_node = LinkClass::kNet;
  // fits[link][op]: the op's own entry; defaults[link]: the link's "default" entry.
  std::array<std::array<std::optional<LinkFit>, kCollOpCount>, kLinkClassCount> fits;
  std::array<std::optional<LinkFit>, kLinkClassCount> defaults;
  // "compute": measured GEMM correction (sim/compute_profile.h); a profile may hold links,
  // compute or both.
  std::optional<ComputeProfile> compute;

  // The op's entry on `link`, else that link's default, else nullopt (the caller falls back to
  // the GPU preset's figures).
  const LinkFit* find(LinkClass link, core::CollOp op) const;
  void set(LinkClass link, core::CollOp op, LinkFit fit);
  void set_default(LinkClass link, LinkFit fit);
  // True when the profile holds no link figures at all (load_topology refuses such a profile).
  bool empty() const;
};

// The (op, link) pairs among `used` that `topology` has no figures for, deduplicated in first-use
// order: "all_reduce on net, all_gather on net"; "" when it covers them all. Those predictions
// fall back to the GPU preset, and simulate / exec say so (the profile is partial).
std::string missing_figures(const Topology& topology, const std::vector<std::pair<LinkClass, core::CollOp>>& used);

// Parses a planck-topology/1 document. Errors name the JSON pointer and the fix; `path` is
// only used in messages.
core::Result<Topology> parse_topology(const nlohmann::json& doc, const std::string& path);
core::Result<Topology> load_topology(const std::string& path);

// The document parse_topology reads back (pretty-printed, trailing newline).
std::string topology_to_json(const Topology& topology);

}  // namespace planck::sim
