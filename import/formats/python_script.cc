// python3 as a subprocess: fork + execvp, stdout and stderr read through poll so that neither
// pipe can fill and stall the child, a deadline after which the child is killed.

#include "import/formats/python_script.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/base/signal_cleanup.h"
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
                                     int timeout_seconds, std::string_view input) {
  int in_fds[2], out_fds[2], err_fds[2];
  if (::pipe2(in_fds, O_CLOEXEC) != 0) return core::Status::error(std::string("cannot create a pipe: ") + std::strerror(errno));
  if (::pipe2(out_fds, O_CLOEXEC) != 0 || ::pipe2(err_fds, O_CLOEXEC) != 0) {
    for (int fd : {in_fds[0], in_fds[1]}) ::close(fd);
    return core::Status::error(std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  std::vector<std::string> argv_s = {"python3", "-I", "-c", script};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);

  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {in_fds[0], in_fds[1], out_fds[0], out_fds[1], err_fds[0], err_fds[1]}) ::close(fd);
    return core::Status::error(std::string("cannot start python3: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // Its own process group, so planck's signal cleanup kills it and anything it starts; and
    // SIGKILL when planck dies however it dies (PR_SET_PDEATHSIG), checked once more after
    // setting it in case planck died in between.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(126);
    ::dup2(in_fds[0], 0);
    ::dup2(out_fds[1], 1);
    ::dup2(err_fds[1], 2);
    ::execvp("python3", argv.data());
    const char msg[] = "planck: python3 not found on PATH\n";
    [[maybe_unused]] auto n = ::write(2, msg, sizeof msg - 1);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here: whichever of the two runs first
  core::remember_child_group(pid);
  ::close(in_fds[0]);
  ::close(out_fds[1]);
  ::close(err_fds[1]);
  // stdin is written as python reads it: a non-blocking end polled with the other two, so
  // neither side can stall the other; a child that exits early closes it (EPIPE, not SIGPIPE:
  // MSG_NOSIGNAL does not apply to pipes, so SIGPIPE is blocked around the writes).
  ::fcntl(in_fds[1], F_SETFL, ::fcntl(in_fds[1], F_GETFL) | O_NONBLOCK);
  int in_fd = in_fds[1];
  std::size_t written = 0;
  if (input.empty()) {
    ::close(in_fd);
    in_fd = -1;
  }
  sigset_t pipe_set, old_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
  std::string out, err;
  pollfd fds[3] = {{out_fds[0], POLLIN, 0}, {err_fds[0], POLLIN, 0}, {in_fd, POLLOUT, 0}};
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
    fds[2].fd = in_fd;
    int ready = ::poll(fds, 3, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    if (in_fd >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t n = ::write(in_fd, input.data() + written, std::min<std::size_t>(input.size() - written, 1 << 16));
      if (n > 0) written += static_cast<std::size_t>(n);
      if ((n < 0 && errno != EAGAIN && errno != EINTR) || written == input.size()) {
        ::close(in_fd);
        in_fd = -1;
      }
    }
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
  if (in_fd >= 0) ::close(in_fd);
  // A pending SIGPIPE from a write to a closed pipe is dropped before unblocking.
  timespec zero{0, 0};
  while (::sigtimedwait(&pipe_set, nullptr, &zero) > 0) {
  }
  ::pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
  if (timed_out) ::kill(-pid, SIGKILL);
  for (int i = 0; i < 2; ++i) {
    if (fds[i].fd >= 0) ::close(fds[i].fd);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ::kill(-pid, SIGKILL);  // anything the script left running in its group
  core::forget_child_group(pid);
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
