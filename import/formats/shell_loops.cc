// Loops and builtins of the shell interpreter (see shell_script.h): `while` / `until`,
// `for (( INIT; COND; STEP ))`, the turns they run (stopped when a turn changes nothing their test
// reads), and the builtins `shift`, `break`, `continue` and `printf -v`.

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "import/formats/shell_arith.h"
#include "import/formats/shell_runner.h"

namespace planck::import::shell {

// A loop's condition or step: an over-approximation is harmless there, it only keeps a loop going
// that changed one of them; a --set is never called unread when it might be read.
void names_read(const std::string& text, bool arithmetic, std::set<std::string>& out) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool dollar = text[i] == '$';
    std::size_t k = dollar ? i + 1 : i;
    if (dollar && k < text.size() && text[k] == '{') ++k;
    if (dollar && k < text.size() && text[k] == '#' && k + 1 < text.size() && text[k + 1] != '}') ++k;
    if (dollar && k < text.size() && std::string_view("#@*0123456789").find(text[k]) != std::string_view::npos) {
      out.insert(std::string(1, text[k]));
      out.insert("@");  // $# and $1 move with shift
      continue;
    }
    if (!dollar && !(arithmetic && (i == 0 || !(std::isalnum(static_cast<unsigned char>(text[i - 1])) ||
                                                 text[i - 1] == '_'))))
      continue;
    std::size_t e = k;
    while (e < text.size() && (std::isalnum(static_cast<unsigned char>(text[e])) || text[e] == '_')) ++e;
    if (e > k && !std::isdigit(static_cast<unsigned char>(text[k]))) out.insert(text.substr(k, e - k));
    if (e > i) i = e - 1;
  }
}

namespace {

// printf(1)'s FORMAT over ARGS as bash's builtin prints it: %s, %d / %i, %%, and the escapes \n \t
// \\; the format is reused while arguments remain. nullopt for any other conversion (widths,
// %f, %x, ...), which planck does not evaluate.
std::optional<std::string> printf_format(const std::string& format, const std::vector<std::string>& args) {
  std::string out;
  std::size_t next = 0;
  do {
    const std::size_t first = next;
    for (std::size_t i = 0; i < format.size(); ++i) {
      const char c = format[i];
      if (c == '\\' && i + 1 < format.size()) {
        const char e = format[++i];
        out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
      } else if (c != '%') {
        out += c;
      } else if (i + 1 < format.size() && format[i + 1] == '%') {
        out += '%';
        ++i;
      } else if (i + 1 < format.size() && (format[i + 1] == 's' || format[i + 1] == 'd' || format[i + 1] == 'i')) {
        const std::string arg = next < args.size() ? args[next] : "";
        ++next;
        if (format[i + 1] != 's') {
          auto v = parse_shell_int(arg.empty() ? "0" : arg);
          if (!v) return std::nullopt;
          out += std::to_string(*v);
        } else {
          out += arg;
        }
        ++i;
      } else {
        return std::nullopt;
      }
    }
    if (next == first) break;  // a format without conversions prints once
  } while (next < args.size());
  return out;
}

}  // namespace

core::Result<bool> Runner::loop_body(const std::vector<Statement>& stmts, std::size_t begin, std::size_t end) {
  const std::size_t frames = frames_.size();
  ++loop_depth_;
  auto st = run_statements(stmts, begin, end);
  --loop_depth_;
  if (!st) return st;
  frames_.resize(frames);  // a `break` inside `if ... fi` skipped the `fi`
  const bool go_on = jump_ != Jump::kBreak;
  jump_ = Jump::kNone;
  return go_on;
}

// `while COND; do ... done` / `until COND; ...`: the body runs while COND holds (until: fails), as
// bash runs it.
core::Status Runner::run_while(const std::vector<Statement>& stmts, std::size_t at, std::size_t done) {
  const Statement& head = stmts[at];
  const bool until = keyword(head) == "until";
  const std::vector<const ShellToken*> cond(head.begin() + 1, head.end());
  auto test = [&]() -> core::Result<std::optional<bool>> {
    auto c = condition(cond, head.front()->line);
    if (!c || !c->has_value()) return c;
    return std::optional<bool>(**c != until);
  };
  std::set<std::string> reads;
  for (const ShellToken* t : cond) {
    for (const ShellSegment& seg : t->word.segs) {
      if (seg.kind == ShellSegment::kParam) names_read("${" + seg.text + "}", false, reads);
      if (seg.kind == ShellSegment::kArith) names_read(seg.text, true, reads);
      if (seg.kind == ShellSegment::kCmdSub) names_read(seg.text, false, reads);
    }
  }
  return run_loop(until ? "until" : "while", head.front()->line, test, [] { return core::Result<bool>(true); },
                  reads, stmts, at + 1, done);
}

// `for (( INIT; COND; STEP )); do ... done`, C's loop in bash's arithmetic (an empty COND is true).
core::Status Runner::run_arith_for(const std::vector<Statement>& stmts, std::size_t at, std::size_t done) {
  const ShellToken& t = *stmts[at][1];
  std::vector<std::string> parts(1);
  for (char c : t.word.segs[0].text) {
    if (c == ';')
      parts.emplace_back();
    else
      parts.back() += c;
  }
  auto blank = [](const std::string& p) { return p.find_first_not_of(" \t") == std::string::npos; };
  auto eval = [&](const std::string& p) -> core::Result<std::optional<std::int64_t>> {
    if (blank(p)) return std::optional<std::int64_t>(1);
    ShellToken part = t;
    part.word.segs[0].text = p;
    return arith_command(part);
  };
  if (parts.size() != 3) {
    script.assumptions.push_back("line " + std::to_string(t.line) + ": `for ((" + t.word.segs[0].text +
                                 "))` is not INIT; COND; STEP: its body was read once");
    return loop_body(stmts, at + 1, done).status();
  }
  if (active()) {
    if (auto init = eval(parts[0]); !init) return init.status();
  }
  auto test = [&]() -> core::Result<std::optional<bool>> {
    auto c = eval(parts[1]);
    if (!c) return c.status();
    return c->has_value() ? std::optional<bool>(**c != 0) : std::nullopt;
  };
  auto step = [&]() -> core::Result<bool> {  // false: STEP cannot be evaluated, so the loop's turns are unknown
    auto v = eval(parts[2]);
    if (!v) return v.status();
    return v->has_value();
  };
  std::set<std::string> reads;
  names_read(parts[1] + ";" + parts[2], true, reads);
  return run_loop("for ((...))", t.line, test, step, reads, stmts, at + 1, done);
}

// The turns of a loop: the body while `test` holds, `step` after each. A test planck cannot decide,
// or one still true after a turn that changed no variable (`while true` left by a break planck
// cannot decide, or a retry loop), reads the body once and says so.
core::Status Runner::run_loop(const std::string& what, int line,
                              const std::function<core::Result<std::optional<bool>>()>& test,
                              const std::function<core::Result<bool>()>& step, const std::set<std::string>& reads,
                              const std::vector<Statement>& stmts, std::size_t begin, std::size_t done) {
  // What the loop's test reads, cheaply: each variable's field count and first and last fields
  // (a turn that changed a watched variable in its middle only is taken for no progress: read once, said).
  auto watched = [&] {
    std::vector<std::string> out;
    for (const std::string& name : reads) {
      auto it = script.vars.find(name);
      if (it == script.vars.end()) {
        out.emplace_back("\x01");
      } else {
        out.push_back(std::to_string(it->second.size()));
        if (!it->second.empty()) out.push_back(it->second.front().text + "\x02" + it->second.back().text);
      }
    }
    return out;
  };
  if (!active()) return run_statements(stmts, begin, done);  // inside a branch not taken: nothing runs
  for (;;) {
    auto c = test();
    if (!c) return c.status();
    if (c->has_value() && !**c) return core::Status::ok();
    if (++loop_runs_ > kMaxLoopRuns)
      return error(line, "loops run their bodies more than " + std::to_string(kMaxLoopRuns) + " times");
    const auto before = watched();
    auto go_on = loop_body(stmts, begin, done);
    if (!go_on) return go_on.status();
    if (!*go_on) return core::Status::ok();
    if (!c->has_value()) {
      script.assumptions.push_back("line " + std::to_string(line) + ": the `" + what + "` loop's body was read once");
      return core::Status::ok();
    }
    auto stepped = step();
    if (!stepped) return stepped.status();
    if (!*stepped) {
      script.assumptions.push_back("line " + std::to_string(line) + ": the `" + what +
                                   "` loop's step cannot be evaluated: its body was read once");
      return core::Status::ok();
    }
    if (watched() == before) {
      script.assumptions.push_back("line " + std::to_string(line) + ": the `" + what +
                                   "` condition still holds after a turn that changed no variable it reads (a loop "
                                   "left by `break` or `exit`, or one that runs until killed): its body was read once");
      return core::Status::ok();
    }
  }
}

bool Runner::builtin(const ShellCommand& cmd) {
  const std::string& head = cmd.words.front().text;
  if (head == "break" || head == "continue") {
    if (loop_depth_ == 0) return false;
    jump_ = head == "break" ? Jump::kBreak : Jump::kContinue;
    return true;
  }
  if (head == "exit") {
    if (!decided_ || nested_ || loop_depth_ > 0 || !frames_.empty() || brace_depth_ > 0) return true;
    jump_ = Jump::kExit;
    script.assumptions.push_back("line " + std::to_string(cmd.line) + ": `exit` ends the script here, as in bash; "
                                 "what follows is not read");
    return true;
  }
  if (head == "printf" && cmd.words.size() > 3 && cmd.words[1].text == "-v") {
    const std::string& name = cmd.words[2].text;
    std::vector<std::string> args;
    for (std::size_t k = 4; k < cmd.words.size(); ++k) args.push_back(cmd.words[k].text);
    auto out = printf_format(cmd.words[3].text, args);
    if (!out) {
      script.assumptions.push_back("line " + std::to_string(cmd.line) + ": `printf -v " + name +
                                   "` uses a conversion planck does not evaluate; " + name + " is left unknown");
      out = "$(printf " + cmd.words[3].text + " ...)";
    }
    if (is_name(name) && !pinned.count(name)) script.vars[name] = Fields{{*out, cmd.line}};
    return true;
  }
  if (head != "shift") return false;
  std::int64_t n = 1;
  if (cmd.words.size() > 1) {
    auto v = parse_shell_int(cmd.words[1].text);
    if (!v || *v < 0) return true;  // bash: "shift count out of range", nothing moves
    n = *v;
  }
  Fields& all = script.vars["@"];
  if (static_cast<std::size_t>(n) > all.size()) return true;  // bash fails the same way
  for (std::size_t k = 1; k <= all.size(); ++k) script.vars.erase(std::to_string(k));
  all.erase(all.begin(), all.begin() + n);
  for (std::size_t k = 0; k < all.size(); ++k) script.vars[std::to_string(k + 1)] = Fields{all[k]};
  script.vars["#"] = Fields{{std::to_string(all.size()), cmd.line}};
  return true;
}

}  // namespace planck::import::shell
