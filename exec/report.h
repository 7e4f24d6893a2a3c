#pragma once
// The execution report (docs/exec.md, "planck-exec/1") and its nccl-tests-like text table.
// Every op entry describes ONE call of the scaled buffer; bytes are integers, GB = 1e9 bytes.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/schedule/collectives.h"
#include "core/schedule/schedule.h"
#include "exec/traffic.h"

namespace planck::exec {

struct MembershipResult {
  std::string role;
  std::vector<std::string> dims;
  std::int64_t groups = 0;
  std::int64_t group_size = 0;
  std::int64_t wrong_ranks = 0;  // ranks whose communicator members differ from the mesh's group
  bool ok = true;
};

struct TimeStats {
  double min = 0, median = 0, max = 0;
};

struct OpResult {
  std::string role;
  std::vector<std::string> dims;
  core::CollOp op = core::CollOp::kAllReduce;
  core::Phase phase = core::Phase::kStep;
  std::string what;  // the schedule's description of the op
  std::int64_t group_size = 1;
  std::int64_t groups = 1;
  std::int64_t bytes_per_call = 0;           // scaled, nccl-tests size convention
  std::int64_t unscaled_bytes_per_call = 0;  // as the schedule has it
  std::int64_t calls_per_step = 0;
  std::string dtype;
  std::int64_t predicted_bytes_sent_per_rank = 0;
  // Busiest rank's bytes of one call: from the transport (bytes_source names it), or, where no
  // per-peer source exists, from the arguments the API was handed (bytes_source "api").
  std::int64_t measured_bytes_sent_per_rank = 0;
  std::string bytes_source = "api";
  TrafficCheck traffic;  // per-peer bytes, predicted vs measured
  std::string expected;  // --expect: the intended op that predicted this one
  std::optional<std::int64_t> wire_bytes_measured;
  std::string wire_source;  // "netdev:lo", or "unmeasured: <why>"
  std::optional<double> predicted_time_s;
  std::string link;  // link class of the prediction, when known
  std::string model;  // how its time was predicted ("ring", "fitted", "measured"), when known
  TimeStats measured_time_s;
  double algbw_gbps = 0, busbw_gbps = 0;  // nccl-tests, from the median time
  std::int64_t wrong_elements = 0;
};

struct MpiInfo {
  std::vector<std::pair<std::string, std::string>> algorithms;
  std::string transport;
  std::vector<std::string> notes;
};

struct ExecReport {
  std::string backend;
  std::int64_t world = 0;
  std::string plan;
  std::string prediction_basis = "preset";  // "topology" with --topology
  std::string expect;                       // --expect: the intended plan
  std::int64_t gpus_per_node = 0;           // the plan's node blocks, to name pairs that cross nodes
  std::string gpu;
  std::int64_t max_bytes = 0;
  double scale_factor = 1;
  std::optional<MpiInfo> mpi;
  std::vector<MembershipResult> membership;
  std::vector<OpResult> ops;
  int warmup = 0, iters = 0;
  std::vector<std::string> notes;

  // docs/exec.md summary, computed by summarize().
  bool membership_ok = true;
  bool ok = true;
  double max_bytes_error = 0;
  std::optional<double> max_wire_error;
  bool traffic_ok = true;        // no op's per-peer traffic broke a rule (unmeasured ops pass: see traffic_measured)
  std::int64_t traffic_measured = 0;  // ops whose per-peer traffic the transport measured
  double max_peer_error = 0;
  // Median measured / predicted time; only a verdict with a calibrated prediction
  // (prediction_basis "topology"), otherwise left empty and the run is "uncalibrated".
  std::optional<double> time_ratio_median;
  bool calibrated() const { return prediction_basis == "topology"; }
};

// Largest tolerated |wire / predicted - 1| (docs/exec.md).
inline constexpr double kWireTolerance = 0.03;
// Calls smaller than this per rank are measured but not gated: fixed per-message protocol
// bytes (66 B of Ethernet/IPv4/TCP headers per loopback packet, OpenMPI's fragment headers,
// pure ACKs) exceed 3% of them. Reported as "wire_gated": false.
inline constexpr std::int64_t kWireGateBytes = 64 * 1024;

// Fills the summary fields from membership and ops.
void summarize(ExecReport& report);

std::string report_json(const ExecReport& report);
// nccl-tests-style table, one row per op, plus membership and summary lines.
std::string report_table(const ExecReport& report);
// "rank 7 (node 0) -> rank 8 (node 1)": a pair, with nodes when the report knows them.
std::string pair_name(const ExecReport& report, const PeerBytes& p);

}  // namespace planck::exec
