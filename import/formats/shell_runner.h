#pragma once
// The interpreter behind run_shell (shell_script.h), shared by shell_script.cc (words, variables,
// conditions) and shell_follow.cc (sourced files, scripts run by bash/sbatch, `bash -c` text).

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/base/status.h"
#include "import/formats/shell_lexer.h"
#include "import/formats/shell_script.h"

namespace planck::import::shell {

using Fields = std::vector<ShellField>;

// A hostile script can double a variable per line; expansion stops well before memory does.
constexpr std::size_t kMaxFieldBytes = std::size_t{1} << 20;
constexpr std::size_t kMaxFields = std::size_t{1} << 16;
constexpr int kMaxDepth = 32;

inline std::string join_fields(const Fields& f) {
  std::string out;
  for (std::size_t i = 0; i < f.size(); ++i) out += (i ? " " : "") + f[i].text;
  return out;
}

inline bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n'; }

// The text of a $( ) or $(( )) planck did not run stands for one word, as its output would in
// bash (a count, a name, a path): its blanks are held as kUnsplit while the script runs, so a later
// unquoted ${VAR} holding it does not split it into words ("--query-gpu=name" read as a flag), and
// are given back by resplit() once the script has run.
constexpr char kUnsplit = '\x1f';
inline std::string unsplit(std::string text) {
  for (char& c : text) c = is_blank(c) ? kUnsplit : c;
  return text;
}
inline void resplit(std::string& text) {
  for (char& c : text) c = c == kUnsplit ? ' ' : c;
}

// A launch script's loops run a few configs; a hostile one nests them. Body runs stop here.
constexpr std::size_t kMaxLoopRuns = 4096;

// The i-th word of a statement when it is one unquoted literal (a keyword), else nullopt.
inline std::optional<std::string> keyword(const std::vector<const ShellToken*>& stmt, std::size_t i = 0) {
  if (i >= stmt.size() || stmt[i]->kind != ShellToken::kWord) return std::nullopt;
  return stmt[i]->word.literal();
}

// A shell variable name: a letter or '_', then letters, digits and '_'.
inline bool is_name(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// The variables `text` may read: names after `$` / in `${...}`, and every identifier when it is an
// arithmetic text (an over-approximation). $#, $@, $* and $1... add "@" and the character itself.
void names_read(const std::string& text, bool arithmetic, std::set<std::string>& out);

class Runner {
 public:
  explicit Runner(std::string path) : path_(std::move(path)) {}
  // The variables Slurm sets in a batch job from the script's #SBATCH lines (SLURM_NNODES,
  // SLURM_JOB_NUM_NODES, SLURM_NTASKS_PER_NODE, SLURM_GPUS_PER_NODE); the script may reassign them.
  Runner(std::string path, std::string_view text);
  core::Status run(const std::vector<ShellToken>& tokens);
  ShellScript script;
  std::set<std::string> pinned;  // set on the command line: the script's assignments leave them

 private:
  struct Frame {
    bool parent_active, active, taken;
  };
  bool active() const { return frames_.empty() || frames_.back().active; }
  core::Status error(int line, const std::string& what) const {
    return core::Status::error(path_ + ":" + std::to_string(line) + ": " + what);
  }
  using Statement = std::vector<const ShellToken*>;
  core::Status statement(std::vector<const ShellToken*> toks);
  // shell_control.cc (loops in shell_loops.cc, conditions in shell_condition.cc): statements
  // [begin, end), running `for NAME in WORDS; do ... done` once per
  // word; and the `read` builtin on a here-string (true when `cmd` was a read, now done; a
  // `<<< WORD` of any other command is dropped from it).
  core::Status run_statements(const std::vector<Statement>& stmts, std::size_t begin, std::size_t end);
  bool read_builtin(ShellCommand& cmd);
  // `shift [N]` (the positional parameters move down), `break` and `continue` (the innermost
  // loop stops, or goes on with its next turn): true when `cmd` was one of them, now done.
  bool builtin(const ShellCommand& cmd);
  // The body of a loop, statements [begin, end): false when a `break` ended the loop.
  core::Result<bool> loop_body(const std::vector<Statement>& stmts, std::size_t begin, std::size_t end);
  core::Status run_while(const std::vector<Statement>& stmts, std::size_t at, std::size_t done);
  core::Status run_arith_for(const std::vector<Statement>& stmts, std::size_t at, std::size_t done);
  core::Status run_loop(const std::string& what, int line,
                        const std::function<core::Result<std::optional<bool>>()>& test,
                        const std::function<core::Result<bool>()>& step, const std::set<std::string>& reads,
                        const std::vector<Statement>& stmts, std::size_t begin, std::size_t done);
  core::Status run_case(const std::vector<Statement>& stmts, std::size_t at, std::size_t esac);
  // $(echo ARGS) and $(echo ARGS | tr '\n' ' ' | sed 's/  \+/ /g'): the words echo prints, pipes
  // that only squeeze blanks applied; nullopt for anything else.
  // and `[ TEST ] && echo A || echo B` once TEST is decided.
  std::optional<std::string> echo_output(const std::string& text, int line);
  std::optional<std::string> echo_words(const std::vector<const ShellToken*>& toks);  // `echo WORDS`
  core::Status command(const std::vector<const ShellToken*>& toks);
  // `(( EXPR ))`: its value, assignments made; nullopt (and said) when planck cannot evaluate it.
  core::Result<std::optional<std::int64_t>> arith_command(const ShellToken& t);
  core::Result<std::optional<bool>> condition(const std::vector<const ShellToken*>& toks, int line);
  // A statement's commands joined by && / || (and | / &): a command after && runs unless the list
  // so far is known false, after || unless known true (bash(1) "Lists"). A test command's status
  // is what condition() decides; an assignment's is true; any other command's is unknown.
  core::Status and_or_list(const std::vector<const ShellToken*>& toks);
  std::optional<bool> test(const Fields& args);
  core::Result<Fields> expand(const ShellWord& w, bool split);
  core::Result<Fields> param(const std::string& expr, int line, bool* multi);
  core::Result<std::string> inline_word(const std::string& text, int line);

  // shell_follow.cc: what a launch script runs besides plain commands.
  // `source F` / `. F`, `bash|sh|sbatch F.sh`, and `bash -c "TEXT"` (also inside srun/sbatch
  // lines): F is read (relative to the script) and TEXT run in place, sharing the variables.
  // True when `cmd` was one of these and has been followed.
  core::Result<bool> follow(const ShellCommand& cmd);
  core::Status run_file(const std::string& file, int line, bool sourced);
  core::Status run_text(const std::string& text, int line);
  // $(pwd), `pwd`, $(dirname $0), $(cd "$(dirname "$0")/.." && pwd) and the like: paths worked out
  // from the directory of the script being read; nullopt for any other command.
  std::optional<std::string> substitute(const std::string& text);
  std::string directory() const;

  std::string path_;
  std::vector<Frame> frames_;
  int depth_ = 0;
  std::vector<std::string> loop_;  // NAME=VALUE of each enclosing for loop, for ShellCommand::loop
  std::size_t loop_runs_ = 0;
  std::size_t unrun_ = 0;  // $( ) kept as text by expand(), so far
  enum class Jump { kNone, kBreak, kContinue, kExit };
  Jump jump_ = Jump::kNone;
  // `exit` ends the script only where bash surely runs it: outside any if / case / loop, not
  // behind an && / || planck cannot decide or in a pipeline (decided_), and not in a file sourced
  // or text evaluated from such a place (nested_). Elsewhere it is read past, as before.
  bool decided_ = true;
  bool nested_ = false;
  int brace_depth_ = 0;  // `{ ... }` groups (a function's body, `cmd || { ...; exit 1; }`) open
  int loop_depth_ = 0;  // a `break` / `continue` ran: statements up to its loop's end are skipped
};

}  // namespace planck::import::shell
