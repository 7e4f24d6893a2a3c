#include "core/base/input_file.h"

#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <utility>

namespace planck::core {
namespace {

std::atomic<bool> g_stdin_taken{false};

std::string mib(std::int64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

std::string input_name(const std::string& path) { return path == "-" ? "standard input" : path; }

InputFile::InputFile(InputFile&& other) noexcept { *this = std::move(other); }

InputFile& InputFile::operator=(InputFile&& other) noexcept {
  if (this != &other) {
    if (file_ && owned_) std::fclose(file_);
    file_ = std::exchange(other.file_, nullptr);
    owned_ = std::exchange(other.owned_, false);
    path_ = std::move(other.path_);
    pending_ = std::move(other.pending_);
    total_ = other.total_;
    limit_ = other.limit_;
    limit_name_ = std::move(other.limit_name_);
  }
  return *this;
}

InputFile::~InputFile() {
  if (file_ && owned_) std::fclose(file_);
}

std::string size_limit_text(std::int64_t max_bytes, const std::string& what) {
  return std::to_string(max_bytes) + " bytes (" + mib(max_bytes) + "), the limit on " + what;
}

Status InputFile::too_large() const {
  return Status::error("cannot read " + input_name(path_) + ": more than " + size_limit_text(limit_, limit_name_));
}

void InputFile::set_limit(std::int64_t max_bytes, std::string what) {
  limit_ = max_bytes;
  limit_name_ = std::move(what);
}

Status InputFile::open(const std::string& path) {
  path_ = path;
  const std::string name = input_name(path);
  if (path.empty()) return Status::error("cannot read an input with an empty path");
  if (path == "-") {
    if (g_stdin_taken.exchange(true)) {
      return Status::error("cannot read standard input ('-') twice: it can be read once; save it to a file");
    }
    file_ = stdin;
    owned_ = false;
    return Status::ok();
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Status::error("cannot read " + name + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return Status::error("cannot read " + name + ": it is a directory, not a file");
  if (S_ISREG(st.st_mode) && st.st_size > limit_) {
    return Status::error("cannot read " + name + ": " + std::to_string(st.st_size) + " bytes is more than " +
                         size_limit_text(limit_, limit_name_));
  }
  file_ = std::fopen(path.c_str(), "rb");
  if (!file_) return Status::error("cannot read " + name + ": " + std::strerror(errno));
  owned_ = true;
  return Status::ok();
}

Result<std::size_t> InputFile::read(char* buf, std::size_t n) {
  if (!pending_.empty()) {
    const std::size_t k = n < pending_.size() ? n : pending_.size();
    std::memcpy(buf, pending_.data(), k);
    pending_.erase(0, k);
    return k;
  }
  if (!file_) return std::size_t{0};
  const std::int64_t room = limit_ + 1 - total_;  // one byte past the cap proves it is exceeded
  if (room <= 0) return too_large();
  const std::size_t want = static_cast<std::int64_t>(n) < room ? n : static_cast<std::size_t>(room);
  const std::size_t got = std::fread(buf, 1, want, file_);
  if (got == 0 && std::ferror(file_)) {
    return Status::error("cannot read " + input_name(path_) + ": read error after " + std::to_string(total_) +
                         " bytes");
  }
  total_ += static_cast<std::int64_t>(got);
  if (total_ > limit_) return too_large();
  return got;
}

Result<std::string_view> InputFile::peek(std::size_t n) {
  while (pending_.size() < n && file_) {
    char buf[4096];
    const std::size_t want = n - pending_.size() < sizeof buf ? n - pending_.size() : sizeof buf;
    std::string kept = std::move(pending_);
    pending_.clear();
    auto got = read(buf, want);
    pending_ = std::move(kept);
    if (!got) return got.status();
    if (*got == 0) break;
    pending_.append(buf, *got);
  }
  return std::string_view(pending_).substr(0, n < pending_.size() ? n : pending_.size());
}

Result<std::string> InputFile::read_rest() {
  std::string out;
  char buf[1 << 16];
  for (;;) {
    auto got = read(buf, sizeof buf);
    if (!got) return got.status();
    if (*got == 0) return out;
    out.append(buf, *got);
  }
}

Result<std::string> read_input(const std::string& path) { return read_input(path, kMaxInputBytes, "any one planck input"); }

Result<std::string> read_input(const std::string& path, std::int64_t max_bytes, const std::string& what) {
  InputFile in;
  in.set_limit(max_bytes, what);
  Status st = in.open(path);
  if (!st) return st;
  return in.read_rest();
}

}  // namespace planck::core
