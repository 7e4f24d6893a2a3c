#pragma once
// Per-rank heartbeats and progress counters that a surviving rank reads when a step hangs, so the
// watchdog names the rank that stopped (docs/exec.md, "Faults"). MPI has no side channel a
// blocked collective leaves free, so the ranks of one host share a small table in /dev/shm: each
// rank's watchdog thread stamps its slot every `interval` (a SIGSTOPped or frozen process stops
// stamping) and counts the steps it started and finished (a rank alive but stuck elsewhere falls
// behind). Ranks on other hosts are not visible: the error then says so.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace planck::exec {

class Heartbeats {
 public:
  // The table of this launch (keyed by the launcher's job: PMIX_NAMESPACE, SLURM_JOB_ID.STEP, else
  // the parent process), slot `rank` of `world` written by this process. Never fails: without
  // shared memory the table is simply absent and blame() says so.
  Heartbeats(int rank, int world, std::chrono::milliseconds interval);
  ~Heartbeats();
  Heartbeats(const Heartbeats&) = delete;
  Heartbeats& operator=(const Heartbeats&) = delete;

  std::chrono::milliseconds interval() const { return interval_; }
  void beat();                // stamp now
  void step_started();        // progress counters
  void step_finished();
  // Who stopped, for the message of a step that outlived `timeout_s`: "rank 3 stopped responding
  // (no heartbeat for 29.8 s; ...)", or the ranks that fell behind, or why nobody can be named.
  std::string blame(double timeout_s) const;

 private:
  struct Slot;
  int rank_;
  int world_;
  std::chrono::milliseconds interval_;
  std::string path_;
  Slot* slots_ = nullptr;
  std::size_t bytes_ = 0;
  std::string unavailable_;  // why there is no table
};

}  // namespace planck::exec
