#include "sim/cost.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "core/base/saturating.h"

namespace planck::sim {
namespace {

using core::CollOp;
using core::Placement;

// Achievable fraction of the line rate. NVLink4: NCCL reaches 365-370 GB/s of the 450 GB/s line
// rate on 8xH100 ("about 80% of 450", nccl#1455, nccl-tests#212) and models 18 x 20.6 = 370.8
// (nccl src/graph/topo.h). NDR 400 Gb/s NICs deliver 46-48 GB/s of 50 (nccl-tests#290).
constexpr double kNvlinkEfficiency = 370.0 / 450.0;
constexpr double kNicEfficiency = 47.0 / 50.0;

// NCCL's latency constants in microseconds, columns LL / LL128 / Simple
// (NVIDIA/nccl v2.30.7 src/graph/tuning.cc baseLat / hwLat; docs/sources/simulator.md §1.3).
enum Proto { kLL = 0, kLL128 = 1, kSimple = 2 };
constexpr double kBaseRing[3] = {6.6, 14.0, 8.4};
constexpr double kBaseTree[3] = {6.8, 14.0, 8.4};
constexpr double kIntraRing[3] = {0.6, 1.9, 3.4};
constexpr double kIntraTree[3] = {0.6, 1.25, 4.0};
constexpr double kNetRing[3] = {2.7, 4.0, 14.0};
constexpr double kNetTree[3] = {5.0, 8.5, 14.0};
constexpr double kNvlsLatencyUs = 25.0;  // hwLat NVLINK NVLS Simple, base 0
// Bandwidth a protocol keeps of the bus bandwidth: Ring LL 0.5, LL128 0.92, Simple 1 (tuning.cc);
// Tree: 0.92 cap for Simple, LL busBw/3.8, LL128 x 120/128 of the capped figure.
constexpr double kRingProtoBw[3] = {0.5, 0.92, 1.0};
constexpr double kTreeProtoBw[3] = {1.0 / 3.8, 0.92 * 120.0 / 128.0, 0.92};

bool is_cpu(const core::GpuSpec& gpu) { return gpu.name == "cpu"; }

// Bus bandwidth (bytes on the wire per rank per second) of a group on the GPU preset's links.
double bus_bandwidth(CollOp op, const Placement& place, const core::GpuSpec& gpu) {
  const double intra = gpu.nvlink_gbps * 1e9 * kNvlinkEfficiency;
  if (place.nodes_spanned <= 1) return intra;
  const double nic = gpu.nic_gbps * 1e9 * kNicEfficiency;
  // All-to-all and point-to-point traffic leaving a node cannot aggregate several NICs
  // (sjeaugey, nccl-tests#267): one NIC per GPU.
  if (op == CollOp::kAllToAll || op == CollOp::kSendRecv) return std::min(intra, nic);
  // Ring collectives spanning nodes: the node's NICs in use (one per member GPU, rail-aligned)
  // bound the ring, never above the NVLink figure (docs/sources/simulator.md §5 "Model guidance").
  return std::min(intra, nic * static_cast<double>(std::max<std::int64_t>(1, place.ranks_per_node)));
}

// NVLS all-reduce bus bandwidth on 8xH100 measured 370 GB/s for 2-4 GPUs and 420/440/460/480 for
// 5/6/7/8 (nccl-tests#212, nccl#1455); scaled by the preset's NVLink line rate over 450.
double nvls_bandwidth(std::int64_t n, const core::GpuSpec& gpu) {
  static constexpr double kMeasured[] = {370, 370, 370, 370, 370, 420, 440, 460, 480};
  const double gbps = kMeasured[std::min<std::int64_t>(n, 8)];
  return gbps * 1e9 * gpu.nvlink_gbps / 450.0;
}

double log2_ceil(std::int64_t x) { return x <= 1 ? 0.0 : std::ceil(std::log2(static_cast<double>(x))); }

struct Candidate {
  double time_s;
  std::int64_t wire;
  Algorithm algorithm;
};

Candidate ring_cost(CollOp op, std::int64_t n, std::int64_t bytes, const Placement& place, double bw) {
  const std::int64_t wire = core::wire_bytes_per_rank(op, n, bytes);
  const double steps = static_cast<double>(core::ring_steps(op, n));
  const double nodes = static_cast<double>(place.nodes_spanned);
  // Steps crossing a node boundary: 2(nNodes-1) for all-reduce, nNodes-1 otherwise (tuning.cc).
  double inter = nodes <= 1 ? 0 : (op == CollOp::kAllReduce ? 2 * (nodes - 1) : nodes - 1);
  inter = std::min(inter, steps);
  double best = std::numeric_limits<double>::infinity();
  for (int p = kLL; p <= kSimple; ++p) {
    const double lat_us = kBaseRing[p] + (steps - inter) * kIntraRing[p] + inter * kNetRing[p];
    best = std::min(best, lat_us * 1e-6 + static_cast<double>(wire) / (bw * kRingProtoBw[p]));
  }
  return {best, wire, Algorithm::kRing};
}

// NCCL double binary tree all-reduce: reduce up, broadcast down; an inner rank sends about 2S
// (docs/sources/simulator.md §1.2) and NCCL prices it at half the bus bandwidth.
Candidate tree_cost(std::int64_t n, std::int64_t bytes, const Placement& place, double bw) {
  const std::int64_t wire = n <= 2 ? core::wire_bytes_per_rank(CollOp::kAllReduce, n, bytes) : 2 * bytes;
  const double ppn = static_cast<double>(place.ranks_per_node);
  double best = std::numeric_limits<double>::infinity();
  for (int p = kLL; p <= kSimple; ++p) {
    const double lat_us =
        kBaseTree[p] + 2 * ((ppn - 1) * kIntraTree[p] + log2_ceil(place.nodes_spanned) * kNetTree[p]);
    best = std::min(best, lat_us * 1e-6 + static_cast<double>(wire) / (bw * kTreeProtoBw[p]));
  }
  return {best, wire, Algorithm::kTree};
}

}  // namespace

const char* algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::kRing: return "ring";
    case Algorithm::kTree: return "tree";
    case Algorithm::kNvls: return "nvls";
    case Algorithm::kFitted: return "fitted";
    case Algorithm::kMeasured: return "measured";
  }
  return "ring";
}

LinkClass link_for(const Placement& place, const core::GpuSpec& gpu, const Topology* topology) {
  const bool spans = place.nodes_spanned > 1;
  if (topology) return spans ? topology->inter_node : topology->intra_node;
  if (spans) return LinkClass::kNet;
  return is_cpu(gpu) ? LinkClass::kShm : LinkClass::kNvlink;
}

CallCost predict_call(CollOp op, std::int64_t n, std::int64_t bytes, const Placement& place, const core::GpuSpec& gpu,
                      const Topology* topology, const CostOptions& options) {
  CallCost out;
  out.link = link_for(place, gpu, topology);
  if (n <= 1 && op != CollOp::kSendRecv) return out;  // nothing leaves the rank
  if (bytes <= 0) return out;
  if (topology) {
    if (const LinkFit* fit = topology->find(out.link, op)) {
      const LinkFit::Estimate e = fit->estimate(op, n, bytes);
      out.algorithm = e.measured ? Algorithm::kMeasured : Algorithm::kFitted;
      out.wire_bytes = core::wire_bytes_per_rank(op, n, bytes);
      out.time_s = e.time_s;
      return out;
    }
  }
  const double bw = bus_bandwidth(op, place, gpu);
  if (bw <= 0) {
    out.wire_bytes = core::wire_bytes_per_rank(op, n, bytes);
    out.time_s = std::numeric_limits<double>::infinity();
    return out;
  }
  Candidate best = ring_cost(op, n, bytes, place, bw);
  // CPU ranks run MPI with its collective algorithms pinned to ring (docs/exec.md): no tree/NVLS.
  if (op == CollOp::kAllReduce && !is_cpu(gpu)) {
    if (options.allow_tree && n > 2) {
      Candidate t = tree_cost(n, bytes, place, bw);
      if (t.time_s < best.time_s) best = t;
    }
    // NVLS inside one NVSwitch node; across nodes it needs CollNet (enqueue.cc), not modelled.
    if (options.allow_nvls && place.nodes_spanned <= 1 && n > 1) {
      const double nv_bw = nvls_bandwidth(n, gpu);
      // busbw keeps the all-reduce factor 2(n-1)/n; on the wire a GPU sends ~S + S/n (multimem
      // reduce + store, docs/sources/simulator.md §1.2 [derived]).
      const double t = kNvlsLatencyUs * 1e-6 + static_cast<double>(bytes) * core::bus_factor(op, n) / nv_bw;
      const std::int64_t wire = bytes + (bytes + n - 1) / n;
      if (t < best.time_s) best = {t, wire, Algorithm::kNvls};
    }
  }
  out.time_s = best.time_s;
  out.wire_bytes = best.wire;
  out.algorithm = best.algorithm;
  return out;
}

// An expert all-to-all whose group spans nodes (core/schedule/ep_dispatch.h): the lowering split
// each call's bytes into the part this GPU's NIC carries and the part NVLink carries at the same
// time, so the slower bounds the call. A plain all-to-all sends the remote ranks' share over the
// NIC and the node's other ranks' share over NVLink; DeepEP-style dispatch sends each token once
// per destination node and forwards it inside. DeepEP's measured internode bottleneck bandwidth
// (43-58 GB/s of a ~50 GB/s CX7 NIC on H800, deepseek-ai/DeepEP docs/legacy.md "Normal kernels")
// is the NIC's line rate, as kNicEfficiency prices it. A topology profile measured a plain
// all-to-all, so it is used as such.
namespace {

std::optional<CallCost> split_all_to_all(const core::ScheduledCollective& c, const Placement& place,
                                         const core::GpuSpec& gpu, const Topology* topology) {
  if (c.op != CollOp::kAllToAll || c.inter_node_bytes_per_call <= 0 || place.nodes_spanned <= 1 || topology ||
      c.group_size <= 1 || c.bytes_per_call <= 0) {
    return std::nullopt;
  }
  const double nic = gpu.nic_gbps * 1e9 * kNicEfficiency, nvlink = gpu.nvlink_gbps * 1e9 * kNvlinkEfficiency;
  if (nic <= 0 || nvlink <= 0) return std::nullopt;
  CallCost out;
  out.link = link_for(place, gpu, topology);
  out.algorithm = Algorithm::kRing;
  const double latency = ring_cost(c.op, c.group_size, 0, place, nic).time_s;
  out.time_s = latency + std::max(static_cast<double>(c.inter_node_bytes_per_call) / nic,
                                  static_cast<double>(c.intra_node_bytes_per_call) / nvlink);
  out.wire_bytes = core::sat_add(c.inter_node_bytes_per_call, c.intra_node_bytes_per_call);
  return out;
}

}  // namespace

CallCost predict_time(const core::ScheduledCollective& c, const Placement& place, const core::GpuSpec& gpu,
                      const Topology* topology, const CostOptions& options) {
  CallCost one = split_all_to_all(c, place, gpu, topology)
                     .value_or(predict_call(c.op, c.group_size, c.bytes_per_call, place, gpu, topology, options));
  one.time_s *= static_cast<double>(c.calls_per_step);
  one.wire_bytes = core::sat_mul(one.wire_bytes, c.calls_per_step);
  return one;
}

}  // namespace planck::sim
