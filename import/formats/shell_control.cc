// Compound commands and builtins of the shell interpreter that need more than one statement or
// the variables' values: `for NAME in WORDS; do ... done` (its body run once per word, as bash
// does; while / until / for (( )) are in shell_loops.cc), `case`, `$(echo ...)` and `read` on a
// here-string (`IFS=',' read -r TP PP EP <<< "$CONFIG"`, the way
// Megatron-Bridge's example slurm scripts take a parallelism config apart).

#include <fnmatch.h>

#include <algorithm>
#include <functional>
#include <cctype>
#include <optional>
#include <regex>
#include <set>
#include <string_view>
#include <string>
#include <vector>

#include "import/formats/shell_arith.h"
#include "import/formats/shell_runner.h"

namespace planck::import::shell {

namespace {

// The first keyword of a statement after the ones statement() drops (do, then, else, {).
std::optional<std::string> lead(const std::vector<const ShellToken*>& stmt) {
  std::size_t i = 0;
  for (auto kw = keyword(stmt, i); kw && (*kw == "do" || *kw == "then" || *kw == "else" || *kw == "{");
       kw = keyword(stmt, ++i)) {
  }
  return keyword(stmt, i);
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
    // A clause's `exit` is not followed: its pattern may have matched a value planck left empty.
    const bool saved_nested = nested_;
    nested_ = true;
    auto st = run_statements(body, 0, body.size());
    nested_ = saved_nested;
    if (!st) return st;
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
  // `cut -f N -d C` (either order, C quoted or not; ROCm's `$(echo $ARGUMENT | cut -f1 -d=)`):
  // field N of the line split at C, the whole line when C is not in it (cut(1) without -s).
  static const std::regex kCut(
      R"(^cut\s+(?:-d\s*['"]?([^'"\s])['"]?\s+-f\s*([0-9]+)|-f\s*([0-9]+)\s+-d\s*['"]?([^'"\s])['"]?)$)");
  struct Stage {
    bool squeeze = false;
    char delimiter = 0;
    std::size_t field = 0;
  };
  std::vector<Stage> pipes;
  for (std::size_t k = 1; k < stages.size(); ++k) {
    const std::string stage = trim(stages[k]);
    std::smatch m;
    if (std::regex_match(stage, m, kCut)) {
      const bool d_first = m[1].matched;
      const std::size_t field = std::stoul(std::string(d_first ? m[2] : m[3]).substr(0, 6));
      if (field == 0) return std::nullopt;
      pipes.push_back({false, std::string(d_first ? m[1] : m[4])[0], field});
    } else if (std::any_of(std::begin(kSqueeze), std::end(kSqueeze), [&](const char* q) { return stage == q; })) {
      pipes.push_back({true, 0, 0});
    } else {
      return std::nullopt;
    }
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
  for (const Stage& p : pipes) {
    if (p.squeeze) {
      std::string squeezed;
      for (char c : out) {
        const char d = is_blank(c) ? ' ' : c;
        if (d != ' ' || squeezed.empty() || squeezed.back() != ' ') squeezed += d;
      }
      out = trim(squeezed);
    } else if (out.find(p.delimiter) != std::string::npos) {
      std::size_t from = 0;
      for (std::size_t f = 1; f < p.field && from != std::string::npos; ++f) {
        from = out.find(p.delimiter, from);
        if (from != std::string::npos) ++from;
      }
      out = from == std::string::npos ? std::string() : out.substr(from, out.find(p.delimiter, from) - from);
    }
  }
  return out;
}

}  // namespace planck::import::shell
