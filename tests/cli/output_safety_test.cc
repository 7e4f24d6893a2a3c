// -o never loses what is at the path (docs/files.md): each case from issue 22's probes, under a
// temporary directory. Devices, FIFOs and /dev/stdout are written through; symlinks followed;
// the input, a read-only file and a missing directory refused (exit 2) with what was there kept.

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <cerrno>
#include <cstring>
#include <string>

#include "tests/run_command.h"
#include "tests/temp_dir.h"

namespace fs = std::filesystem;

namespace {

using Run = planck_test::CommandRun;

Run planck(const std::string& args) { return planck_test::run_command(std::string(PLANCK_BIN) + " " + args + " 2>&1"); }

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh directory holding x.json, a copy of plans/ddp-8.json.
fs::path fresh(const std::string& name) {
  fs::path d = planck_test::process_temp_dir("planck-output-test") / name;
  fs::remove_all(d);
  fs::create_directories(d);
  fs::copy_file(std::string(PLANCK_PLANS_DIR) + "/ddp-8.json", d / "x.json");
  return d;
}

std::string q(const fs::path& p) {
  std::string s = "'";
  s += p.string();
  s += "'";
  return s;
}

}  // namespace

TEST_CASE("output -o /dev/stdout through a pipe reaches the pipe, the device link stays") {
  fs::path d = fresh("stdout");
  Run r = planck_test::run_command(std::string(PLANCK_BIN) + " verify " + q(d / "x.json") + " -o /dev/stdout | cat");
  CHECK(r.code == 0);
  CHECK(r.out.find("x.json: ok") != std::string::npos);
  CHECK(fs::is_symlink("/dev/stdout"));
}

TEST_CASE("output to /dev/full is a write error (exit 2) and the device stays a device") {
  fs::path d = fresh("full");
  Run r = planck("verify " + q(d / "x.json") + " -o /dev/full");
  CHECK(r.code == 2);
  CHECK(r.out.find("cannot write /dev/full") != std::string::npos);
  CHECK(fs::is_character_file("/dev/full"));
  Run s = planck_test::run_command(std::string(PLANCK_BIN) + " verify " + q(d / "x.json") + " > /dev/full 2>&1");
  CHECK(s.code == 2);  // stdout itself full: no silent exit 0
}

TEST_CASE("output through a symlink writes its target and keeps the link") {
  fs::path d = fresh("symlink");
  fs::create_symlink("target.txt", d / "link.txt");  // dangling: the target is created
  CHECK(planck("verify " + q(d / "x.json") + " -o " + q(d / "link.txt")).code == 0);
  CHECK(fs::is_symlink(d / "link.txt"));
  CHECK(slurp(d / "target.txt").find("x.json: ok") != std::string::npos);
}

TEST_CASE("output into a FIFO is written through to its reader and the FIFO stays") {
  fs::path d = fresh("fifo");
  REQUIRE_MESSAGE(::mkfifo((d / "pipe").c_str(), 0600) == 0, std::strerror(errno));
  Run r = planck_test::run_command("(cat " + q(d / "pipe") + " > " + q(d / "got.txt") + " &) ; " + PLANCK_BIN +
                                   " verify " + q(d / "x.json") + " -o " + q(d / "pipe") + " 2>&1; sleep 0.2");
  CHECK(r.code == 0);
  CHECK(fs::is_fifo(d / "pipe"));
  CHECK(slurp(d / "got.txt").find("x.json: ok") != std::string::npos);
}

TEST_CASE("output onto a mknod character device is written through, never replaced") {
  fs::path d = fresh("mknod");
  if (::mknod((d / "null").c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
    MESSAGE("skipped: cannot mknod here (needs CAP_MKNOD); /dev/full above covers devices");
    return;
  }
  CHECK(planck("verify " + q(d / "x.json") + " -o " + q(d / "null")).code == 0);
  CHECK(fs::is_character_file(d / "null"));
}

TEST_CASE("output that is the same file as the input is refused before any work, the input kept") {
  fs::path d = fresh("same");
  const std::string before = slurp(d / "x.json");
  fs::create_symlink("x.json", d / "alias.json");
  for (const std::string cmd : {"verify", "simulate", "groups"}) {
    Run r = planck(cmd + " " + q(d / "x.json") + " -o " + q(d / "x.json"));
    CAPTURE(cmd);
    CHECK(r.code == 2);
    CHECK(r.out.find("same file as the input") != std::string::npos);
    CHECK(slurp(d / "x.json") == before);
  }
  CHECK(planck("verify " + q(d / "alias.json") + " -o " + q(d / "x.json")).code == 2);
  CHECK(planck_test::run_command(std::string(PLANCK_BIN) + " verify - -o " + q(d / "x.json") + " < " + q(d / "x.json")).code == 2);
  const fs::path log = fs::path(PLANCK_TEST_DATA_DIR) / "observed/synth/nccl-2.21.log";
  fs::copy_file(log, d / "l.log");
  CHECK(planck("observe " + q(d / "l.log") + " -o " + q(d / "l.log")).code == 2);
  CHECK(slurp(d / "l.log") == slurp(log));
  CHECK(slurp(d / "x.json") == before);
}

TEST_CASE("output into a missing directory or onto a directory is refused (exit 2)") {
  fs::path d = fresh("dirs");
  Run r = planck("verify " + q(d / "x.json") + " -o " + q(d / "missing" / "r.json"));
  CHECK(r.code == 2);
  CHECK(r.out.find("does not exist") != std::string::npos);
  CHECK(planck("verify " + q(d / "x.json") + " -o " + q(d)).code == 2);
}

TEST_CASE("a read-only output is refused unless --force, and a replaced file keeps its mode") {
  fs::path d = fresh("modes");
  std::ofstream(d / "ro.txt") << "keep";
  fs::permissions(d / "ro.txt", fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  Run r = planck("verify " + q(d / "x.json") + " -o " + q(d / "ro.txt"));
  CHECK(r.code == 2);
  CHECK(r.out.find("read-only (mode 0444)") != std::string::npos);
  CHECK(slurp(d / "ro.txt") == "keep");
  CHECK(planck("verify " + q(d / "x.json") + " --force -o " + q(d / "ro.txt")).code == 0);
  CHECK(slurp(d / "ro.txt").find("x.json: ok") != std::string::npos);
  CHECK((fs::status(d / "ro.txt").permissions() & fs::perms::all) ==
        (fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read));
  std::ofstream(d / "private.txt") << "old";
  fs::permissions(d / "private.txt", fs::perms::owner_read | fs::perms::owner_write);
  CHECK(planck("verify " + q(d / "x.json") + " -o " + q(d / "private.txt")).code == 0);
  CHECK((fs::status(d / "private.txt").permissions() & fs::perms::all) ==
        (fs::perms::owner_read | fs::perms::owner_write));
}

TEST_CASE("as a non-root user: a file or directory it may not write is refused, nothing replaced") {
  if (::geteuid() != 0 || ::access("/usr/bin/setpriv", X_OK) != 0) {
    MESSAGE("skipped: dropping privileges needs root and setpriv; the mode-bit cases above still ran");
    return;
  }
  fs::path d = fresh("nonroot");
  // The process folder comes from mkdtemp (0700): let the other user reach the case folder.
  fs::permissions(d.parent_path(), fs::perms::group_exec | fs::perms::others_exec, fs::perm_options::add);
  fs::permissions(d, fs::perms::all);  // anyone may create files here: only the file itself says no
  fs::create_directories(d / "locked");
  fs::permissions(d / "locked", fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                    fs::perms::others_read | fs::perms::others_exec);
  std::ofstream(d / "roots.txt") << "root's";  // 0644 owned by root
  fs::permissions(d / "x.json", fs::perms::all);
  const std::string as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups " + std::string(PLANCK_BIN);
  Run theirs = planck_test::run_command(as_nobody + " verify " + q(d / "x.json") + " -o " + q(d / "roots.txt") + " 2>&1");
  CHECK(theirs.code == 2);
  CHECK(theirs.out.find("not writable by you") != std::string::npos);
  CHECK(slurp(d / "roots.txt") == "root's");
  Run locked = planck_test::run_command(as_nobody + " verify " + q(d / "x.json") + " -o " + q(d / "locked" / "r.txt") + " 2>&1");
  CHECK(locked.code == 2);
  CHECK(locked.out.find("is not writable") != std::string::npos);
  CHECK_FALSE(fs::exists(d / "locked" / "r.txt"));
}
