#pragma once
// Command registry for the planck binary. Each cli/cmd_<name>.cc registers one subcommand:
//
//   static int setup_render(CLI::App& app, planck::cli::Action& action) { ...options...;
//     action = [opts] { return run(opts); }; }
//   PLANCK_COMMAND(render, "mesh / communicator diagram through Graphviz", setup_render);
//
// main() parses, then runs the chosen command's action; its int is the exit code
// (0 ok, 1 rule/measurement failure, 2 could not run; docs/verify.md#exit-codes).

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace planck::cli {

using Action = std::function<int()>;
using CommandSetup = void (*)(CLI::App& app, Action& action);

struct CommandRegistrar {
  CommandRegistrar(const char* name, const char* description, CommandSetup setup);
};

// Exit codes.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFindings = 1;
inline constexpr int kExitCannotRun = 2;

// Writes `content` to `path` ("-" or "" = stdout) by core::write_output_file (docs/files.md:
// temporary file + rename for files, written through for devices and FIFOs; --force as given).
// On failure prints "planck: cannot write PATH: reason" to stderr and returns false.
bool write_output(const std::string& path, const std::string& content);
// The same for a text given in pieces, written in order (a large listing is never joined).
bool write_output(const std::string& path, const std::vector<std::string_view>& pieces);

// Writes a machine-readable `document` to `path` (as write_output) and the human `table` beside
// it: on stdout, or on stderr when the document itself goes to stdout. False when the document
// could not be written.
bool write_document_and_table(const std::string& path, const std::string& document, const std::string& table);

// --force, added by main() to every command with -o.
bool& force_output();

// Prints "planck: <message>" to stderr.
void print_error(const std::string& message);

}  // namespace planck::cli

#define PLANCK_COMMAND(name, description, setup) \
  static const ::planck::cli::CommandRegistrar planck_command_##name(#name, description, setup)
