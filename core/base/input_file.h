#pragma once
// Reading what a user names on the command line: one function for every reader (plans, observed
// logs and JSON, framework configs, topology profiles, `--model FILE`), so every input has the
// same size cap and `-` means standard input everywhere (docs/verify.md, "Inputs").

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "core/base/status.h"

namespace planck::core {

// The most bytes any one input may hold: 512 MiB (536870912). A larger file, or an endless
// stream such as /dev/zero, stops with an error that states this limit.
inline constexpr std::int64_t kMaxInputBytes = std::int64_t{512} << 20;
// The most bytes of one framework config (torchtitan TOML or registry and its __init__.py,
// Lingua YAML, Megatron script, DeepSpeed JSON): 4 MiB, 200 times the largest real one in
// tests/data. Their parsers hold 10-35 bytes per input byte (yaml-cpp's nodes the most), so
// this keeps an import within a few hundred MB (docs/files.md, "Limits").
inline constexpr std::int64_t kMaxConfigBytes = std::int64_t{4} << 20;
inline constexpr const char* kConfigLimitName = "a framework config (real ones are under 100 KB)";

// An input opened for reading: a file, a device or FIFO, or standard input for "-". Counts the
// bytes read and fails once more than kMaxInputBytes arrive. Move-only; closes itself.
class InputFile {
 public:
  InputFile() = default;
  InputFile(InputFile&& other) noexcept;
  InputFile& operator=(InputFile&& other) noexcept;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile();

  // Errors name the path and the reason: missing, a directory, unreadable, larger than the cap,
  // or "-" given a second time (standard input can be read once).
  Status open(const std::string& path);
  // A lower cap than kMaxInputBytes for this input, named in the message ("a framework config").
  void set_limit(std::int64_t max_bytes, std::string what);
  // Reads up to `n` bytes into `buf`; 0 at the end. An error on a read failure or past the cap.
  Result<std::size_t> read(char* buf, std::size_t n);
  // The first bytes (up to `n`) without consuming them: later reads return them again.
  Result<std::string_view> peek(std::size_t n);
  // Everything not yet read.
  Result<std::string> read_rest();
  const std::string& path() const { return path_; }

 private:
  Status too_large() const;

  std::FILE* file_ = nullptr;
  bool owned_ = false;
  std::string path_;
  std::string pending_;  // peeked bytes not yet handed out
  std::int64_t total_ = 0;
  std::int64_t limit_ = kMaxInputBytes;
  std::string limit_name_ = "any one planck input";
};

// The whole input at `path` ("-" = standard input), at most kMaxInputBytes, or `max_bytes`
// named as `what` ("a framework config").
Result<std::string> read_input(const std::string& path);
Result<std::string> read_input(const std::string& path, std::int64_t max_bytes, const std::string& what);

// "more than N bytes (M MiB), the limit on WHAT": the words of every size refusal.
std::string size_limit_text(std::int64_t max_bytes, const std::string& what);

// How messages name an input: "standard input" for "-", else the path.
std::string input_name(const std::string& path);

}  // namespace planck::core
