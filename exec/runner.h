#pragma once
// The runner: builds every role's communicators from the plan's mesh, checks their real
// membership, runs the schedule core::lower() produced (scaled to --max-bytes), times it,
// checks the data exactly and measures the bytes, on any Communicator backend.
//
// It runs on every rank; only rank 0's report is complete (the others hold the same summary).
// Predictions come in through a callback so that exec does not depend on sim/.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/mesh/mesh.h"
#include "core/plan/plan.h"
#include "core/schedule/schedule.h"
#include "exec/communicator.h"
#include "exec/counters.h"
#include "exec/report.h"
#include "exec/traffic.h"

namespace planck::exec {

struct Prediction {
  std::int64_t bytes_sent_per_rank = 0;  // one call, busiest rank
  std::optional<double> time_s;          // one call
  std::string link;
  std::string model;  // how the time was predicted: "ring", "fitted", "measured" (sim::algorithm_name)
};
// Predicts ONE call of `scaled` (its bytes_per_call already scaled, calls_per_step 1).
using Predictor = std::function<Prediction(const core::ScheduledCollective& scaled)>;
// The core/schedule/collectives.h ring bytes and no time: what the runner uses without a predictor.
Prediction ring_prediction(const core::ScheduledCollective& scaled);

class Heartbeats;  // exec/heartbeat.h

// Arms a deadline around each blocking step; `on_expiry(what)` runs on a watchdog thread. With
// `heartbeats`, the same thread stamps this rank's heartbeat and counts its steps (exec/watchdog.cc).
class Watchdog {
 public:
  Watchdog(std::chrono::milliseconds timeout, std::function<void(const std::string& what)> on_expiry,
           Heartbeats* heartbeats = nullptr);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  void arm(const std::string& what);
  void disarm();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Faults a test injects to see each check fail (cli: --inject).
struct Fault {
  enum class Kind { kNone, kKill, kWrongData, kWrongColour, kPerturbPrediction };
  Kind kind = Kind::kNone;
  int rank = -1;        // the faulty rank (kKill, kWrongData, kWrongColour)
  double factor = 0;    // kPerturbPrediction: predicted per-peer bytes x (1 + factor)
};

// What the intended plan predicts for one op that ran.
struct ExpectedOp {
  core::GroupSet groups;
  std::int64_t bytes = 0;  // one call, scaled like the run
  std::string label;       // the intended op, for messages
};

struct RunOptions {
  int warmup = 2;
  int iters = 5;
  std::int64_t max_bytes = std::int64_t{64} << 20;
  // The scale factor to use instead of scale_factor(schedule, max_bytes): bench runs every
  // layout with one factor so their times compare.
  std::optional<double> factor;
  bool check_every_iteration = false;  // --check: verify data after every call, not only the last
  Predictor predict;                   // empty: ring_prediction
  WireCounter* wire = nullptr;         // null: wire bytes unmeasured
  std::string wire_unavailable;        // why, when wire is null
  Watchdog* watchdog = nullptr;        // optional
  Fault fault;                         // testing aid: a fault to inject (none by default)
  PeerTrafficSource* traffic = nullptr;  // null: per-peer traffic unmeasured
  std::string traffic_unavailable;       // why, when traffic is null
  // --expect: per-peer traffic predicted from another plan's mesh and schedule. The op run as
  // schedule entry k is predicted by expect(k): the intended group set and scaled bytes, or
  // nothing when the intended plan has no such op (then any traffic is unpredicted).
  std::function<std::optional<ExpectedOp>(const core::ScheduledCollective& run)> expect;
  // Wire measurement repeats a call until at least this many bytes crossed the wire in total,
  // so per-packet headers and background traffic stay small against the payload.
  std::int64_t wire_min_total_bytes = std::int64_t{32} << 20;
};

// Largest bytes_per_call of the schedule scaled to fit max_bytes: the factor (<= 1).
double scale_factor(const core::Schedule& schedule, std::int64_t max_bytes);
// One entry's scaled bytes: bytes x factor rounded down to whole elements per rank (at least
// one per rank, so ring algorithms keep their shape); 0 stays 0.
std::int64_t scaled_bytes(const core::ScheduledCollective& c, double factor);

// Runs `fn` with the watchdog (may be null) armed, labelled `what`; an error is prefixed with
// `what`, so a message names the step that failed.
core::Status run_guarded(Watchdog* watchdog, const std::string& what, const std::function<core::Status()>& fn);

// Per iteration, the slowest rank's time (a step waits for it): every rank passes its own
// times and gets the same result.
core::Result<std::vector<double>> slowest_per_iteration(Communicator& world, const std::vector<double>& mine);

// Runs everything; `report` gets the header fields from the caller (backend, plan, ...).
// An error Status means the run could not complete (a backend failure, not a finding).
core::Status run_plan(Communicator& world, const core::Mesh& mesh, const core::Schedule& schedule,
                      const RunOptions& options, ExecReport& report);

}  // namespace planck::exec
