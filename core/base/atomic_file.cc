#include "core/base/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/base/signal_cleanup.h"

namespace planck::core {
namespace {

enum class Kind { kDescriptor, kAbsent, kRegular, kThrough };

struct Target {
  Kind kind = Kind::kAbsent;
  std::string path;  // after symlinks
  int fd = -1;       // kDescriptor
  struct stat st {};
};

std::string fail_text(const std::string& path, const std::string& why) { return "cannot write " + path + ": " + why; }

// /dev/stdout, /dev/fd/N, /proc/self/fd/N: the descriptor N; -1 for any other path.
int descriptor_of(const std::string& path) {
  if (path.empty() || path == "-" || path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    const std::string p = prefix;
    if (path.size() > p.size() && path.compare(0, p.size(), p) == 0 &&
        path.find_first_not_of("0123456789", p.size()) == std::string::npos && path.size() - p.size() < 9) {
      return std::stoi(path.substr(p.size()));
    }
  }
  return -1;
}

std::string dir_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string octal_mode(mode_t m) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m & 07777));
  return buf;
}

Status writable_dir(const std::string& shown, const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return Status::error(fail_text(shown, "directory " + dir + " does not exist"));
  if (!S_ISDIR(st.st_mode)) return Status::error(fail_text(shown, dir + " is not a directory"));
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return Status::error(fail_text(shown, "directory " + dir + " is not writable (" + std::strerror(errno) + ")"));
  }
  return Status::ok();
}

Result<Target> resolve(const std::string& path, bool force) {
  Target t;
  t.fd = descriptor_of(path);
  if (t.fd >= 0) {
    t.kind = Kind::kDescriptor;
    if (::fstat(t.fd, &t.st) != 0) return Status::error(fail_text(path, std::strerror(errno)));
    return t;
  }
  t.path = path;
  for (int hops = 0;; ++hops) {  // follow symlinks by hand so a dangling one names its target
    if (hops == 40) return Status::error(fail_text(path, "too many levels of symbolic links"));
    if (::lstat(t.path.c_str(), &t.st) != 0) {
      if (errno != ENOENT) return Status::error(fail_text(path, std::strerror(errno)));
      t.kind = Kind::kAbsent;
      Status st = writable_dir(path, dir_of(t.path));
      if (!st) return st;
      return t;
    }
    if (!S_ISLNK(t.st.st_mode)) break;
    std::string link(4096, '\0');
    const ssize_t n = ::readlink(t.path.c_str(), link.data(), link.size());
    if (n < 0) return Status::error(fail_text(path, std::strerror(errno)));
    link.resize(static_cast<std::size_t>(n));
    t.path = link[0] == '/' ? link : dir_of(t.path) + "/" + link;
  }
  const std::string shown = t.path == path ? path : path + " (-> " + t.path + ")";
  if (S_ISDIR(t.st.st_mode)) return Status::error(fail_text(shown, "it is a directory; give a file name"));
  if (S_ISSOCK(t.st.st_mode)) return Status::error(fail_text(shown, "it is a socket"));
  if (!S_ISREG(t.st.st_mode)) {
    t.kind = Kind::kThrough;
    return t;
  }
  t.kind = Kind::kRegular;
  if (!force && (t.st.st_mode & 0222) == 0) {
    return Status::error(fail_text(shown, "it is read-only (mode " + octal_mode(t.st.st_mode) +
                                              "); pass --force to replace it, or write elsewhere"));
  }
  if (!force && ::access(t.path.c_str(), W_OK) != 0) {
    return Status::error(fail_text(shown, std::string("not writable by you (") + std::strerror(errno) +
                                              "); pass --force to replace it, or write elsewhere"));
  }
  Status st = writable_dir(shown, dir_of(t.path));
  if (!st) return st;
  return t;
}

Status write_all(int fd, std::string_view content, const std::string& shown) {
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::error(fail_text(shown, n < 0 ? std::strerror(errno) : "wrote nothing"));
    done += static_cast<std::size_t>(n);
  }
  return Status::ok();
}

Status write_all(int fd, const std::vector<std::string_view>& pieces, const std::string& shown) {
  for (std::string_view piece : pieces) {
    Status st = write_all(fd, piece, shown);
    if (!st) return st;
  }
  return Status::ok();
}

Status write_through(const Target& t, const std::string& shown, const std::vector<std::string_view>& content) {
  const int fd = ::open(t.path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return Status::error(fail_text(shown, std::strerror(errno)));
  Status st = write_all(fd, content, shown);
  if (::close(fd) != 0 && st) st = Status::error(fail_text(shown, std::strerror(errno)));
  return st;
}

Status write_by_rename(const Target& t, const std::string& shown, const std::vector<std::string_view>& content) {
  const std::string tmp = t.path + ".tmp." + std::to_string(::getpid());
  // 0666 less the umask for a new file; a replaced file keeps its own bits (fchmod below).
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) return Status::error(fail_text(shown, std::strerror(errno)));
  // SIGTERM / SIGINT before the rename removes the temporary file (core/base/signal_cleanup.h).
  remember_temp_file(tmp.c_str());
  Status st = write_all(fd, content, shown);
  if (st && t.kind == Kind::kRegular && ::fchmod(fd, t.st.st_mode & 07777) != 0) {
    st = Status::error(fail_text(shown, std::string("cannot keep its mode: ") + std::strerror(errno)));
  }
  if (st && ::fsync(fd) != 0 && errno != EINVAL) st = Status::error(fail_text(shown, std::strerror(errno)));
  if (::close(fd) != 0 && st) st = Status::error(fail_text(shown, std::strerror(errno)));
  if (st && std::rename(tmp.c_str(), t.path.c_str()) != 0) st = Status::error(fail_text(shown, std::strerror(errno)));
  if (!st) ::unlink(tmp.c_str());
  forget_temp_file(tmp.c_str());
  return st;
}

bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

}  // namespace

bool output_is_stdout(const std::string& path) { return descriptor_of(path) == 1; }

Status check_output(const std::string& path, const std::vector<std::string>& inputs, bool force) {
  auto t = resolve(path, force);
  if (!t) return t.status();
  if (t->kind == Kind::kAbsent || t->kind == Kind::kDescriptor) return Status::ok();
  for (const std::string& in : inputs) {
    struct stat st {};
    const bool known = in == "-" ? ::fstat(0, &st) == 0 : (!in.empty() && ::stat(in.c_str(), &st) == 0);
    if (known && same_file(st, t->st)) {
      return Status::error(fail_text(path, "it is the same file as the input " + (in == "-" ? "(standard input)" : in) +
                                               "; writing it would destroy the input, so write elsewhere"));
    }
  }
  return Status::ok();
}

Status write_output_file(const std::string& path, const std::string& content, bool force) {
  return write_output_file(path, std::vector<std::string_view>{content}, force);
}

Status write_output_file(const std::string& path, const std::vector<std::string_view>& content, bool force) {
  auto t = resolve(path, force);
  if (!t) return t.status();
  const std::string shown = t->path.empty() || t->path == path ? (path.empty() ? "-" : path) : path + " (-> " + t->path + ")";
  switch (t->kind) {
    case Kind::kDescriptor:
      std::fflush(stdout);  // what stdio already holds goes first
      std::fflush(stderr);
      return write_all(t->fd, content, output_is_stdout(path) ? "standard output" : shown);
    case Kind::kThrough: return write_through(*t, shown, content);
    case Kind::kAbsent:
    case Kind::kRegular: return write_by_rename(*t, shown, content);
  }
  return Status::ok();
}

}  // namespace planck::core
