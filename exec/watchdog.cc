// Watchdog (declared in exec/runner.h): one thread that fires `on_expiry` when an armed step
// outlives the timeout. MPI has no timeout of its own, so without this a peer that hangs
// (rather than dies, which the launcher notices) would hang the whole job. The same thread keeps
// this rank's heartbeat (exec/heartbeat.h), so a surviving rank can name the one that stopped.

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "exec/heartbeat.h"
#include "exec/runner.h"

namespace planck::exec {

struct Watchdog::State {
  std::chrono::milliseconds timeout;
  std::function<void(const std::string&)> on_expiry;
  Heartbeats* heartbeats = nullptr;
  std::mutex mu;
  std::condition_variable cv;
  bool armed = false;
  bool stop = false;
  std::string what;
  std::chrono::steady_clock::time_point deadline;
  std::thread thread;
};

Watchdog::Watchdog(std::chrono::milliseconds timeout, std::function<void(const std::string&)> on_expiry,
                   Heartbeats* heartbeats)
    : state_(std::make_unique<State>()) {
  state_->timeout = timeout;
  state_->on_expiry = std::move(on_expiry);
  state_->heartbeats = heartbeats;
  State* s = state_.get();
  s->thread = std::thread([s] {
    std::unique_lock<std::mutex> lk(s->mu);
    while (!s->stop) {
      if (s->heartbeats) s->heartbeats->beat();
      // Wake at the next beat or the deadline, whichever is first.
      auto wake = std::chrono::steady_clock::time_point::max();
      if (s->heartbeats) wake = std::chrono::steady_clock::now() + s->heartbeats->interval();
      if (!s->armed) {
        if (s->heartbeats) {
          s->cv.wait_until(lk, wake);
        } else {
          s->cv.wait(lk);
        }
        continue;
      }
      if (s->cv.wait_until(lk, std::min(wake, s->deadline)) == std::cv_status::timeout && s->armed && !s->stop &&
          std::chrono::steady_clock::now() >= s->deadline) {
        const std::string what = s->what;
        s->armed = false;
        lk.unlock();
        s->on_expiry(what);
        lk.lock();
      }
    }
  });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lk(state_->mu);
    state_->stop = true;
  }
  state_->cv.notify_all();
  state_->thread.join();
}

void Watchdog::arm(const std::string& what) {
  {
    std::lock_guard<std::mutex> lk(state_->mu);
    state_->armed = true;
    state_->what = what;
    state_->deadline = std::chrono::steady_clock::now() + state_->timeout;
  }
  if (state_->heartbeats) state_->heartbeats->step_started();
  state_->cv.notify_all();
}

void Watchdog::disarm() {
  {
    std::lock_guard<std::mutex> lk(state_->mu);
    state_->armed = false;
  }
  if (state_->heartbeats) state_->heartbeats->step_finished();
}

}  // namespace planck::exec
