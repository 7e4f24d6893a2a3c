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
//                         "fit": { ...anything calibrate wants to record... } },
//         "default":    { "latency_s": 2.0e-05, "bandwidth_GBps": 3.0 } } } }
//
// A prediction for one call of `bytes` (nccl-tests size convention) in a group of n ranks is
//   time_s = latency_s + step_latency_s x ring_steps(op, n) + wire_bytes_per_rank(op, n, bytes)
//            / (bandwidth_GBps x 1e9)
// i.e. bandwidth_GBps is nccl-tests' *bus* bandwidth (bytes each rank puts on the wire per
// second, sim-anchors.md §1.1 identity), so one fitted figure holds across group sizes.
// Link classes: nvlink (GPUs inside a node), net (a group spanning nodes, bound by its NICs),
// shm (CPU ranks on one host through shared memory), loopback (CPU ranks over TCP loopback).
// GB = 1e9 bytes.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/collectives.h"
#include "core/status.h"

namespace planck::sim {

enum class LinkClass { kNvlink, kNet, kShm, kLoopback };
inline constexpr int kLinkClassCount = 4;
inline constexpr int kCollOpCount = 6;  // core::kAllCollOps

const char* link_name(LinkClass link);  // "nvlink", "net", "shm", "loopback"
std::optional<LinkClass> parse_link(std::string_view name);

// One fitted line: per-call latency, per-ring-step latency, bus bandwidth.
struct LinkFit {
  double latency_s = 0;
  double step_latency_s = 0;
  double bandwidth_gbps = 0;  // GB/s of bytes on the wire per rank ("bandwidth_GBps")
  nlohmann::json fit;         // calibrate's record of the sweep (kept as written, not interpreted)

  // Seconds for one call of `bytes` in a group of n (formula above).
  double time_s(core::CollOp op, std::int64_t n, std::int64_t bytes) const;
};

struct Topology {
  std::string source;
  // Link class used by a group inside one node and by a group spanning nodes.
  LinkClass intra_node = LinkClass::kNvlink;
  LinkClass inter_node = LinkClass::kNet;
  // fits[link][op]: the op's own entry; defaults[link]: the link's "default" entry.
  std::array<std::array<std::optional<LinkFit>, kCollOpCount>, kLinkClassCount> fits;
  std::array<std::optional<LinkFit>, kLinkClassCount> defaults;

  // The op's entry on `link`, else that link's default, else nullopt (the caller falls back to
  // the GPU preset's figures).
  const LinkFit* find(LinkClass link, core::CollOp op) const;
  void set(LinkClass link, core::CollOp op, LinkFit fit);
  void set_default(LinkClass link, LinkFit fit);
};

// Parses a planck-topology/1 document. Errors name the JSON pointer and the fix; `path` is
// only used in messages.
core::Result<Topology> parse_topology(const nlohmann::json& doc, const std::string& path);
core::Result<Topology> load_topology(const std::string& path);

// The document parse_topology reads back (pretty-printed, trailing newline).
std::string topology_to_json(const Topology& topology);

}  // namespace planck::sim
