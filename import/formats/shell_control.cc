// Compound commands and builtins of the shell interpreter that need more than one statement or
// the variables' values: `for NAME in WORDS; do ... done` (its body run once per word, as bash
// does) and `read` on a here-string (`IFS=',' read -r TP PP EP <<< "$CONFIG"`, the way
// Megatron-Bridge's example slurm scripts take a parallelism config apart).

#include <fnmatch.h>

#include <algorithm>
#include <functional>
#include <cctype>
#include <optional>
#include <set>
#include <string_view>
#include <string>
#include <vector>

#include "import/formats/shell_arith.h"
#include "import/formats/shell_runner.h"

namespace planck::import::shell {

namespace {

// A launch script's loops run a few configs; a hostile one nests them. Body runs stop here.
constexpr std::size_t kMaxLoopRuns = 4096;

std::optional<std::string> keyword(const std::vector<const ShellToken*>& stmt, std::size_t i = 0) {
  if (i >= stmt.size() || stmt[i]->kind != ShellToken::kWord) return std::nullopt;
  return stmt[i]->word.literal();
}

// The first keyword of a statement after the ones statement() drops (do, then, else, {).
std::optional<std::string> lead(const std::vector<const ShellToken*>& stmt) {
  std::size_t i = 0;
  for (auto kw = keyword(stmt, i); kw && (*kw == "do" || *kw == "then" || *kw == "else" || *kw == "{");
       kw = keyword(stmt, ++i)) {
  }
  return keyword(stmt, i);
}

bool is_name(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// bash's `read` field splitting of one line (POSIX "Field Splitting", with the read builtin's rule
// that the last of `names` takes the rest of the line; names == 0: every field, for `read -a`):
// IFS whitespace is trimmed and collapses, each other IFS character ends one field.
std::vector<std::string> split_read(const std::string& line, const std::string& ifs, std::size_t names) {
  auto in_ifs = [&](char c) { return ifs.find(c) != std::string::npos; };
  auto ifs_blank = [&](char c) { return in_ifs(c) && is_blank(c); };
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < line.size() && ifs_blank(line[pos])) ++pos;
  while (pos < line.size() && (names == 0 || out.size() < names)) {
    if (names != 0 && out.size() + 1 == names) {
      std::size_t end = line.size();
      while (end > pos && ifs_blank(line[end - 1])) --end;
      out.push_back(line.substr(pos, end - pos));
      break;
    }
    std::size_t q = pos;
    while (q < line.size() && !in_ifs(line[q])) ++q;
    out.push_back(line.substr(pos, q - pos));
    pos = q;
    while (pos < line.size() && ifs_blank(line[pos])) ++pos;
    if (pos < line.size() && in_ifs(line[pos])) ++pos;  // one non-blank delimiter
    while (pos < line.size() && ifs_blank(line[pos])) ++pos;
  }
  if (names != 0) out.resize(names);
  return out;
}

// The variables a loop's condition or step may read: names after `$` / in `${...}` and every
// identifier of an arithmetic text (an over-approximation is harmless: it only keeps a loop going
// that changed one of them).
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

// The `done` closing the loop whose header is stmts[at]: loops nest (for / while / until ... done).
// `end` when there is none.
std::size_t matching_done(const std::vector<std::vector<const ShellToken*>>& stmts, std::size_t at, std::size_t end) {
  std::size_t done = at + 1;
  for (int depth = 1; done < end; ++done) {
    const auto kw = lead(stmts[done]);
    if (kw == "for" || kw == "while" || kw == "until") ++depth;
    if (kw == "done" && --depth == 0) break;
  }
  return done;
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

core::Status Runner::run_statements(const std::vector<Statement>& stmts, std::size_t begin, std::size_t end) {
  for (std::size_t i = begin; i < end && jump_ == Jump::kNone; ++i) {
    const Statement& s = stmts[i];
    if (keyword(s) == "case" && keyword(s, 2) == "in") {
      std::size_t esac = i + 1;
      for (int depth = 1; esac < end; ++esac) {
        const auto kw = lead(stmts[esac]);
        if (kw == "case") ++depth;
        if (kw == "esac" && --depth == 0) break;
      }
      if (esac < end) {
        if (auto st = run_case(stmts, i, esac); !st) return st;
        if (auto st = statement(stmts[esac]); !st) return st;  // `esac` and whatever follows it
        i = esac;
        continue;
      }
    }
    const bool arith_for = keyword(s) == "for" && s.size() == 2 && s[1]->kind == ShellToken::kArith;
    if (keyword(s) == "while" || keyword(s) == "until" || arith_for) {
      const std::size_t done = matching_done(stmts, i, end);
      if (done < end) {
        if (auto st = arith_for ? run_arith_for(stmts, i, done) : run_while(stmts, i, done); !st) return st;
        if (auto st = statement(stmts[done]); !st) return st;  // `done` and whatever follows it
        i = done;
        continue;
      }
    }
    const auto name = keyword(s, 1);
    if (keyword(s) != "for" || !name || !is_name(*name) || keyword(s, 2) != "in") {
      if (auto st = statement(s); !st) return st;
      continue;
    }
    const std::size_t done = matching_done(stmts, i, end);
    if (done >= end) {  // no `done`: the loop line is skipped and the rest read once, as before
      if (auto st = statement(s); !st) return st;
      continue;
    }
    const int line = s.front()->line;
    Fields words;
    const std::size_t unrun = unrun_;
    for (std::size_t k = 3; k < s.size(); ++k) {
      if (s[k]->kind != ShellToken::kWord) continue;
      auto f = expand(s[k]->word, true);
      if (!f) return f.status();
      words.insert(words.end(), f->begin(), f->end());
    }
    const bool unknown = unrun_ != unrun;
    if (!active() || unknown) {
      if (unknown) {
        script.assumptions.push_back("line " + std::to_string(line) + ": `for " + *name +
                                     " in ...` loops over a command's output planck does not run; its body is "
                                     "read once with " + *name + " unset");
      }
      if (auto st = loop_body(stmts, i + 1, done); !st) return st.status();
    } else {
      for (const ShellField& w : words) {
        if (++loop_runs_ > kMaxLoopRuns) {
          return error(line, "loops run their bodies more than " + std::to_string(kMaxLoopRuns) + " times");
        }
        if (!pinned.count(*name)) script.vars[*name] = Fields{{w.text, line}};
        loop_.push_back(*name + "=" + w.text);
        auto st = loop_body(stmts, i + 1, done);
        loop_.pop_back();
        if (!st) return st.status();
        if (!*st) break;
      }
    }
    if (auto st = statement(stmts[done]); !st) return st;  // `done` and whatever follows it
    i = done;
  }
  return core::Status::ok();
}

// `case WORD in PATTERN[|PATTERN]) BODY ;; ... esac` (statements [at, esac)): the body of the
// first clause whose pattern matches WORD (fnmatch, as bash's case does) runs; the others do not.
core::Status Runner::run_case(const std::vector<Statement>& stmts, std::size_t at, std::size_t esac) {
  const Statement& head = stmts[at];
  if (!active()) return run_statements(stmts, at + 1, esac);  // inside a branch not taken: nothing runs
  auto subject = expand(head[1]->word, false);
  if (!subject) return subject.status();
  const std::string word = join_fields(*subject);
  // The clauses' statements; the header's own statement may hold the first clause (a one-line case).
  std::vector<Statement> items;
  if (head.size() > 3) items.emplace_back(head.begin() + 3, head.end());
  for (std::size_t k = at + 1; k < esac; ++k) items.push_back(stmts[k]);
  bool matched = false;
  for (std::size_t k = 0; k < items.size() && !matched; ++k) {
    const Statement& item = items[k];
    const auto close = std::find_if(item.begin(), item.end(), [](const ShellToken* t) {
      return t->kind == ShellToken::kOp && t->op == ")";
    });
    if (close == item.end()) continue;  // a blank line, or `;;`
    for (auto p = item.begin(); p != close && !matched; ++p) {
      if ((*p)->kind != ShellToken::kWord) continue;  // the `|` between patterns
      auto pattern = expand((*p)->word, false);
      if (!pattern) return pattern.status();
      matched = fnmatch(join_fields(*pattern).c_str(), word.c_str(), 0) == 0;
    }
    if (!matched) continue;
    std::vector<Statement> body;
    if (close + 1 != item.end()) body.emplace_back(close + 1, item.end());
    for (std::size_t b = k + 1; b < items.size(); ++b) {
      const Statement& next = items[b];
      if (next.size() == 1 && next[0]->kind == ShellToken::kOp && next[0]->op == ";;") break;
      body.push_back(next);
    }
    if (auto st = run_statements(body, 0, body.size()); !st) return st;
  }
  return core::Status::ok();
}

bool Runner::read_builtin(ShellCommand& cmd) {
  const auto here = std::find_if(cmd.words.begin(), cmd.words.end(), [](const ShellField& f) { return f.text == "<<<"; });
  std::optional<std::string> input;
  if (here != cmd.words.end() && here + 1 != cmd.words.end()) input = (here + 1)->text;
  if (here != cmd.words.end()) cmd.words.erase(here, std::min(here + 2, cmd.words.end()));
  if (cmd.words.empty() || cmd.words.front().text != "read") return false;
  std::vector<std::string> names;
  std::string array;
  for (std::size_t k = 1; k < cmd.words.size(); ++k) {
    const std::string& w = cmd.words[k].text;
    if (w.size() < 2 || w[0] != '-') {
      names.push_back(w);
      continue;
    }
    // An option cluster (-r, -ra ARR, -p PROMPT): a, p, d, n, N, t, u take a value, the rest
    // of the cluster or the next word.
    for (std::size_t c = 1; c < w.size(); ++c) {
      if (std::string("apdnNtu").find(w[c]) == std::string::npos) continue;
      std::string value = w.substr(c + 1);
      if (value.empty() && k + 1 < cmd.words.size()) value = cmd.words[++k].text;
      if (w[c] == 'a') array = value;
      break;
    }
  }
  if (names.empty() && array.empty()) names.push_back("REPLY");
  if (!input) {
    script.assumptions.push_back("line " + std::to_string(cmd.line) +
                                 ": `read` from standard input: its variables are left as they were");
    return true;
  }
  const std::string line_text = input->substr(0, input->find('\n'));
  auto ifs_it = script.vars.find("IFS");
  const std::string ifs = ifs_it == script.vars.end() ? std::string(" \t\n") : join_fields(ifs_it->second);
  if (!array.empty()) {
    Fields all;
    for (const std::string& f : split_read(line_text, ifs, 0)) all.push_back({f, cmd.line});
    if (!pinned.count(array)) script.vars[array] = all;
  }
  const std::vector<std::string> fields = split_read(line_text, ifs, names.size());
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (is_name(names[k]) && !pinned.count(names[k])) script.vars[names[k]] = Fields{{fields[k], cmd.line}};
  }
  return true;
}

std::optional<std::string> Runner::echo_words(const std::vector<const ShellToken*>& toks) {
  if (toks.empty() || toks.front()->kind != ShellToken::kWord || toks.front()->word.literal() != "echo" ||
      depth_ >= kMaxDepth)
    return std::nullopt;
  std::string out;
  ++depth_;
  for (std::size_t k = 1; k < toks.size(); ++k) {
    if (toks[k]->kind != ShellToken::kWord) continue;
    auto f = expand(toks[k]->word, true);
    if (!f) {
      --depth_;
      return std::nullopt;
    }
    for (const ShellField& field : *f) {
      if (out.empty() && (field.text == "-n" || field.text == "-e" || field.text == "-E")) continue;  // echo's options
      out += (out.empty() ? "" : " ") + field.text;
    }
  }
  --depth_;
  return out;
}

std::optional<std::string> Runner::echo_output(const std::string& text, int line) {
  // `[ TEST ] && echo A || echo B`, the scripts' inline conditional: A or B once TEST is decided.
  if (text.find("&&") != std::string::npos && text.find("||") != std::string::npos) {
    auto tokens = lex_shell(text, path_, nullptr);
    if (!tokens) return std::nullopt;
    std::vector<std::vector<const ShellToken*>> parts(1);
    std::vector<std::string> ops;
    for (const ShellToken& t : *tokens) {
      if (t.kind == ShellToken::kOp && (t.op == "&&" || t.op == "||")) {
        ops.push_back(t.op);
        parts.emplace_back();
      } else if (t.kind == ShellToken::kWord) {
        parts.back().push_back(&t);
      } else {
        return std::nullopt;
      }
    }
    if (ops != std::vector<std::string>{"&&", "||"}) return std::nullopt;
    auto taken = condition(parts[0], line);
    if (!taken || !taken->has_value()) return std::nullopt;
    return echo_words(**taken ? parts[1] : parts[2]);
  }
  // The pipeline's stages, split at '|' outside quotes.
  std::vector<std::string> stages(1);
  char quote = 0;
  for (char c : text) {
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '|') {
      stages.emplace_back();
      continue;
    }
    stages.back() += c;
  }
  auto trim = [](std::string s) {
    s.erase(0, std::min(s.find_first_not_of(" \t\n"), s.size()));
    while (!s.empty() && is_blank(s.back())) s.pop_back();
    return s;
  };
  static const char* kSqueeze[] = {"tr '\\n' ' '", "tr -s ' '",        "sed 's/  \\+/ /g'", "sed 's/ \\+/ /g'",
                                   "sed -E 's/ +/ /g'", "sed -E 's/  +/ /g'", "xargs"};
  bool squeeze = false;
  for (std::size_t k = 1; k < stages.size(); ++k) {
    const std::string stage = trim(stages[k]);
    if (std::none_of(std::begin(kSqueeze), std::end(kSqueeze), [&](const char* q) { return stage == q; }))
      return std::nullopt;
    squeeze = true;
  }
  auto tokens = lex_shell(trim(stages[0]), path_, nullptr);
  if (!tokens) return std::nullopt;
  // `$(IFS=', '; echo "${ARR[*]}")`: assignments before the echo hold inside the $( ) only (a subshell).
  std::vector<std::vector<const ShellToken*>> stmts(1);
  for (const ShellToken& t : *tokens) {
    if (t.kind == ShellToken::kSep)
      stmts.emplace_back();
    else
      stmts.back().push_back(&t);
  }
  while (stmts.size() > 1 && stmts.back().empty()) stmts.pop_back();
  for (std::size_t k = 0; k + 1 < stmts.size(); ++k) {
    for (const ShellToken* t : stmts[k]) {
      const auto lit = t->kind == ShellToken::kWord && !t->word.segs.empty() && !t->word.segs[0].quoted
                           ? std::optional<std::string>(t->word.segs[0].text)
                           : std::nullopt;
      const std::size_t eq = lit ? lit->find('=') : std::string::npos;
      if (eq == std::string::npos || eq == 0 || !is_name(lit->substr(0, eq))) return std::nullopt;
    }
  }
  const auto outside = script.vars;
  std::optional<std::string> echoed;
  bool assigned = true;
  for (std::size_t k = 0; k + 1 < stmts.size() && assigned; ++k) assigned = command(stmts[k]).is_ok();
  if (assigned) echoed = echo_words(stmts.back());
  script.vars = outside;
  if (!echoed) return std::nullopt;
  std::string out = *echoed;
  if (squeeze) {
    std::string squeezed;
    for (char c : out) {
      const char d = is_blank(c) ? ' ' : c;
      if (d != ' ' || squeezed.empty() || squeezed.back() != ' ') squeezed += d;
    }
    out = trim(squeezed);
  }
  return out;
}

}  // namespace planck::import::shell
