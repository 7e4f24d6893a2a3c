// Interpreter for the bash subset of Megatron launch scripts (see shell_script.h).

#include "import/formats/shell_script.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "core/base/format.h"
#include "import/plan_builder.h"
#include "import/formats/shell_arith.h"
#include "import/formats/shell_lexer.h"
#include "import/formats/shell_runner.h"

namespace planck::import {

namespace shell {


// A command's text in a message: its first line, at most 80 characters.
std::string one_line(const std::string& text) {
  std::string out = text.substr(0, text.find('\n'));
  if (out.size() > 80) out = out.substr(0, 77) + "...";
  return out.size() < text.size() ? out + " ..." : out;
}

core::Result<std::string> Runner::inline_word(const std::string& text, int line) {
  if (depth_ >= kMaxDepth) return error(line, "expansion nested deeper than " + std::to_string(kMaxDepth));
  auto w = lex_shell_word(text, line, path_);
  if (!w) return w.status();
  ++depth_;
  auto f = expand(*w, false);
  --depth_;
  if (!f) return f.status();
  return join_fields(*f);
}

core::Result<Fields> Runner::param(const std::string& expr, int line, bool* multi) {
  *multi = false;
  // ${#NAME}, ${!NAME} and ${NAME...} read NAME (ShellScript::read).
  names_read("${" + expr.substr(std::min(expr.find_first_not_of("#!"), expr.size())) + "}", false, script.read);
  if (expr.size() > 1 && expr[0] == '#') {  // ${#ARR[@]} count, ${#VAR} length
    std::string name = expr.substr(1);
    bool count = name.size() > 3 && (name.ends_with("[@]") || name.ends_with("[*]"));
    if (count) name.resize(name.size() - 3);
    auto it = script.vars.find(name);
    std::int64_t n = 0;
    if (it != script.vars.end())
      n = count ? static_cast<std::int64_t>(it->second.size())
                : static_cast<std::int64_t>(join_fields(it->second).size());
    return Fields{{std::to_string(n), line}};
  }
  std::size_t i = 0;
  while (i < expr.size() && (std::isalnum(static_cast<unsigned char>(expr[i])) || expr[i] == '_')) ++i;
  if (i == 0 && !expr.empty()) i = 1;  // $@ $# $? ...
  const std::string name = expr.substr(0, i);
  std::optional<Fields> value;
  if (auto it = script.vars.find(name); it != script.vars.end()) value = it->second;
  if (name == "#" && !value) value = Fields{{"0", line}};  // no positional parameters
  if ((name == "0" || name == "BASH_SOURCE") && !value)      // the script being read
    value = Fields{{std::filesystem::absolute(path_).lexically_normal().string(), line}};
  if (name == "@" || name == "*") {
    auto all = script.vars.find("@");  // the positional parameters --set / --script-args gave
    value = all == script.vars.end() ? Fields{} : all->second;
    *multi = name == "@";
  }
  if (i < expr.size() && expr[i] == '[') {
    const std::size_t close = expr.find(']', i);
    if (close == std::string::npos) return error(line, "bad substitution ${" + expr + "}");
    const std::string idx = expr.substr(i + 1, close - i - 1);
    i = close + 1;
    if (idx == "@" || idx == "*") {
      *multi = idx == "@";
    } else if (value) {
      auto n = inline_word(idx, line);
      if (!n) return n.status();
      auto k = parse_shell_int(*n);
      if (k && *k >= 0 && static_cast<std::size_t>(*k) < value->size())
        value = Fields{(*value)[*k]};
      else
        value.reset();
    }
  } else if (value && value->size() > 1 && name != "@" && name != "*") {
    value = Fields{value->front()};  // $ARR is ${ARR[0]}; $@ and $* are every positional parameter
  }
  const std::string rest = expr.substr(i);
  const bool set = value.has_value();
  const bool null = !set || join_fields(*value).empty();
  auto word = [&](std::size_t skip) -> core::Result<Fields> {
    auto s = inline_word(rest.substr(skip), line);
    if (!s) return s.status();
    return Fields{{*s, line}};
  };
  if (rest.empty()) return value.value_or(Fields{});
  if (rest.starts_with(":-")) return null ? word(2) : *value;
  if (rest.starts_with(":=")) {
    if (!null) return *value;
    auto w = word(2);
    if (w) script.vars[name] = *w;
    return w;
  }
  if (rest.starts_with(":+")) return null ? Fields{} : word(2);
  if (rest[0] == '-') return set ? *value : word(1);
  if (rest[0] == '=') {
    if (set) return *value;
    auto w = word(1);
    if (w) script.vars[name] = *w;
    return w;
  }
  if (rest[0] == '+') return set ? word(1) : Fields{};
  if (rest[0] == ':') {
    // ${VAR:OFFSET} / ${VAR:OFFSET:LENGTH}, arithmetic in both (ROCm's `${ARGUMENT:$KEY_LENGTH+1}`):
    // a negative offset counts from the end, as bash's.
    const std::size_t colon = rest.find(':', 1);
    auto offset_text = inline_word(rest.substr(1, colon == std::string::npos ? std::string::npos : colon - 1), line);
    if (!offset_text) return offset_text.status();
    names_read(*offset_text, true, script.read);
    const auto offset = shell_arith(*offset_text, script.vars);
    std::optional<std::int64_t> length;
    if (colon != std::string::npos) {
      auto length_text = inline_word(rest.substr(colon + 1), line);
      if (!length_text) return length_text.status();
      names_read(*length_text, true, script.read);
      length = shell_arith(*length_text, script.vars);
    }
    if (offset && (colon == std::string::npos || (length && *length >= 0))) {
      const std::string s = value ? join_fields(*value) : std::string();
      const auto n = static_cast<std::int64_t>(s.size());
      const std::int64_t from = *offset < 0 ? std::max<std::int64_t>(0, n + *offset) : std::min(*offset, n);
      const std::int64_t count = length ? std::min(*length, n - from) : n - from;
      return Fields{{s.substr(static_cast<std::size_t>(from), static_cast<std::size_t>(count)), line}};
    }
  }
  script.assumptions.push_back("line " + std::to_string(line) + ": ${" + expr +
                               "} uses an operator planck does not evaluate; took the value of " + name + " unchanged");
  return value.value_or(Fields{});
}

core::Result<Fields> Runner::expand(const ShellWord& w, bool split) {
  Fields out;
  std::string cur;
  bool have = false;
  int cur_line = w.line;
  auto push = [&] {
    if (have) out.push_back({cur, cur_line});
    cur.clear();
    have = false;
    cur_line = w.line;
  };
  for (const ShellSegment& seg : w.segs) {
    Fields vals;
    bool multi = false;
    bool kept_whole = false;
    if (seg.kind == ShellSegment::kLit) {
      cur += seg.text;
      have = have || seg.quoted || !seg.text.empty();
      continue;
    }
    if (seg.kind == ShellSegment::kParam) {
      auto v = param(seg.text, w.line, &multi);
      if (!v) return v.status();
      vals = std::move(*v);
    } else if (seg.kind == ShellSegment::kArith) {
      auto text = inline_word(seg.text, w.line);
      if (!text) return text.status();
      names_read(*text, true, script.read);
      auto v = shell_arith_assign(*text, script.vars, w.line);
      if (!v) script.assumptions.push_back("line " + std::to_string(w.line) + ": $((" + seg.text + ")) not evaluated");
      vals = {{v ? std::to_string(*v) : unsplit("$((" + seg.text + "))"), w.line}};
      kept_whole = !v;  // bash gives one number here
    } else if (auto dir = substitute(seg.text)) {
      vals = {{*dir, w.line}};
    } else if (auto echoed = echo_output(seg.text, w.line)) {
      vals = {{*echoed, w.line}};
    } else {
      script.assumptions.push_back("line " + std::to_string(w.line) + ": $(" + one_line(seg.text) +
                                   ") not run; kept as text");
      vals = {{unsplit("$(" + seg.text + ")"), w.line}};
      ++unrun_;
      kept_whole = true;  // one word, as it would be one value: not split at its blanks
    }
    if (seg.quoted || !split || kept_whole) {
      if (multi && seg.quoted && split) {
        for (std::size_t i = 0; i < vals.size(); ++i) {
          if (i > 0) push();
          if (!have) cur_line = vals[i].line;
          cur += vals[i].text;
          have = true;
        }
      } else if (seg.kind == ShellSegment::kParam && seg.quoted && (seg.text == "*" || seg.text.ends_with("[*]"))) {
        // "$*" and "${ARR[*]}": the values joined by the first character of IFS (bash(1) "Special Parameters")
        auto ifs = script.vars.find("IFS");
        const std::string sep = ifs == script.vars.end() ? " " : join_fields(ifs->second).substr(0, 1);
        for (std::size_t k = 0; k < vals.size(); ++k) cur += (k ? sep : "") + vals[k].text;
        have = true;
      } else {
        cur += join_fields(vals);
        have = true;
      }
    } else {
      for (std::size_t i = 0; i < vals.size(); ++i) {
        const std::string& t = vals[i].text;
        if (i > 0 || (!t.empty() && is_blank(t.front()))) push();
        std::size_t p = 0;
        while (p < t.size()) {
          while (p < t.size() && is_blank(t[p])) ++p;
          if (p >= t.size()) break;
          if (p > 0 && is_blank(t[p - 1])) push();
          std::size_t e = p;
          while (e < t.size() && !is_blank(t[e])) ++e;
          if (!have) cur_line = vals[i].line;
          cur += t.substr(p, e - p);
          have = true;
          p = e;
        }
        if (!t.empty() && is_blank(t.back())) push();
      }
    }
    if (cur.size() > kMaxFieldBytes || out.size() > kMaxFields) {
      return error(w.line, "expansion grows past 1 MiB or 65536 words (a self-referencing variable?)");
    }
  }
  push();
  return out;
}

core::Status Runner::command(const std::vector<const ShellToken*>& toks) {
  if (toks.size() == 1 && toks[0]->kind == ShellToken::kArith) return arith_command(*toks[0]).status();
  std::size_t i = 0;
  static const char* kPrefixes[] = {"export", "local", "readonly", "declare", "typeset"};
  while (i < toks.size() && toks[i]->kind == ShellToken::kWord) {
    auto lit = toks[i]->word.literal();
    bool prefix = false;
    for (const char* p : kPrefixes) prefix = prefix || (lit && *lit == p);
    if (!prefix && !(lit && i > 0 && lit->size() > 1 && (*lit)[0] == '-' && toks[0]->word.literal() != "unset")) break;
    ++i;
  }
  const bool declared = i > 0;  // export / declare / local ... before the words
  std::map<std::string, std::optional<Fields>> saved;  // values before this line's assignments
  for (; i < toks.size(); ++i) {
    const ShellToken& t = *toks[i];
    if (t.kind == ShellToken::kArray) {
      Fields elems;
      for (const ShellWord& w : t.elements) {
        auto f = expand(w, true);
        if (!f) return f.status();
        elems.insert(elems.end(), f->begin(), f->end());
      }
      if (pinned.count(t.name)) continue;  // --set on the command line wins
      Fields& dst = script.vars[t.name];
      if (!t.append) dst.clear();
      dst.insert(dst.end(), elems.begin(), elems.end());
      script.arrays.insert(t.name);
      if (dst.size() > kMaxFields) return error(t.line, "array " + t.name + " grows past 65536 elements");
      continue;
    }
    const ShellWord& w = t.word;
    if (declared && (w.segs.empty() || w.segs[0].kind != ShellSegment::kLit || w.segs[0].quoted)) {
      // `export "$KEY"="$VALUE"`: after export / declare / local the word is expanded first and is
      // an assignment when it then reads NAME=VALUE (ROCm's KEY=VALUE argument loop).
      auto f = expand(w, false);
      if (!f) return f.status();
      const std::string text = join_fields(*f);
      const std::size_t eq = text.find('=');
      const std::string name = eq == std::string::npos ? std::string() : text.substr(0, eq);
      if (!is_name(name)) break;
      if (!pinned.count(name)) script.vars[name] = Fields{{text.substr(eq + 1), w.line}};
      continue;
    }
    if (w.segs.empty() || w.segs[0].kind != ShellSegment::kLit || w.segs[0].quoted) break;
    const std::string& head = w.segs[0].text;
    const std::size_t eq = head.find('=');
    if (eq == std::string::npos || eq == 0) break;
    const bool append = head[eq - 1] == '+';
    const std::string name = head.substr(0, append ? eq - 1 : eq);
    if (!is_name(name)) break;
    ShellWord value = w;
    value.segs[0].text = head.substr(eq + 1);
    auto f = expand(value, false);
    if (!f) return f.status();
    std::string v = join_fields(*f);
    if (pinned.count(name)) continue;  // --set on the command line wins
    if (!saved.count(name)) {
      auto it = script.vars.find(name);
      saved[name] = it == script.vars.end() ? std::nullopt : std::optional<Fields>(it->second);
    }
    Fields& dst = script.vars[name];
    if (append && !dst.empty()) {
      dst.front().text += v;
    } else {
      dst = Fields{{v, w.line}};
      script.arrays.erase(name);
    }
  }
  if (i >= toks.size()) return core::Status::ok();
  ShellCommand cmd;
  cmd.line = toks[i]->line;
  for (; i < toks.size(); ++i) {
    if (toks[i]->kind != ShellToken::kWord) continue;
    auto f = expand(toks[i]->word, true);
    if (!f) return f.status();
    cmd.words.insert(cmd.words.end(), f->begin(), f->end());
  }
  if (read_builtin(cmd)) {
    // `IFS=',' read ...`: an assignment before a builtin lasts for that command only (bash).
    for (const auto& [name, before] : saved) {
      if (before)
        script.vars[name] = *before;
      else
        script.vars.erase(name);
    }
    return core::Status::ok();
  }
  cmd.loop = core::join(loop_, ", ");
  auto followed = follow(cmd);
  if (!followed) return followed.status();
  if (*followed) return core::Status::ok();
  if (!cmd.words.empty() && builtin(cmd)) return core::Status::ok();
  if (!cmd.words.empty() && cmd.words.front().text == "unset") {
    for (std::size_t k = 1; k < cmd.words.size(); ++k) script.vars.erase(cmd.words[k].text);
    return core::Status::ok();
  }
  if (!cmd.words.empty()) script.commands.push_back(std::move(cmd));
  return core::Status::ok();
}

core::Status Runner::statement(std::vector<const ShellToken*> toks) {
  for (const ShellToken* t : toks) {
    if (t->kind != ShellToken::kWord) continue;
    const auto w = t->word.literal();
    if (w == "{") ++brace_depth_;
    if (w == "}" && brace_depth_ > 0) --brace_depth_;
  }
  while (!toks.empty()) {
    auto kw = toks.front()->kind == ShellToken::kWord ? toks.front()->word.literal() : std::nullopt;
    const int line = toks.front()->line;
    if (!kw) break;
    if (*kw == "then" || *kw == "do" || *kw == "done" || *kw == "{" || *kw == "}" || *kw == "esac") {
      toks.erase(toks.begin());
      continue;
    }
    // `NAME() {` lexes as NAME, ")" and "{" (the lexer drops "("); a case pattern `on) ...` has no "{".
    if (toks.size() > 2 && toks[1]->kind == ShellToken::kOp && toks[1]->op == ")" &&
        toks[2]->kind == ShellToken::kWord && toks[2]->word.literal() == std::optional<std::string>("{")) {
      script.functions.push_back(*kw);
      toks.erase(toks.begin(), toks.begin() + 2);  // the definition is no command
      continue;
    }
    if (*kw == "function" && toks.size() > 1 && toks[1]->kind == ShellToken::kWord) {
      if (auto name = toks[1]->word.literal()) script.functions.push_back(name->substr(0, name->find('(')));
    }
    if (*kw == "for" || *kw == "while" || *kw == "until" || *kw == "case" || *kw == "function")
      return core::Status::ok();
    if (*kw == "if" || *kw == "elif") {
      if (*kw == "elif" && frames_.empty()) return error(line, "'elif' without 'if'");
      std::vector<const ShellToken*> cond(toks.begin() + 1, toks.end());
      if (*kw == "if") frames_.push_back({active(), false, false});
      Frame& f = frames_.back();
      if (f.parent_active && !f.taken) {
        auto c = condition(cond, line);
        if (!c) return c.status();
        f.active = !c->has_value() || **c;
        f.taken = f.active;
      } else {
        f.active = false;
      }
      return core::Status::ok();
    }
    if (*kw == "else") {
      if (frames_.empty()) return error(line, "'else' without 'if'");
      Frame& f = frames_.back();
      f.active = f.parent_active && !f.taken;
      f.taken = true;
      toks.erase(toks.begin());
      continue;
    }
    if (*kw == "fi") {
      if (frames_.empty()) return error(line, "'fi' without 'if'");
      frames_.pop_back();
      toks.erase(toks.begin());
      continue;
    }
    break;
  }
  if (toks.empty() || !active()) return core::Status::ok();
  return and_or_list(toks);
}

core::Status Runner::run(const std::vector<ShellToken>& tokens) {
  std::vector<Statement> stmts(1);
  for (const ShellToken& t : tokens) {
    if (t.kind == ShellToken::kSep)
      stmts.emplace_back();
    else
      stmts.back().push_back(&t);
  }
  return run_statements(stmts, 0, stmts.size());
}

}  // namespace shell

core::Result<ShellScript> run_shell(std::string_view text, const std::string& path,
                                    const std::vector<std::pair<std::string, std::string>>& presets) {
  std::vector<ShellComment> comments;
  auto tokens = lex_shell(text, path, &comments);
  if (!tokens) return tokens.status();
  shell::Runner runner(path, text);
  std::size_t positional = 0;
  for (const auto& [name, value] : presets) {
    const bool digits = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c));
    });
    bool ok = !name.empty();
    for (char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!ok || (digits && (name.size() > 3 || name == "0"))) {
      return core::Status::error("--set " + name + ": a launch script takes a shell variable (NAME=VALUE) or a "
                                 "positional parameter from 1 to 999 (1=VALUE)");
    }
    runner.script.vars[name] = {{value, 0}};
    runner.pinned.insert(name);
    if (digits) positional = std::max<std::size_t>(positional, std::stoul(name));
  }
  if (positional > 0) {
    shell::Fields all;
    for (std::size_t k = 1; k <= positional; ++k) {
      auto it = runner.script.vars.find(std::to_string(k));
      all.push_back(it == runner.script.vars.end() ? ShellField{"", 0} : it->second.front());
    }
    runner.script.vars["@"] = all;
    runner.script.vars["#"] = {{std::to_string(positional), 0}};
  }
  if (!runner.script.vars.count("IFS")) runner.script.vars["IFS"] = {{" \t\n", 0}};  // bash's default IFS
  if (auto st = runner.run(*tokens); !st) return st;
  for (auto& [name, fields] : runner.script.vars) {
    for (ShellField& f : fields) shell::resplit(f.text);
  }
  for (ShellCommand& cmd : runner.script.commands) {
    for (ShellField& f : cmd.words) shell::resplit(f.text);
  }
  for (const ShellComment& c : comments) {
    std::size_t p = c.text.find_first_not_of("# \t");
    if (p != std::string::npos && c.text.compare(p, 2, "--") == 0) {
      std::string flag = c.text.substr(p);
      while (!flag.empty() && shell::is_blank(flag.back())) flag.pop_back();
      runner.script.commented_flags.push_back({flag, c.line});
    }
  }
  return std::move(runner.script);
}

void warn_unread_sets(const ShellScript& script, const std::vector<std::pair<std::string, std::string>>& sets,
                      PlanBuilder& b) {
  std::vector<std::string> known;  // what the script reads, for "did you mean"
  for (const std::string& name : script.read) known.push_back(name);
  for (const auto& [name, value] : sets) {
    // Positional parameters and dotted keys (a Megatron-Bridge override) are not variables.
    const bool variable = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])) &&
                          std::all_of(name.begin(), name.end(), [](char c) {
                            return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                          });
    if (!variable || script.read.count(name)) continue;
    const std::string guess = core::did_you_mean(name, known);
    b.finding("unknown-key", 0,
              "--set " + name + "=" + value + ": the script never reads $" + name +
                  " on a branch it takes, so the value changes nothing planck reads (ignored)" +
                  (guess.empty() ? std::string() : "; " + guess));
  }
}

std::optional<std::int64_t> shell_int(const ShellScript& script, const std::string& name) {
  auto it = script.vars.find(name);
  if (it == script.vars.end() || it->second.size() != 1) return std::nullopt;
  return parse_shell_int(it->second.front().text);
}

}  // namespace planck::import
