#include "exec/threads/world.h"

#include <thread>

#include "exec/threads/communicator.h"
#include "exec/threads/shared.h"
#include "core/base/str_cat.h"

namespace planck::exec::threads {
namespace {
// Waits wake at least this often to notice an abort raised on another communicator.
constexpr std::chrono::milliseconds kPoll{5};
}  // namespace

void WorldState::abort(const std::string& why) {
  std::lock_guard<std::mutex> lk(mu);
  if (!is_aborted) reason = why;
  is_aborted = true;
}

bool WorldState::aborted(std::string* why) {
  std::lock_guard<std::mutex> lk(mu);
  if (is_aborted && why) *why = reason;
  return is_aborted;
}

Shared::Shared(int size, std::shared_ptr<WorldState> w)
    : n(size), world(std::move(w)), reached(size, 0), send(size), recv(size), colors(size), children(size),
      mail(static_cast<std::size_t>(size) * size) {}

core::Status Shared::rendezvous(int rank, const char* what) {
  std::unique_lock<std::mutex> lk(mu);
  const std::int64_t gen = generation;
  reached[rank] = gen + 1;
  if (++arrived == n) {
    arrived = 0;
    ++generation;
    cv.notify_all();
    return core::Status::ok();
  }
  const auto deadline = std::chrono::steady_clock::now() + world->timeout;
  while (generation == gen) {
    std::string why;
    if (world->aborted(&why)) return core::Status::error(std::string(what) + " aborted: " + why);
    if (std::chrono::steady_clock::now() > deadline) {
      std::string missing;
      for (int r = 0; r < n; ++r) {
        if (reached[r] <= gen) missing += core::str_cat(missing.empty() ? "" : " ", std::to_string(r));
      }
      std::string msg = std::string(what) + " timed out after " + std::to_string(world->timeout.count()) +
                        " ms waiting for rank(s) " + missing + " of " + std::to_string(n);
      world->abort(msg);
      return core::Status::error(msg);
    }
    cv.wait_for(lk, kPoll);
  }
  return core::Status::ok();
}

core::Status Shared::take_mail(int src, int dst, std::vector<unsigned char>* out) {
  std::unique_lock<std::mutex> lk(mu);
  auto& box = mail[static_cast<std::size_t>(src) * n + dst];
  const auto deadline = std::chrono::steady_clock::now() + world->timeout;
  while (box.empty()) {
    std::string why;
    if (world->aborted(&why)) return core::Status::error("recv aborted: " + why);
    if (std::chrono::steady_clock::now() > deadline) {
      std::string msg = "recv at rank " + std::to_string(dst) + " timed out after " +
                        std::to_string(world->timeout.count()) + " ms waiting for rank " + std::to_string(src);
      world->abort(msg);
      return core::Status::error(msg);
    }
    cv.wait_for(lk, kPoll);
  }
  *out = std::move(box.front());
  box.pop_front();
  return core::Status::ok();
}

std::vector<core::Status> run(int n, const std::function<core::Status(exec::Communicator&)>& body,
                              const Options& options) {
  std::vector<core::Status> result(n > 0 ? n : 0);
  if (n < 1) return result;
  auto world = std::make_shared<WorldState>(options.timeout);
  auto shared = std::make_shared<Shared>(n, world);
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      Communicator comm(shared, r);
      core::Status st = body(comm);
      if (!st) world->abort("rank " + std::to_string(r) + " failed: " + st.message());
      result[r] = st;
    });
  }
  for (auto& t : threads) t.join();
  return result;
}

}  // namespace planck::exec::threads
