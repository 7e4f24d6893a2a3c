// Conditions of the shell interpreter (see shell_script.h): `[ ]`, `[[ ]]` and `test` over the
// expanded words, `true` / `false`, `(( EXPR ))` and their && / || chains; and the arithmetic
// command itself.

#include <fnmatch.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "import/formats/shell_arith.h"
#include "import/formats/shell_runner.h"

namespace planck::import::shell {

std::optional<bool> Runner::test(const Fields& a) {
  std::vector<std::string> args;
  for (const auto& f : a) args.push_back(f.text);
  bool negate = false;
  while (!args.empty() && args.front() == "!") {
    negate = !negate;
    args.erase(args.begin());
  }
  std::optional<bool> r;
  if (args.empty()) {
    r = false;
  } else if (args.size() == 1) {
    r = !args[0].empty();
  } else if (args.size() == 2) {
    if (args[0] == "-z")
      r = args[1].empty();
    else if (args[0] == "-n")
      r = !args[1].empty();
  } else if (args.size() == 3) {
    const std::string& op = args[1];
    if (op == "=" || op == "==")
      r = fnmatch(args[2].c_str(), args[0].c_str(), 0) == 0;
    else if (op == "!=")
      r = fnmatch(args[2].c_str(), args[0].c_str(), 0) != 0;
    else if (op.size() == 3 && op[0] == '-') {
      auto x = parse_shell_int(args[0]), y = parse_shell_int(args[2]);
      if (x && y) {
        if (op == "-eq")
          r = *x == *y;
        else if (op == "-ne")
          r = *x != *y;
        else if (op == "-lt")
          r = *x < *y;
        else if (op == "-le")
          r = *x <= *y;
        else if (op == "-gt")
          r = *x > *y;
        else if (op == "-ge")
          r = *x >= *y;
      }
    }
  }
  if (r && negate) r = !*r;
  return r;
}

core::Result<std::optional<bool>> Runner::condition(const std::vector<const ShellToken*>& toks, int line) {
  std::optional<bool> acc;
  std::string pending = "";
  std::vector<const ShellToken*> cmd;
  std::string text;
  auto finish = [&]() -> core::Status {
    Fields args;
    std::optional<bool> r;
    if (cmd.size() == 1 && cmd[0]->kind == ShellToken::kArith) {  // (( EXPR )): true when EXPR is not 0
      auto v = arith_command(*cmd[0]);
      if (!v) return v.status();
      if (*v) r = **v != 0;
      text += "((" + cmd[0]->word.segs[0].text + ")) ";
    }
    // Inside [[ ]] words are not split and an empty one stays an argument (bash(1) "[[
    // expression ]]": no word splitting or pathname expansion), so `[[ $X == y ]]` with X unset
    // compares "" with y.
    const bool double_bracket = !cmd.empty() && cmd.front()->kind == ShellToken::kWord &&
                                cmd.front()->word.literal() == "[[";
    for (const ShellToken* t : cmd) {
      if (t->kind != ShellToken::kWord) continue;
      auto f = expand(t->word, !double_bracket);
      if (!f) return f.status();
      if (double_bracket) {
        args.push_back({join_fields(*f), t->line});
      } else {
        args.insert(args.end(), f->begin(), f->end());
      }
    }
    if (!args.empty()) {
      const std::string first = args.front().text;
      if (first == "true")
        r = true;
      else if (first == "false")
        r = false;
      else if ((first == "[" && args.back().text == "]") || (first == "[[" && args.back().text == "]]")) {
        r = test(Fields(args.begin() + 1, args.end() - 1));
      } else if (first == "test") {
        r = test(Fields(args.begin() + 1, args.end()));
      }
    }
    for (const auto& f : args) text += f.text + " ";
    if (pending.empty())
      acc = r;
    else if (pending == "&&")
      acc = (acc == false || r == false) ? std::optional<bool>(false)
            : (acc && r)                 ? std::optional<bool>(true)
                                         : std::nullopt;
    else
      acc = (acc == true || r == true) ? std::optional<bool>(true)
            : (acc && r)               ? std::optional<bool>(false)
                                       : std::nullopt;
    cmd.clear();
    return core::Status::ok();
  };
  for (const ShellToken* t : toks) {
    if (t->kind == ShellToken::kOp) {
      if (auto st = finish(); !st) return st;
      pending = t->op == "&&" || t->op == "||" ? t->op : "?";
      text += t->op + " ";
      if (pending == "?") acc.reset();
    } else if (t->kind == ShellToken::kWord || t->kind == ShellToken::kArith) {
      cmd.push_back(t);
    }
  }
  if (auto st = finish(); !st) return st;
  if (!acc)
    script.assumptions.push_back("line " + std::to_string(line) + ": condition `" + text +
                                 "` cannot be decided without running it; assumed true");
  return acc;
}

core::Result<std::optional<std::int64_t>> Runner::arith_command(const ShellToken& t) {
  auto text = inline_word(t.word.segs[0].text, t.line);
  if (!text) return text.status();
  names_read(*text, true, script.read);
  auto v = shell_arith_assign(*text, script.vars, t.line);
  if (!v)
    script.assumptions.push_back("line " + std::to_string(t.line) + ": ((" + t.word.segs[0].text + ")) not evaluated");
  return v;
}

}  // namespace planck::import::shell
