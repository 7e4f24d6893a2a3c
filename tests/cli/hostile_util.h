#pragma once
// Shared by the hostile-input CLI tests (hostile_input_test.cc, hostile_readers_test.cc): the
// planck binary run through a shell with a time limit, and inputs generated into a temporary
// folder of this test process.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/run_command.h"
#include "tests/temp_dir.h"

namespace planck_test::hostile {

// Built with AddressSanitizer (scripts/sanitize.sh builds planck and the tests together): its
// shadow memory and quarantine (256 MB) and -O0 make memory and time figures meaningless, so
// those assertions are skipped and time limits widened; the answers are still checked.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif
// A time limit in seconds, ten times longer under the sanitizers.
inline double seconds_limit(double s) { return kSanitized ? 10 * s : s; }

namespace fs = std::filesystem;
using Run = planck_test::CommandRun;

inline const std::string kBin = PLANCK_BIN;

// `cmd` with stderr merged into stdout.
inline Run sh(const std::string& cmd) { return planck_test::run_command(cmd + " 2>&1"); }
// planck ARGS, stopped after 120 s (exit 124) so a hang is a failure, not a stuck suite.
inline Run planck(const std::string& args) { return sh("timeout 120 " + kBin + " " + args); }

inline fs::path temp_dir() {
  fs::path d = planck_test::process_temp_dir("planck-hostile-test");
  fs::create_directories(d);
  return d;
}

// Writes `text` to temp_dir()/name (folders created) and returns the path.
inline fs::path write(const std::string& name, const std::string& text) {
  const fs::path p = temp_dir() / name;
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

inline bool has(const Run& r, const std::string& needle) { return r.out.find(needle) != std::string::npos; }

inline std::string repeat(const std::string& s, int n) {
  std::string out;
  out.reserve(s.size() * static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

}  // namespace planck_test::hostile
