// What a launch script hands to another shell: sourced files, scripts run by bash/sh/sbatch,
// and the text of `bash -c` / `sh -c` (NVIDIA's sbatch examples build the launch line in a
// string and run it through `srun ... bash -c "${TRAINING_CMD}"`; the SC21 scripts source
// CONFIG.sh and SBATCH.sh, which runs `sbatch SRUN.sh`). All of it is read, never run.

#include <algorithm>
#include <filesystem>
#include <set>

#include "core/base/input_file.h"
#include "import/formats/shell_arith.h"
#include "import/formats/shell_runner.h"

namespace planck::import::shell {

namespace {


std::string base_name(const std::string& word) {
  const std::size_t slash = word.rfind('/');
  return slash == std::string::npos ? word : word.substr(slash + 1);
}

bool is_shell(const std::string& word) {
  const std::string b = base_name(word);
  return b == "bash" || b == "sh" || b == "zsh" || b == "dash";
}

bool ends_with(const std::string& s, const char* suffix) {
  const std::string x(suffix);
  return s.size() > x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}

// dirname(1): the path without its last component ("." when there is none).
std::string parent_directory(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const std::size_t slash = p.rfind('/');
  if (slash == std::string::npos) return ".";
  p.resize(slash);
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p.empty() ? "/" : p;
}

void shift_lines(ShellWord& w, int by) {
  w.line += by;
}

}  // namespace

Runner::Runner(std::string path, std::string_view text) : path_(std::move(path)) {
  // Slurm's output environment variables (sbatch(1) "OUTPUT ENVIRONMENT VARIABLES").
  const SbatchRequest r = sbatch_request(split_lines(text));
  auto set = [&](const char* name, const std::optional<std::int64_t>& v) {
    if (v) script.vars[name] = {{std::to_string(*v), 0}};
  };
  set("SLURM_NNODES", r.nodes);
  set("SLURM_JOB_NUM_NODES", r.nodes);
  set("SLURM_NTASKS_PER_NODE", r.tasks_per_node);
  set("SLURM_GPUS_PER_NODE", r.gpus_per_node);
}

std::string Runner::directory() const {
  return std::filesystem::absolute(script_directory(path_)).string();
}

std::optional<std::string> Runner::substitute(const std::string& text) {
  // The idioms scripts use to find their own directory, run as bash would with the script's own
  // directory as the working directory: `pwd`, `dirname WORD`, `realpath WORD`, `readlink -f WORD`
  // and `cd [--] DIR [&>/dev/null] && pwd` ($0 and ${BASH_SOURCE[0]} are the script's path).
  // Anything else in the $( ) is not run.
  auto tokens = lex_shell(text, path_, nullptr);
  if (!tokens || depth_ >= kMaxDepth) return std::nullopt;
  std::vector<std::vector<const ShellToken*>> commands(1);
  for (const ShellToken& t : *tokens) {
    if (t.kind == ShellToken::kWord) {
      commands.back().push_back(&t);
    } else if ((t.kind == ShellToken::kOp && t.op == "&&") || t.kind == ShellToken::kSep) {
      if (!commands.back().empty()) commands.emplace_back();
    } else {
      return std::nullopt;
    }
  }
  static const std::set<std::string> kPathCommands = {"pwd", "cd", "dirname", "realpath", "readlink"};
  for (const auto& words : commands) {  // nothing expanded (nor warned of) for other commands
    if (words.empty()) continue;
    const auto head = words[0]->word.literal();
    if (!head || !kPathCommands.count(*head)) return std::nullopt;
  }
  std::filesystem::path cwd = directory();
  std::optional<std::string> out;
  for (const auto& words : commands) {
    if (words.empty()) continue;
    std::vector<std::string> argv;
    for (const ShellToken* w : words) {
      ++depth_;
      auto f = expand(w->word, true);
      --depth_;
      if (!f) return std::nullopt;
      for (const ShellField& field : *f) argv.push_back(field.text);
    }
    if (argv.empty()) return std::nullopt;
    const std::string head = argv[0];
    std::vector<std::string> operands;
    bool canonical = head == "realpath";  // readlink prints a link's target unless -f, -e or -m
    for (std::size_t k = 1; k < argv.size(); ++k) {
      const std::string& a = argv[k];
      const bool resolving = a == "-f" || a == "-e" || a == "-m";
      canonical = canonical || (head == "readlink" && resolving);
      if (a == "--" || (head == "pwd" && (a == "-P" || a == "-L")) ||
          ((head == "realpath" || head == "readlink") && (resolving || a == "-s" || a == "-q")))
        continue;
      operands.push_back(a);
    }
    for (const std::string& o : operands)
      if (o.find("$(") != std::string::npos) return std::nullopt;  // an operand planck could not work out
    auto resolve = [&](const std::string& p) {
      std::filesystem::path r = std::filesystem::path(p).is_absolute() ? std::filesystem::path(p) : cwd / p;
      std::string s = r.lexically_normal().string();
      while (s.size() > 1 && s.back() == '/') s.pop_back();
      return s;
    };
    if (head == "pwd" && operands.empty()) {
      out = resolve(".");
    } else if (head == "cd" && operands.size() == 1 && operands[0] != "-") {
      cwd = resolve(operands[0]);
    } else if (head == "dirname" && operands.size() == 1) {
      out = parent_directory(operands[0]);
    } else if (canonical && operands.size() == 1) {
      out = resolve(operands[0]);
    } else {
      return std::nullopt;
    }
  }
  return out;
}

core::Status Runner::run_file(const std::string& file, int line, bool sourced) {
  std::filesystem::path p(file);
  if (p.is_relative()) p = std::filesystem::path(directory()) / p;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(p, ec)) {
    // A placeholder such as `<megatron source code directory>` lexes as `source code ...`:
    // only a name that looks like a file is worth a warning.
    if (sourced && file.find_first_of("./") != std::string::npos)
      script.warnings.push_back(path_ + ":" + std::to_string(line) + ": sources " + file + ", which is not at " +
                                p.string() + ": settings made there are missing (copy " + base_name(file) +
                                " beside the script, or pass the script with it inlined)");
    else
      script.assumptions.push_back("line " + std::to_string(line) + ": runs " + file + ", not found at " + p.string());
    return core::Status::ok();
  }
  if (depth_ >= kMaxDepth) return error(line, "scripts nested deeper than " + std::to_string(kMaxDepth));
  auto text = core::read_input(p.string());
  if (!text) return text.status();
  std::vector<ShellComment> comments;
  auto tokens = lex_shell(*text, p.string(), &comments);
  if (!tokens) return tokens.status();
  script.followed.push_back("line " + std::to_string(line) + ": read " + p.string() +
                            (sourced ? " (sourced)" : " (run by the script; its variables shared)"));
  const std::string saved = path_;
  const auto saved_frames = std::move(frames_);
  const bool saved_nested = nested_;
  // An `exit` in the file ends the script (sourced) or the file (run) only where the line that
  // reads it surely runs.
  nested_ = nested_ || !saved_frames.empty() || loop_depth_ > 0 || !decided_ || brace_depth_ > 0;
  const int saved_braces = brace_depth_;
  brace_depth_ = 0;
  frames_.clear();
  path_ = p.string();
  ++depth_;
  core::Status st = run(*tokens);
  --depth_;
  path_ = saved;
  frames_ = saved_frames;
  nested_ = saved_nested;
  brace_depth_ = saved_braces;
  if (!sourced && jump_ == Jump::kExit) jump_ = Jump::kNone;  // `bash F`: F's exit ends F
  return st;
}

core::Status Runner::run_text(const std::string& text, int line) {
  if (depth_ >= kMaxDepth) return error(line, "`bash -c` nested deeper than " + std::to_string(kMaxDepth));
  auto tokens = lex_shell(text, path_, nullptr);
  if (!tokens) {
    // The text's own line numbers mean nothing to the user: name the line that runs it.
    std::string why = tokens.message();
    if (why.rfind(path_ + ":", 0) == 0) why = why.substr(why.find(": ", path_.size()) + 2);
    return error(line, "the command line this line hands to `bash -c` / `eval` does not parse (" + why +
                           ")" + (unrun_ > 0 ? "; it holds the text of a $( ) planck did not run" : "") +
                           ": pass the values with --set NAME=VALUE");
  }
  for (ShellToken& t : *tokens) {  // the text's own lines count from the line that runs it
    t.line += line - 1;
    shift_lines(t.word, line - 1);
    for (ShellWord& e : t.elements) shift_lines(e, line - 1);
  }
  script.followed.push_back("line " + std::to_string(line) + ": read the text given to `-c` or `eval` as a script");
  const auto saved_frames = std::move(frames_);
  const bool saved_nested = nested_;
  const int saved_braces = brace_depth_;
  nested_ = true;  // `bash -c`'s exit ends that shell, eval's the script: neither is followed
  frames_.clear();
  ++depth_;
  core::Status st = run(*tokens);
  --depth_;
  frames_ = saved_frames;
  nested_ = saved_nested;
  brace_depth_ = saved_braces;
  return st;
}

core::Result<bool> Runner::follow(const ShellCommand& cmd) {
  const auto& w = cmd.words;
  if (w.empty()) return false;
  if ((w[0].text == "source" || w[0].text == ".") && w.size() > 1) {
    if (auto st = run_file(w[1].text, cmd.line, true); !st) return st;
    return true;
  }
  // `eval WORDS`: bash joins the (expanded) words with spaces and runs the result as a command
  // line, its quotes, redirections and pipes parsed anew (ROCm's `eval $run_cmd`, `eval "$CMD"`).
  if (w[0].text == "eval" && w.size() > 1) {
    std::string text;
    for (std::size_t k = 1; k < w.size(); ++k) text += (k > 1 ? " " : "") + w[k].text;
    if (auto st = run_text(text, cmd.line); !st) return st;
    return true;
  }
  // NGC Base Command's `bcprun [-n|--nnodes N] [-p|--npernode P] [-e|--env K=V] -c|--cmd TEXT`
  // runs TEXT on P processes of each of N nodes (its --help; LLM360's k2 pre-training).
  if (base_name(w[0].text) == "bcprun") {
    for (std::size_t k = 1; k < w.size(); ++k) {
      std::string a = w[k].text, value;
      const std::size_t eq = a.find('=');
      const bool joined = a.rfind("--", 0) == 0 && eq != std::string::npos;  // --cmd=TEXT
      if (joined) {
        value = a.substr(eq + 1);
        a.resize(eq);
      } else if (k + 1 < w.size()) {
        value = w[k + 1].text;
      }
      if (a == "-n" || a == "--nnodes") script.launcher_nodes = parse_shell_int(value);
      if (a == "-p" || a == "--npernode") script.launcher_per_node = parse_shell_int(value);
      if ((a == "-c" || a == "--cmd") && (joined || k + 1 < w.size())) {
        script.launcher = "bcprun";
        if (auto st = run_text(value, cmd.line); !st) return st;
        return true;
      }
    }
  }
  // `... bash [-x] -c TEXT`, anywhere in the command (srun/sbatch/ssh in front).
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (!is_shell(w[i].text)) continue;
    for (std::size_t k = i + 1; k + 1 < w.size(); ++k) {
      const std::string& a = w[k].text;
      if (a.size() < 2 || a[0] != '-' || a[1] == '-') break;
      if (a.find('c') != std::string::npos) {
        if (auto st = run_text(w[k + 1].text, cmd.line); !st) return st;
        return true;
      }
    }
  }
  // `bash run.sh`, `sbatch [opts] run.sh`: the last word naming a .sh file.
  const std::string head = base_name(w[0].text);
  if (is_shell(w[0].text) || head == "sbatch" || head == "srun") {
    for (std::size_t k = w.size(); k-- > 1;) {
      if (ends_with(w[k].text, ".sh")) {
        if (auto st = run_file(w[k].text, cmd.line, false); !st) return st;
        return true;
      }
    }
  }
  return false;
}

}  // namespace planck::import::shell

namespace planck::import {

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> out;
  for (std::size_t pos = 0; pos <= text.size();) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    out.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

SbatchRequest sbatch_request(const std::vector<std::string_view>& lines) {
  // Every option of an `#SBATCH` line is read, as sbatch reads the line's words like its command
  // line (sbatch(1) "#SBATCH"): `#SBATCH --nodes=2 --exclusive --ntasks-per-node=4` states both.
  // Words that are no option (a template's `<SLURM OPTIONS>`) are passed over. A value is its
  // leading digits (`--nodes=2-4` asks for at least 2) after an optional GRES type
  // (`--gpus-per-node=h100:8`).
  SbatchRequest r;
  auto value = [](std::string_view v) -> std::optional<std::int64_t> {
    if (const std::size_t colon = v.rfind(':'); colon != std::string_view::npos) v.remove_prefix(colon + 1);
    std::size_t n = 0;
    while (n < v.size() && n < 9 && v[n] >= '0' && v[n] <= '9') ++n;
    if (n == 0 || (n < v.size() && v[n] >= '0' && v[n] <= '9')) return std::nullopt;
    return std::stoll(std::string(v.substr(0, n)));
  };
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    if (line.substr(0, 7) != "#SBATCH" || (line.size() > 7 && line[7] != ' ' && line[7] != '\t')) continue;
    std::vector<std::string_view> words;
    for (std::size_t p = 7; p < line.size();) {
      while (p < line.size() && (line[p] == ' ' || line[p] == '\t' || line[p] == '\r')) ++p;
      const std::size_t e = std::min(line.find_first_of(" \t\r", p), line.size());
      if (e > p) words.push_back(line.substr(p, e - p));
      p = e;
    }
    for (std::size_t k = 0; k < words.size(); ++k) {
      std::string_view w = words[k], opt = w, arg;
      if (const std::size_t eq = w.find('='); eq != std::string_view::npos && w.substr(0, 2) == "--") {
        opt = w.substr(0, eq);
        arg = w.substr(eq + 1);
      } else if (w.size() > 2 && w.substr(0, 2) == "-N") {
        opt = "-N";
        arg = w.substr(2);
      } else if (k + 1 < words.size()) {
        arg = words[k + 1];
      }
      std::optional<std::int64_t>* field = opt == "--nodes" || opt == "-N" ? &r.nodes
                                           : opt == "--ntasks-per-node"  ? &r.tasks_per_node
                                           : opt == "--gpus-per-node"    ? &r.gpus_per_node
                                                                         : nullptr;
      const auto v = field ? value(arg) : std::nullopt;
      if (!v) continue;
      *field = *v;
      r.from.push_back("#SBATCH " + std::string(opt) + " (line " + std::to_string(i + 1) + ")");
    }
  }
  return r;
}

std::string script_directory(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

}  // namespace planck::import
