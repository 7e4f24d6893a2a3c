// The planck binary: CLI11 subcommands registered by cli/cmd_*.cc.

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>
#include <memory>
#include <string>
#include <cstring>
#include <vector>

#include "cli/command.h"
#include "core/base/atomic_file.h"
#include "exec/launch/launch.h"
#include "planck/config.h"

namespace planck::cli {
namespace {

struct Entry {
  std::string name;
  std::string description;
  CommandSetup setup;
};

std::vector<Entry>& registry() {
  static std::vector<Entry> entries;
  return entries;
}

// The order `planck --help` lists commands in (docs/verify.md#exit-codes); unknown ones follow alphabetically.
int command_rank(const std::string& name) {
  static const char* kOrder[] = {"verify", "groups", "observe", "simulate", "enumerate",
                                 "render", "report", "diff",  "import", "exec", "calibrate"};
  for (int i = 0; i < static_cast<int>(std::size(kOrder)); ++i) {
    if (name == kOrder[i]) return i;
  }
  return 100;
}

// `planck --help` lists one line per command: its registered summary, not the long description
// that `planck COMMAND --help` prints.
class CommandListFormatter : public CLI::Formatter {
 public:
  explicit CommandListFormatter(std::map<std::string, std::string> summaries) : summaries_(std::move(summaries)) {}
  std::string make_subcommand(const CLI::App* sub) const override {
    auto it = summaries_.find(sub->get_name());
    std::stringstream out;
    CLI::detail::format_help(out, sub->get_display_name(true),
                             it != summaries_.end() ? it->second : sub->get_description(), get_column_width());
    return out.str();
  }

 private:
  std::map<std::string, std::string> summaries_;
};

}  // namespace

CommandRegistrar::CommandRegistrar(const char* name, const char* description, CommandSetup setup) {
  registry().push_back({name, description, setup});
}

bool write_output(const std::string& path, const std::string& content) {
  return write_output(path, std::vector<std::string_view>{content});
}

bool write_output(const std::string& path, const std::vector<std::string_view>& pieces) {
  core::Status st = core::write_output_file(path, pieces, force_output());
  if (!st) {
    print_error(st.message());
    return false;
  }
  return true;
}

bool write_document_and_table(const std::string& path, const std::string& document, const std::string& table) {
  std::FILE* side = core::output_is_stdout(path) ? stderr : stdout;
  std::fwrite(table.data(), 1, table.size(), side);
  std::fflush(side);
  return write_output(path, document);
}

bool& force_output() {
  static bool force = false;
  return force;
}

// Every -o is checked before the command does any work (docs/files.md): every other argument
// value is an input that the output must not be. Under a launcher only world rank 0 writes, so
// only it checks (another host may lack the directory).
bool output_ok_before_work(const CLI::App& sub) {
  const CLI::Option* out = sub.get_option_no_throw("--output");
  if (!out || out->count() == 0 || exec::launcher_rank() != 0) return true;
  const std::string path = out->as<std::string>();
  std::vector<std::string> inputs;
  for (const CLI::Option* opt : sub.get_options()) {
    if (opt == out) continue;
    for (const std::string& v : opt->results()) inputs.push_back(v);
  }
  core::Status st = core::check_output(path, inputs, force_output());
  if (!st) print_error(st.message());
  return st.is_ok();
}

void print_error(const std::string& message) { std::fprintf(stderr, "planck: %s\n", message.c_str()); }

// `code`, or exit 2 when what was written to standard output did not all arrive (a full disk,
// /dev/full, a closed pipe): --help, --version and every command's stdout report alike.
int stdout_checked(int code) {
  errno = 0;
  std::cout.flush();
  if (!std::cout.good() || std::fflush(stdout) != 0 || std::ferror(stdout)) {
    // A command that failed already said why (its own write error included).
    if (code != kExitCannotRun) {
      print_error(std::string("cannot write to standard output: ") + (errno ? std::strerror(errno) : "write error"));
    }
    return kExitCannotRun;
  }
  return code;
}

}  // namespace planck::cli

int main(int argc, char** argv) {
  using planck::cli::Action;
  // Under a launcher, stdout and stderr are pipes to it that it closes while it ends a failed job:
  // a late write then fails with EPIPE (and is reported) instead of killing the rank by SIGPIPE,
  // which mpirun would pass on as exit 141 rather than the rank's own exit code (docs/exec.md).
  if (planck::exec::under_launcher()) std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{
      "planck: verify, simulate, render and run distributed-training layouts (DDP, FSDP, HSDP, "
      "TP, PP, CP, EP) before a GPU is spent.\nSee README.md and docs/ for the plan format."};
  app.set_version_flag("--version", std::string("planck ") + PLANCK_VERSION);
  app.require_subcommand(1);
  app.fallthrough(false);

  auto entries = planck::cli::registry();
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    int ra = planck::cli::command_rank(a.name), rb = planck::cli::command_rank(b.name);
    return ra != rb ? ra < rb : a.name < b.name;
  });
  std::vector<std::unique_ptr<Action>> actions;
  std::vector<CLI::App*> subs;
  for (const auto& e : entries) {
    CLI::App* sub = app.add_subcommand(e.name, e.description);
    actions.push_back(std::make_unique<Action>());
    e.setup(*sub, *actions.back());
    if (sub->get_option_no_throw("--output")) {
      sub->add_flag("--force", planck::cli::force_output(),
                    "let -o replace a read-only file (it keeps its mode); see docs/files.md");
    }
    subs.push_back(sub);
  }
  std::map<std::string, std::string> summaries;
  for (const auto& e : entries) summaries[e.name] = e.description;
  // Set after the subcommands exist, so their own --help keeps the default formatter.
  app.formatter(std::make_shared<planck::cli::CommandListFormatter>(std::move(summaries)));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return planck::cli::stdout_checked(app.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    return planck::cli::stdout_checked(app.exit(e));
  } catch (const CLI::CallForVersion& e) {
    return planck::cli::stdout_checked(app.exit(e));
  } catch (const CLI::ParseError& e) {
    // Bad usage is exit 2 (docs/verify.md#exit-codes); CLI11 prints the reason and a --help pointer.
    app.exit(e);
    return planck::cli::kExitCannotRun;
  }
  for (std::size_t i = 0; i < subs.size(); ++i) {
    if (subs[i]->parsed() && *actions[i]) {
      try {
        if (!planck::cli::output_ok_before_work(*subs[i])) return planck::cli::kExitCannotRun;
        return planck::cli::stdout_checked((*actions[i])());
      } catch (const std::exception& e) {
        planck::cli::print_error(std::string("internal error: ") + e.what());
        return planck::cli::kExitCannotRun;
      }
    }
  }
  planck::cli::print_error("no command given; see planck --help");
  return planck::cli::kExitCannotRun;
}
