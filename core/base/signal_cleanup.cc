#include "core/base/signal_cleanup.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

namespace planck::core {
namespace {

constexpr int kSlots = 16;
std::atomic<const char*> g_files[kSlots];
std::atomic<pid_t> g_groups[kSlots];

void on_signal(int sig) {
  for (auto& f : g_files) {
    if (const char* p = f.exchange(nullptr)) ::unlink(p);
  }
  for (auto& g : g_groups) {
    if (const pid_t pgid = g.exchange(0); pgid > 0) ::kill(-pgid, SIGKILL);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void install_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
      struct sigaction old {};
      ::sigaction(sig, nullptr, &old);
      if (old.sa_handler == SIG_IGN) continue;  // started with it ignored (nohup): keep that
      struct sigaction sa {};
      sa.sa_handler = on_signal;
      sigemptyset(&sa.sa_mask);
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

template <class T>
bool put(std::atomic<T>* slots, T value, T empty) {
  install_once();
  for (int i = 0; i < kSlots; ++i) {
    T expected = empty;
    if (slots[i].compare_exchange_strong(expected, value)) return true;
  }
  return false;
}

template <class T>
void take(std::atomic<T>* slots, T value, T empty) {
  for (int i = 0; i < kSlots; ++i) {
    T expected = value;
    if (slots[i].compare_exchange_strong(expected, empty)) return;
  }
}

}  // namespace

bool remember_temp_file(const char* path) { return put<const char*>(g_files, path, nullptr); }
void forget_temp_file(const char* path) { take<const char*>(g_files, path, nullptr); }
bool remember_child_group(pid_t pgid) { return put<pid_t>(g_groups, pgid, 0); }
void forget_child_group(pid_t pgid) { take<pid_t>(g_groups, pgid, 0); }

}  // namespace planck::core
