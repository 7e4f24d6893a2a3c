#include "exec/heartbeat.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

namespace planck::exec {

// One cache line per rank. CLOCK_MONOTONIC is one clock for every process of a host.
struct alignas(64) Heartbeats::Slot {
  std::atomic<std::int64_t> beat_ns;
  std::atomic<std::int64_t> started;
  std::atomic<std::int64_t> finished;
  std::atomic<std::int64_t> pid;
};
static_assert(std::atomic<std::int64_t>::is_always_lock_free, "shared-memory counters must be lock-free");

namespace {

std::int64_t now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::string job_key() {
  if (const char* ns = std::getenv("PMIX_NAMESPACE")) return ns;
  if (const char* job = std::getenv("SLURM_JOB_ID")) {
    const char* step = std::getenv("SLURM_STEP_ID");
    return std::string(job) + "." + (step ? step : "0");
  }
  return "ppid" + std::to_string(::getppid());  // ranks one launcher daemon started share it
}

std::string safe(std::string s) {
  for (char& c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' || c == '-')) c = '_';
  }
  return s;
}

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

}  // namespace

Heartbeats::Heartbeats(int rank, int world, std::chrono::milliseconds interval)
    : rank_(rank), world_(world), interval_(interval) {
  const char* dir = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  path_ = std::string(dir) + "/planck-heartbeat-" + safe(job_key());
  if (world < 1 || rank < 0 || rank >= world) {
    unavailable_ = "no heartbeat table (rank outside the world)";
    return;
  }
  const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  bytes_ = sizeof(Slot) * static_cast<std::size_t>(world);
  // Every rank truncates to the same size: sparse, so a slot costs memory only where written.
  if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(bytes_)) != 0) {
    unavailable_ = "no heartbeat table (" + path_ + ": " + std::strerror(errno) + ")";
    if (fd >= 0) ::close(fd);
    return;
  }
  void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) {
    unavailable_ = "no heartbeat table (mmap " + path_ + ": " + std::strerror(errno) + ")";
    return;
  }
  slots_ = static_cast<Slot*>(p);
  Slot& me = slots_[rank_];
  me.started.store(0);
  me.finished.store(0);
  me.pid.store(::getpid());
  beat();
}

Heartbeats::~Heartbeats() {
  if (!slots_) return;
  ::munmap(slots_, bytes_);
  ::unlink(path_.c_str());  // the others keep their mapping; a later job gets a fresh table
}

void Heartbeats::beat() {
  if (slots_) slots_[rank_].beat_ns.store(now_ns(), std::memory_order_relaxed);
}
void Heartbeats::step_started() {
  if (slots_) slots_[rank_].started.fetch_add(1, std::memory_order_relaxed);
}
void Heartbeats::step_finished() {
  if (slots_) slots_[rank_].finished.fetch_add(1, std::memory_order_relaxed);
}

std::string Heartbeats::blame(double timeout_s) const {
  if (!slots_) return "a peer rank died or hangs (" + unavailable_ + ", so it cannot be named)";
  // Silent for more than half the timeout (and well over the beat interval): stopped, not slow.
  const double stale_s = std::max(timeout_s / 2, 4.0 * static_cast<double>(interval_.count()) / 1000.0);
  const std::int64_t now = now_ns();
  const double own_age = static_cast<double>(now - slots_[rank_].beat_ns.load()) / 1e9;
  if (own_age > stale_s) {  // this process itself was frozen (SIGSTOP, swapped out): its view is stale
    return "this rank itself was stopped or starved for " + seconds(own_age) + " (SIGSTOP, a debugger, swapping)";
  }
  std::vector<int> stopped;
  std::vector<double> silent;
  std::int64_t most = -1;
  int visible = 0;
  for (int r = 0; r < world_; ++r) {
    const std::int64_t b = slots_[r].beat_ns.load(std::memory_order_relaxed);
    if (b == 0) continue;  // a rank on another host
    ++visible;
    most = std::max(most, slots_[r].started.load(std::memory_order_relaxed));
    const double age = static_cast<double>(now - b) / 1e9;
    if (age > stale_s) {
      stopped.push_back(r);
      silent.push_back(age);
    }
  }
  std::string s;
  for (std::size_t i = 0; i < stopped.size() && i < 8; ++i) {
    const Slot& sl = slots_[stopped[i]];
    s += (i ? "; " : "") + std::string("rank ") + std::to_string(stopped[i]) + " (pid " + std::to_string(sl.pid.load()) +
         ") stopped responding: no heartbeat for " + seconds(silent[i]) + ", after " +
         std::to_string(sl.finished.load()) + " steps";
  }
  if (stopped.size() > 8) s += "; and " + std::to_string(stopped.size() - 8) + " more";
  if (!s.empty()) return s;
  std::vector<int> behind;
  for (int r = 0; r < world_; ++r) {
    if (slots_[r].beat_ns.load() != 0 && slots_[r].started.load() < most) behind.push_back(r);
  }
  for (std::size_t i = 0; i < behind.size() && i < 8; ++i) {
    s += (i ? "; " : "") + std::string("rank ") + std::to_string(behind[i]) + " is alive but behind: it started " +
         std::to_string(slots_[behind[i]].started.load()) + " steps, others " + std::to_string(most);
  }
  if (!s.empty()) return s;
  return "the " + std::to_string(visible) + " ranks on this host are alive and at the same step, so a rank on another "
         "host or the network hangs";
}

}  // namespace planck::exec
