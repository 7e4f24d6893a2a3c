#include "exec/socket_traffic.h"

#include <linux/sockios.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "exec/communicator.h"

namespace planck::exec {
namespace {

// FNV-1a over an endpoint's address family, address and port.
std::uint64_t endpoint_key(const sockaddr_storage& a) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(&a);
  std::size_t len = 0;
  if (a.ss_family == AF_INET) len = sizeof(sockaddr_in);
  if (a.ss_family == AF_INET6) len = sizeof(sockaddr_in6);
  std::uint64_t h = 1469598103934665603ull;
  sockaddr_storage clean{};
  std::memcpy(&clean, p, len);
  if (a.ss_family == AF_INET) std::memset(reinterpret_cast<sockaddr_in*>(&clean)->sin_zero, 0, 8);
  const unsigned char* c = reinterpret_cast<const unsigned char*>(&clean);
  for (std::size_t i = 0; i < len; ++i) h = (h ^ c[i]) * 1099511628211ull;
  return h;
}

bool tcp_socket(int fd, SocketBytes* out) {
  int protocol = 0, domain = 0;
  socklen_t len = sizeof protocol;
  if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &protocol, &len) != 0 || protocol != IPPROTO_TCP) return false;
  len = sizeof domain;
  if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || (domain != AF_INET && domain != AF_INET6)) {
    return false;
  }
  sockaddr_storage local{}, remote{};
  socklen_t ll = sizeof local, rl = sizeof remote;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &ll) != 0) return false;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&remote), &rl) != 0) return false;  // not connected
  // Bytes written = bytes acked + bytes still queued (SIOCOUTQ: unsent and unacked). The two are
  // two reads: an ACK landing between them moves bytes out of the queue after the acked count
  // was taken, and they were counted nowhere (a 502-byte all-to-all block read as 0, one run in
  // 25 over loopback). The pair is taken only when the acked count is the same on both sides of
  // the queue read.
  std::uint64_t acked = 0;
  int queued = 0;
  for (int attempt = 0;; ++attempt) {
    tcp_info before{}, after{};
    socklen_t il = sizeof before;
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &before, &il) != 0) return false;
    if (ioctl(fd, SIOCOUTQ, &queued) != 0) queued = 0;
    il = sizeof after;
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &after, &il) != 0) return false;
    acked = before.tcpi_bytes_acked;
    if (after.tcpi_bytes_acked == acked || attempt == 1000) break;
  }
  out->local = endpoint_key(local);
  out->remote = endpoint_key(remote);
  out->written = acked + static_cast<std::uint64_t>(std::max(queued, 0));
  return true;
}

class TcpSocketTraffic final : public PeerTrafficSource {
 public:
  std::string source() const override { return "tcp-socket"; }
  core::Status begin() override {
    auto s = tcp_sockets();
    if (!s) return s.status();
    before_.clear();
    for (const SocketBytes& b : *s) before_[{b.local, b.remote}] = b.written;
    return core::Status::ok();
  }
  core::Result<TrafficMatrix> end(Communicator& world) override {
    auto after = tcp_sockets();
    if (!after) return after.status();
    const int n = world.size();
    // Every rank's connections as (local, remote) endpoint pairs, padded to the longest list. A
    // socket belongs to the rank holding its mirror (remote, local): one endpoint alone is not
    // unique, since Linux gives two processes the same ephemeral port for connections to
    // different peers (a rank's bytes to another were then counted as to itself, now and then).
    std::uint64_t mine = after->size();
    std::vector<std::uint64_t> counts(static_cast<std::size_t>(n));
    if (auto st = world.all_gather(&mine, counts.data(), 1, DataType::kUint64); !st) return st;
    const std::uint64_t width = std::max<std::uint64_t>(1, *std::max_element(counts.begin(), counts.end()));
    std::vector<std::uint64_t> keys(2 * width, 0), all(2 * width * static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < after->size(); ++i) {
      keys[2 * i] = (*after)[i].local;
      keys[2 * i + 1] = (*after)[i].remote;
    }
    if (auto st = world.all_gather(keys.data(), all.data(), static_cast<std::int64_t>(2 * width), DataType::kUint64);
        !st) {
      return st;
    }
    std::map<std::pair<std::uint64_t, std::uint64_t>, int> owner;
    for (int r = 0; r < n; ++r) {
      for (std::uint64_t i = 0; i < counts[static_cast<std::size_t>(r)]; ++i) {
        const std::size_t at = 2 * (static_cast<std::size_t>(r) * width + i);
        owner[{all[at], all[at + 1]}] = r;
      }
    }
    std::vector<std::uint64_t> row(static_cast<std::size_t>(n), 0);
    for (const SocketBytes& b : *after) {
      auto it = owner.find({b.remote, b.local});
      if (it == owner.end()) continue;
      auto was = before_.find({b.local, b.remote});
      row[static_cast<std::size_t>(it->second)] += b.written - (was == before_.end() ? 0 : was->second);
    }
    std::vector<std::uint64_t> rows(static_cast<std::size_t>(n) * static_cast<std::size_t>(n));
    if (auto st = world.all_gather(row.data(), rows.data(), n, DataType::kUint64); !st) return st;
    TrafficMatrix m(n);
    for (std::size_t i = 0; i < rows.size(); ++i) m.bytes[i] = static_cast<std::int64_t>(rows[i]);
    return m;
  }

 private:
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::uint64_t> before_;
};

}  // namespace

core::Result<std::vector<SocketBytes>> tcp_sockets() {
  std::vector<SocketBytes> out;
  std::error_code ec;
  std::filesystem::directory_iterator it("/proc/self/fd", ec);
  if (ec) return core::Status::error("cannot list /proc/self/fd: " + ec.message());
  std::vector<int> fds;
  for (const auto& entry : it) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    fds.push_back(std::stoi(name));
  }
  for (int fd : fds) {
    SocketBytes b;
    if (tcp_socket(fd, &b)) out.push_back(b);
  }
  return out;
}

std::unique_ptr<PeerTrafficSource> tcp_socket_traffic() { return std::make_unique<TcpSocketTraffic>(); }

}  // namespace planck::exec
