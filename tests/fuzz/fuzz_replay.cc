// Runs every fuzz target over its seed corpus (tests/fuzz/corpus/<target>/) with the ordinary
// compiler, so the corpora and the targets never rot between fuzzing sessions. A crash is a
// crash of this program; an empty or missing corpus folder is a failure.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_entry.h"

int fuzz_plan_load(const std::uint8_t* data, std::size_t size);
int fuzz_rank_program(const std::uint8_t* data, std::size_t size);
int fuzz_nccl_log(const std::uint8_t* data, std::size_t size);
int fuzz_flight_recorder(const std::uint8_t* data, std::size_t size);
int fuzz_import(const std::uint8_t* data, std::size_t size);
int fuzz_flight_recorder_json(const std::uint8_t* data, std::size_t size);
int fuzz_registry(const std::uint8_t* data, std::size_t size);

namespace {
struct Target {
  const char* name;
  int (*fn)(const std::uint8_t*, std::size_t);
};
constexpr Target kTargets[] = {
    {"plan_load", fuzz_plan_load},   {"rank_program", fuzz_rank_program},
    {"nccl_log", fuzz_nccl_log},     {"flight_recorder", fuzz_flight_recorder},
    {"import", fuzz_import},         {"flight_recorder_json", fuzz_flight_recorder_json},
    {"registry", fuzz_registry},
};
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_replay CORPUS_ROOT (holding one folder per target)\n");
    return 2;
  }
  namespace fs = std::filesystem;
  int failures = 0;
  for (const Target& t : kTargets) {
    fs::path dir = fs::path(argv[1]) / t.name;
    std::error_code ec;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.is_regular_file()) files.push_back(e.path());
    if (ec || files.empty()) {
      std::fprintf(stderr, "%s: no seeds in %s\n", t.name, dir.c_str());
      ++failures;
      continue;
    }
    for (const fs::path& f : files) {
      std::ifstream in(f, std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      t.fn(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    }
    std::printf("%s: %zu seeds ran\n", t.name, files.size());
  }
  return failures == 0 ? 0 : 1;
}
