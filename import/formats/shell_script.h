#pragma once
// A small, side-effect-free interpreter for the bash subset Megatron-LM launch scripts use:
// VAR=value, VAR=( ... ) / VAR+=( ... ) arrays, ${VAR:-default} and friends, ${ARR[@]},
// $(( arithmetic )) and (( )) with assignments, quoting and word splitting, line continuations,
// comments, if/elif/else/fi over [ ] / [[ ]] tests, `for NAME in WORDS` loops (the body once per
// word), `for (( ; ; ))`, `while` / `until` with shift, break and continue, `printf -v`, the
// $(cd "$(dirname "$0")" && pwd) path idioms, `read` on a here-string, `source`/`.` of other
// files, scripts run with bash/sh/sbatch and `bash -c "TEXT"` (srun lines; read in place).
// Nothing is executed: commands are recorded with their expanded words so the importer can find
// the `pretrain_*.py` launch line, and commented-out flags are kept for `--explain`. Conditions it
// cannot decide are assumed true and reported.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/status.h"

namespace planck::import {

struct ShellField {
  std::string text;
  int line = 0;  // where the word (or the array element) that produced it was written
  bool operator==(const ShellField&) const = default;
};

struct ShellCommand {
  std::vector<ShellField> words;
  int line = 0;
  std::string loop;  // "CONFIG=2,4,4,1,True" inside `for CONFIG in ...` ("" outside loops)
};

struct ShellScript {
  std::map<std::string, std::vector<ShellField>> vars;  // final values; a scalar is one field
  std::vector<ShellCommand> commands;                   // in order, only those on taken branches
  std::vector<ShellField> commented_flags;              // "--flag value" text found in comments
  std::vector<std::string> assumptions;                 // conditions assumed true, unknown $( )
  std::vector<std::string> followed;                    // files sourced or run, `bash -c` text read
  std::vector<std::string> warnings;                    // a sourced file that is not there
  std::vector<std::string> functions;  // shell functions defined: their bodies read once, not run at each call
  // Every variable an expansion or arithmetic on a taken branch looked up, set or not ($NAME,
  // ${NAME...}, a bare NAME in $(( ))): a --set the script never reads changes nothing.
  std::set<std::string> read;
  // Variables whose last assignment was an array (NAME=( ... )): no process's environment holds
  // one (bash exports no arrays).
  std::set<std::string> arrays;
  // A launcher that runs the command given to it on every node and says the world itself (NGC
  // Base Command's `bcprun -n NODES -p PER_NODE -c TEXT`): its figures, and the launcher's name.
  std::optional<std::int64_t> launcher_nodes, launcher_per_node;
  std::string launcher;
};

// Runs `text` (a bash script or a plain list of flags). Errors name path:line (unterminated
// quote, runaway expansion).
// `presets` (--set NAME=VALUE, --script-args): variables and positional parameters ("1", "2"...)
// set before the script runs; the script's own assignments to them are ignored (the command line wins).
core::Result<ShellScript> run_shell(std::string_view text, const std::string& path,
                                    const std::vector<std::pair<std::string, std::string>>& presets = {});

class PlanBuilder;
// unknown-key for each --set NAME=VALUE in `sets` naming a shell variable (positional parameters
// and dotted Megatron-Bridge overrides left out) that `script` never read on a branch it took: the
// value changed nothing planck reads.
void warn_unread_sets(const ShellScript& script, const std::vector<std::pair<std::string, std::string>>& sets,
                      PlanBuilder& b);

// Integer value of a variable, if it is set and holds an integer.
std::optional<std::int64_t> shell_int(const ShellScript& script, const std::string& name);

// `text` cut at its newlines (a last line without one included).
std::vector<std::string_view> split_lines(std::string_view text);

// What a Slurm batch script's `#SBATCH` lines ask for: --nodes / -N, --ntasks-per-node and
// --gpus-per-node, each with where it is written ("#SBATCH --nodes (line 3)").
struct SbatchRequest {
  std::optional<std::int64_t> nodes, tasks_per_node, gpus_per_node;
  std::vector<std::string> from;
};
SbatchRequest sbatch_request(const std::vector<std::string_view>& lines);

// The directory a script at `path` sits in, as given: "." for a bare file name ("run.sh"), whose
// parent_path() is empty and which std::filesystem::absolute refuses.
std::string script_directory(const std::string& path);

}  // namespace planck::import
