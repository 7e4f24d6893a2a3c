#include "core/base/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/base/input_file.h"

namespace planck::core {
namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

Result<std::optional<std::string>> read_regular_file(const std::string& path, std::int64_t max_bytes,
                                                     const std::string& what) {
  const Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    return Status::error("cannot read " + path + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Status::error("cannot read " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) {
    return Status::error("cannot read " + path + ": it is " + kind_of(st.st_mode) + ", not a regular file");
  }
  if (st.st_size > max_bytes) {
    return Status::error("cannot read " + path + ": " + std::to_string(st.st_size) + " bytes is more than " +
                         size_limit_text(max_bytes, what));
  }
  std::string out;
  out.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::error("cannot read " + path + ": " + std::strerror(errno));
    if (n == 0) return std::optional<std::string>(std::move(out));
    out.append(buf, static_cast<std::size_t>(n));
    // A file that grows while read (a log being written) stops at the cap like any input.
    if (static_cast<std::int64_t>(out.size()) > max_bytes) {
      return Status::error("cannot read " + path + ": more than " + size_limit_text(max_bytes, what));
    }
  }
}

}  // namespace planck::core
