#pragma once
// A scratch directory private to this test process: made with mkdtemp on first use (a pid in
// the name is not enough: CI containers replay the same pid sequence and a /tmp left by an
// earlier run, or by a wrapped pid, then holds a FIFO or file the test means to create), and
// removed when the process exits normally. A case may remove it when done; the next call
// makes it again.
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace planck_test {

inline std::filesystem::path process_temp_dir(const std::string& prefix) {
  static const std::filesystem::path dir = [&] {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
    static std::filesystem::path made;
    made = pattern;
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(made, ec);
    });
    return std::filesystem::path(pattern);
  }();
  std::filesystem::create_directories(dir);  // again if a test case removed it when done
  return dir;
}

}  // namespace planck_test
