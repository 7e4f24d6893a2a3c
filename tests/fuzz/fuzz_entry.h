#pragma once
// One fuzz target = one function `int fuzz_<name>(const uint8_t*, size_t)`. Under libFuzzer
// (PLANCK_LIBFUZZER, set by tests/fuzz/CMakeLists.txt when PLANCK_FUZZ=ON) each target file also
// defines LLVMFuzzerTestOneInput; otherwise fuzz_replay.cc links every target into one program
// that runs each over its seed corpus, so the corpora run in the ordinary ctest pass.
#include <cstddef>
#include <cstdint>
#include <string_view>

#define PLANCK_FUZZ_TARGET(name)                                              \
  int fuzz_##name(const std::uint8_t* data, std::size_t size);                \
  PLANCK_FUZZ_ENTRY(name)                                                     \
  int fuzz_##name(const std::uint8_t* data, std::size_t size)

#ifdef PLANCK_LIBFUZZER
#define PLANCK_FUZZ_ENTRY(name)                                                         \
  extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) { \
    return fuzz_##name(data, size);                                                     \
  }
#else
#define PLANCK_FUZZ_ENTRY(name)
#endif

namespace planck::fuzz {
inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}
}  // namespace planck::fuzz
