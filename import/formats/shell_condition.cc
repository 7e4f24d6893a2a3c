// Conditions of the shell interpreter (see shell_script.h): `[ ]`, `[[ ]]` and `test` over the
// expanded words, `true` / `false`, `(( EXPR ))` and their && / || chains; and the arithmetic
// command itself.

#include <fnmatch.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "import/formats/shell_arith.h"
#include "import/formats/shell_runner.h"

namespace planck::import::shell {

namespace {

// Three-valued && and || over conditions that may not be decidable (nullopt).
std::optional<bool> both(std::optional<bool> a, std::optional<bool> b) {
  if (a == false || b == false) return false;
  if (a && b) return true;
  return std::nullopt;
}
std::optional<bool> either(std::optional<bool> a, std::optional<bool> b) {
  if (a == true || b == true) return true;
  if (a && b) return false;
  return std::nullopt;
}

// The expression inside `[[ ]]` as words and the operators bash(1) "[[ expression ]]" allows
// between them: ( ), !, && (binding tighter) and ||. `op` is empty for a word.
struct CondItem {
  std::string op;
  ShellField word;
};

class CondParser {
 public:
  using Test = std::function<std::optional<bool>(const Fields&)>;
  CondParser(const std::vector<CondItem>& items, Test test) : items_(items), test_(std::move(test)) {}
  // nullopt result and ok() false: a shape this parser does not follow (undecided).
  std::optional<bool> parse() {
    auto r = any();
    if (pos_ != items_.size()) ok_ = false;
    return ok_ ? r : std::nullopt;
  }

 private:
  bool is(const char* op) const { return pos_ < items_.size() && items_[pos_].op == op; }
  std::optional<bool> any() {
    auto r = all();
    while (ok_ && is("||")) {
      ++pos_;
      r = either(r, all());
    }
    return r;
  }
  std::optional<bool> all() {
    auto r = unary();
    while (ok_ && is("&&")) {
      ++pos_;
      r = both(r, unary());
    }
    return r;
  }
  std::optional<bool> unary() {
    if (pos_ < items_.size() && items_[pos_].op.empty() && items_[pos_].word.text == "!" && pos_ + 1 < items_.size() &&
        items_[pos_ + 1].op == "(") {
      ++pos_;
      auto r = unary();
      return r ? std::optional<bool>(!*r) : std::nullopt;
    }
    if (is("(")) {
      ++pos_;
      auto r = any();
      if (!is(")")) ok_ = false;
      ++pos_;
      return r;
    }
    Fields words;  // a primary: the words up to the next operator (test() reads a leading !)
    while (pos_ < items_.size() && items_[pos_].op.empty()) words.push_back(items_[pos_++].word);
    if (words.empty()) ok_ = false;
    return ok_ ? test_(words) : std::nullopt;
  }

  const std::vector<CondItem>& items_;
  Test test_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

// Whether `cmd` is a `[[` whose `]]` has not come yet.
bool open_double_bracket(const std::vector<const ShellToken*>& cmd) {
  return !cmd.empty() && cmd.front()->kind == ShellToken::kWord && cmd.front()->word.literal() == "[[" &&
         !(cmd.size() > 1 && cmd.back()->kind == ShellToken::kWord && cmd.back()->word.literal() == "]]");
}

}  // namespace

std::optional<bool> Runner::test(const Fields& a) {
  // `test A -o B` / `[ A -a B ]` (five or more arguments): -o binds loosest, then -a (POSIX test,
  // the XSI extension bash implements).
  if (a.size() >= 5) {
    for (const char* op : {"-o", "-a"}) {
      for (std::size_t i = 1; i + 1 < a.size(); ++i) {
        if (a[i].text != op) continue;
        const auto l = test(Fields(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(i)));
        const auto r = test(Fields(a.begin() + static_cast<std::ptrdiff_t>(i) + 1, a.end()));
        return std::string(op) == "-o" ? either(l, r) : both(l, r);
      }
    }
  }
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
    std::vector<CondItem> items;  // inside [[ ]]: words and operators
    for (const ShellToken* t : cmd) {
      if (t->kind == ShellToken::kOp) {
        items.push_back({t->op, {}});
        continue;
      }
      if (t->kind != ShellToken::kWord) continue;
      auto f = expand(t->word, !double_bracket);
      if (!f) return f.status();
      if (double_bracket) {
        args.push_back({join_fields(*f), t->line});
        items.push_back({"", args.back()});
      } else {
        args.insert(args.end(), f->begin(), f->end());
      }
    }
    const bool compound = std::any_of(items.begin(), items.end(), [](const CondItem& i) { return !i.op.empty(); });
    if (double_bracket && args.size() >= 2 && args.back().text == "]]" && compound) {
      items.erase(items.begin());
      items.pop_back();
      r = CondParser(items, [this](const Fields& words) { return test(words); }).parse();
      for (const auto& i : items) text += (i.op.empty() ? i.word.text : i.op) + " ";
      args.clear();
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
      acc = both(acc, r);
    else
      acc = either(acc, r);
    cmd.clear();
    return core::Status::ok();
  };
  // Inside `[[ ... ]]` the operators belong to the expression: gathered with its words.
  for (const ShellToken* t : toks) {
    if (t->kind == ShellToken::kOp && open_double_bracket(cmd)) {
      cmd.push_back(t);
    } else if (t->kind == ShellToken::kOp) {
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

core::Status Runner::and_or_list(const std::vector<const ShellToken*>& toks) {
  std::vector<const ShellToken*> cmd;
  std::optional<bool> status;  // of the list so far (nullopt: not known)
  std::string pending;         // the operator before `cmd`
  std::string next;            // the operator after it
  bool after_pipe = false;     // `cmd` reads a pipe: it runs in a subshell
  auto run = [&]() -> core::Status {
    const bool skip = (pending == "&&" && status == false) || (pending == "||" && status == true);
    if (!skip && !cmd.empty()) {
      const auto head = cmd.front()->kind == ShellToken::kWord ? cmd.front()->word.literal() : std::nullopt;
      const bool is_test = cmd.front()->kind == ShellToken::kArith ||
                           (head && (*head == "[" || *head == "[[" || *head == "test" || *head == "true" ||
                                     *head == "false"));
      const bool assignment = std::all_of(cmd.begin(), cmd.end(), [](const ShellToken* t) {
        if (t->kind == ShellToken::kArray) return true;
        if (t->kind != ShellToken::kWord || t->word.segs.empty()) return false;
        const auto& seg = t->word.segs[0];
        return seg.kind == ShellSegment::kLit && !seg.quoted && seg.text.find('=') != std::string::npos &&
               seg.text.find('=') > 0;
      });
      if (is_test) {
        auto c = condition(cmd, cmd.front()->line);
        if (!c) return c.status();
        status = *c;
      } else {
        // Surely run: first in its list, or after an && / || whose status is known, and not in a pipe.
        decided_ = (pending.empty() || status.has_value()) && next != "|" && next != "|&" && next != "&" &&
                   !after_pipe;
        auto st = command(cmd);
        decided_ = true;
        if (!st) return st;
        status = assignment ? std::optional<bool>(true) : std::nullopt;
      }
    }
    cmd.clear();
    return core::Status::ok();
  };
  // Inside `[[ ... ]]` && and || belong to the test: gathered with its words.
  for (const ShellToken* t : toks) {
    if (t->kind == ShellToken::kOp && !open_double_bracket(cmd)) {
      next = t->op;
      if (auto st = run(); !st) return st;
      after_pipe = next == "|" || next == "|&";
      pending = t->op == "&&" || t->op == "||" ? t->op : "";
      if (pending.empty()) status.reset();
    } else {
      cmd.push_back(t);
    }
  }
  next.clear();
  return run();
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
