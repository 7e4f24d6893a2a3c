// core::read_input / InputFile: one size cap for every input, stated in the message; "-" is
// standard input and can be read once.

#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/base/input_file.h"
#include "tests/temp_dir.h"

namespace fs = std::filesystem;
using planck::core::InputFile;
using planck::core::kMaxInputBytes;
using planck::core::read_input;

namespace {

fs::path temp_file(const std::string& name) {
  fs::path d = planck_test::process_temp_dir("planck-input-test");
  fs::create_directories(d);
  return d / name;
}

}  // namespace

TEST_CASE("read_input returns a small file whole, peek does not consume") {
  const fs::path p = temp_file("small.txt");
  std::ofstream(p, std::ios::binary) << "hello\nworld\n";
  auto all = read_input(p.string());
  REQUIRE(all.is_ok());
  CHECK(*all == "hello\nworld\n");
  InputFile in;
  REQUIRE(in.open(p.string()).is_ok());
  auto head = in.peek(3);
  REQUIRE(head.is_ok());
  CHECK(*head == "hel");
  auto rest = in.read_rest();
  REQUIRE(rest.is_ok());
  CHECK(*rest == "hello\nworld\n");
}

TEST_CASE("read_input names the path and the reason for a missing file and a directory") {
  auto missing = read_input("/nonexistent/planck-input.json");
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.message().find("/nonexistent/planck-input.json") != std::string::npos);
  CHECK(missing.message().find("No such file") != std::string::npos);
  auto dir = read_input(fs::temp_directory_path().string());
  REQUIRE_FALSE(dir.is_ok());
  CHECK(dir.message().find("directory") != std::string::npos);
}

TEST_CASE("a regular file one byte over the cap is refused before reading, the size and the cap named") {
  const fs::path p = temp_file("sparse.bin");
  { std::ofstream(p, std::ios::binary).put('x'); }
  fs::resize_file(p, static_cast<std::uintmax_t>(kMaxInputBytes) + 1);  // sparse: costs no disk
  auto r = read_input(p.string());
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.message().find(std::to_string(kMaxInputBytes + 1)) != std::string::npos);
  CHECK(r.message().find("512 MiB") != std::string::npos);
  fs::remove(p);
}

TEST_CASE("an endless device stops at the cap: 512 MiB = 536870912 bytes") {
  CHECK(kMaxInputBytes == 536870912);  // 512 * 1024 * 1024
  InputFile in;
  REQUIRE(in.open("/dev/zero").is_ok());
  static char buf[1 << 20];  // streamed, as observe's line reader does: nothing kept
  std::int64_t total = 0;
  planck::core::Result<std::size_t> r = std::size_t{0};
  while ((r = in.read(buf, sizeof buf)).is_ok() && *r > 0) total += static_cast<std::int64_t>(*r);
  REQUIRE_FALSE(r.is_ok());
  CHECK(total == kMaxInputBytes);  // every byte up to the cap was delivered, none past it
  CHECK(r.message().find("/dev/zero") != std::string::npos);
  CHECK(r.message().find("536870912 bytes (512 MiB)") != std::string::npos);
}
