// python3 as a subprocess: fork + execvp, stdout and stderr read through poll so that neither
// pipe can fill and stall the child, a deadline after which the child is killed.

#include "import/python_script.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "planck/torchtitan_registry_py.h"

namespace planck::import {

namespace {

// A runaway script's output is not a config; cap what is kept.
constexpr std::size_t kMaxOutputBytes = std::size_t{64} << 20;

std::string last_lines(const std::string& text, int count) {
  std::size_t pos = text.size();
  while (pos > 0 && (text[pos - 1] == '\n')) --pos;
  std::size_t end = pos;
  for (int i = 0; i < count && pos > 0; ++i) {
    pos = text.rfind('\n', pos - 1);
    if (pos == std::string::npos) {
      pos = 0;
      break;
    }
  }
  return text.substr(pos == 0 ? 0 : pos + 1, end - (pos == 0 ? 0 : pos + 1));
}

}  // namespace

const std::string& torchtitan_registry_script() {
  static const std::string script(reinterpret_cast<const char*>(kTorchtitanRegistryPy), sizeof kTorchtitanRegistryPy);
  return script;
}

core::Result<std::string> run_python(const std::string& script, const std::vector<std::string>& args,
                                     int timeout_seconds) {
  int out_fds[2], err_fds[2];
  if (::pipe(out_fds) != 0) return core::Status::error(std::string("cannot create a pipe: ") + std::strerror(errno));
  if (::pipe(err_fds) != 0) {
    ::close(out_fds[0]);
    ::close(out_fds[1]);
    return core::Status::error(std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  std::vector<std::string> argv_s = {"python3", "-I", "-c", script};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {out_fds[0], out_fds[1], err_fds[0], err_fds[1]}) ::close(fd);
    return core::Status::error(std::string("cannot start python3: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::dup2(out_fds[1], 1);
    ::dup2(err_fds[1], 2);
    for (int fd : {out_fds[0], out_fds[1], err_fds[0], err_fds[1]}) ::close(fd);
    ::execvp("python3", argv.data());
    const char msg[] = "planck: python3 not found on PATH\n";
    [[maybe_unused]] auto n = ::write(2, msg, sizeof msg - 1);
    ::_exit(127);
  }
  ::close(out_fds[1]);
  ::close(err_fds[1]);
  std::string out, err;
  pollfd fds[2] = {{out_fds[0], POLLIN, 0}, {err_fds[0], POLLIN, 0}};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  bool timed_out = false;
  int open = 2;
  char buf[65536];
  while (open > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    int ready = ::poll(fds, 2, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open;
        continue;
      }
      std::string& sink = i == 0 ? out : err;
      if (sink.size() < kMaxOutputBytes) sink.append(buf, static_cast<std::size_t>(n));
    }
  }
  if (timed_out) ::kill(pid, SIGKILL);
  for (const pollfd& p : fds) {
    if (p.fd >= 0) ::close(p.fd);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return core::Status::error("python3 ran past " + std::to_string(timeout_seconds) + " s and was stopped");
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && out.empty()) {
    return core::Status::error("python3 was not found on PATH; it is needed to read Python configs "
                               "(Debian: apt-get install python3)");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return core::Status::error("python3 failed (" +
                               (WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                                                  : "signal " + std::to_string(WTERMSIG(status))) +
                               "): " + last_lines(err, 3));
  }
  return out;
}

}  // namespace planck::import
