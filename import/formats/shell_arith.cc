// $(( )) arithmetic and integer parsing for the shell interpreter (see shell_arith.h).

#include "import/formats/shell_arith.h"

#include <cctype>
#include <charconv>
#include <cstdint>

#include "import/plan_builder.h"

namespace planck::import {

namespace {

constexpr int kMaxDepth = 32;

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n'; }

using Vars = std::map<std::string, std::vector<ShellField>>;

// bash's integer arithmetic (bash(1) "ARITHMETIC EVALUATION"), by precedence: assignment
// (= += -= *= /= %=), ?:, ||, &&, == !=, < <= > >=, + -, * / %, ** (right), unary - + ! and
// ++/-- on a name. Overflow, division by zero and any other operator (bit shifts, ',') are
// unknown. Assignments write to `out` when it is given, else the expression is unknown; a
// branch not taken (&&, ||, ?:) assigns nothing, as bash short-circuits.
class Arith {
 public:
  Arith(std::string_view s, const Vars& vars, bool assigning) : s_(s), vars_(vars), assign_(assigning) {}
  std::optional<std::int64_t> eval() {
    auto v = assign(0);
    skip();
    return v && pos_ == s_.size() ? v : std::nullopt;
  }
  // The assignments made, by name: written to the variables once the whole expression is known.
  const std::map<std::string, std::int64_t>& assigned() const { return assigned_; }

 private:
  using Value = std::optional<std::int64_t>;
  void skip() {
    while (pos_ < s_.size() && is_blank(s_[pos_])) ++pos_;
  }
  bool eat(std::string_view op) {
    skip();
    if (s_.substr(pos_, op.size()) != op) return false;
    pos_ += op.size();
    return true;
  }
  bool next_is(char c, std::size_t at = 0) const { return pos_ + at < s_.size() && s_[pos_ + at] == c; }
  std::string_view name() {
    skip();
    const std::size_t start = pos_;
    if (pos_ < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) {
      while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    }
    return s_.substr(start, pos_ - start);
  }
  Value value_of(std::string_view n) const {
    if (auto p = assigned_.find(std::string(n)); p != assigned_.end()) return p->second;
    auto it = vars_.find(std::string(n));  // a bare name is its value, unset or empty = 0
    if (it == vars_.end() || it->second.empty() || it->second.front().text.empty()) return 0;
    return parse_shell_int(it->second.front().text);
  }
  Value store(std::string_view n, Value v) {
    if (!v || !assign_) return std::nullopt;
    if (dead_ == 0) assigned_[std::string(n)] = *v;
    return v;
  }
  // The operands' value under `op`; overflow and division by zero are unknown, except in a branch
  // not taken, which bash never evaluates (`x || 1 / 0`).
  Value apply(char op, Value a, Value b) const {
    if (!a || !b) return std::nullopt;
    std::int64_t r = 0;
    Value v;
    switch (op) {
      case '+':
        if (!__builtin_add_overflow(*a, *b, &r)) v = r;
        break;
      case '-':
        if (!__builtin_sub_overflow(*a, *b, &r)) v = r;
        break;
      case '*':
        v = checked_mul(*a, *b);
        break;
      default:
        if (*b != 0 && !(*a == INT64_MIN && *b == -1)) v = op == '/' ? *a / *b : *a % *b;
    }
    return v || dead_ == 0 ? v : Value(0);
  }
  Value assign(int depth) {
    const std::size_t at = pos_;
    const std::string_view n = name();
    skip();
    if (!n.empty() && pos_ < s_.size()) {
      char op = 0;
      if (next_is('=') && !next_is('=', 1)) {
        op = '=';
      } else if (std::string_view("+-*/%").find(s_[pos_]) != std::string_view::npos && next_is('=', 1)) {
        op = s_[pos_++];
      }
      if (op) {
        ++pos_;
        Value rhs = assign(depth + 1);
        return store(n, op == '=' ? rhs : apply(op, value_of(n), rhs));
      }
    }
    pos_ = at;
    return ternary(depth);
  }
  Value ternary(int depth) {
    Value c = logic_or(depth);
    if (!c || !eat("?")) return c;
    dead_ += *c == 0;
    Value a = assign(depth + 1);
    dead_ -= *c == 0;
    if (!eat(":")) return std::nullopt;
    dead_ += *c != 0;
    Value b = ternary(depth + 1);
    dead_ -= *c != 0;
    return *c ? a : b;
  }
  Value logic_or(int depth) {
    Value a = logic_and(depth);
    while (a && eat("||")) {
      dead_ += *a != 0;
      Value b = logic_and(depth);
      dead_ -= *a != 0;
      a = b ? Value(*a != 0 || *b != 0) : Value();
    }
    return a;
  }
  Value logic_and(int depth) {
    Value a = equality(depth);
    while (a && eat("&&")) {
      dead_ += *a == 0;
      Value b = equality(depth);
      dead_ -= *a == 0;
      a = b ? Value(*a != 0 && *b != 0) : Value();
    }
    return a;
  }
  Value equality(int depth) {
    Value a = relation(depth);
    while (a) {
      const bool eq = eat("==");
      if (!eq && !eat("!=")) break;
      Value b = relation(depth);
      a = b ? Value((*a == *b) == eq) : Value();
    }
    return a;
  }
  Value relation(int depth) {
    Value a = sum(depth);
    while (a) {
      skip();
      if (!(next_is('<') || next_is('>')) || next_is(s_[pos_], 1)) break;  // << >> are not priced
      const char op = s_[pos_++];
      const bool or_equal = next_is('=');
      if (or_equal) ++pos_;
      Value b = sum(depth);
      if (!b) return std::nullopt;
      a = op == '<' ? (or_equal ? *a <= *b : *a < *b) : (or_equal ? *a >= *b : *a > *b);
    }
    return a;
  }
  Value sum(int depth) {
    Value a = product(depth);
    while (a) {
      skip();
      if (!(next_is('+') || next_is('-')) || next_is('=', 1)) break;
      const char op = s_[pos_++];
      a = apply(op, a, product(depth));
    }
    return a;
  }
  Value product(int depth) {
    Value a = power(depth);
    while (a) {
      skip();
      if (!(next_is('*') || next_is('/') || next_is('%')) || next_is('=', 1) || (next_is('*') && next_is('*', 1)))
        break;
      const char op = s_[pos_++];
      a = apply(op, a, power(depth));
    }
    return a;
  }
  Value power(int depth) {
    Value a = unary(depth);
    if (!a || !eat("**")) return a;
    Value b = power(depth + 1);
    if (!b || *b < 0) return std::nullopt;
    if (*a == 0 || *a == 1) return *b == 0 ? 1 : *a;
    if (*a == -1) return *b % 2 ? -1 : 1;
    std::int64_t r = 1;
    for (std::int64_t k = 0; k < *b; ++k) {  // |a| >= 2: overflows within 63 turns
      auto m = checked_mul(r, *a);
      if (!m) return std::nullopt;
      r = *m;
    }
    return r;
  }
  Value unary(int depth) {
    skip();
    if (depth > kMaxDepth || pos_ >= s_.size()) return std::nullopt;
    const char c = s_[pos_];
    if ((c == '+' || c == '-') && next_is(c, 1)) {  // ++NAME, --NAME
      pos_ += 2;
      const std::string_view n = name();
      if (n.empty()) return std::nullopt;
      return store(n, apply(c, value_of(n), 1));
    }
    if (c == '-' || c == '+' || c == '!') {
      ++pos_;
      Value v = unary(depth + 1);
      if (!v || (c == '-' && *v == INT64_MIN)) return std::nullopt;
      return c == '-' ? -*v : c == '!' ? Value(*v == 0) : *v;
    }
    if (c == '(') {
      ++pos_;
      Value v = assign(depth + 1);
      if (!v || !eat(")")) return std::nullopt;
      return v;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      const std::size_t start = pos_;
      while (pos_ < s_.size() && std::isalnum(static_cast<unsigned char>(s_[pos_]))) ++pos_;
      return parse_shell_int(s_.substr(start, pos_ - start));
    }
    const std::string_view n = name();
    if (n.empty()) return std::nullopt;
    Value v = value_of(n);
    skip();
    if ((next_is('+') || next_is('-')) && next_is(s_[pos_], 1)) {  // NAME++, NAME--: the old value
      const char op = s_[pos_];
      pos_ += 2;
      if (!store(n, apply(op, v, 1))) return std::nullopt;
    }
    return v;
  }

  std::string_view s_;
  const Vars& vars_;
  bool assign_;
  std::map<std::string, std::int64_t> assigned_;
  int dead_ = 0;  // inside a branch not taken: assignments are not made
  std::size_t pos_ = 0;
};

}  // namespace

std::optional<std::int64_t> parse_shell_int(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<std::int64_t> shell_arith(std::string_view expr,
                                        const std::map<std::string, std::vector<ShellField>>& vars) {
  return Arith(expr, vars, false).eval();
}

std::optional<std::int64_t> shell_arith_assign(std::string_view expr,
                                               std::map<std::string, std::vector<ShellField>>& vars, int line) {
  Arith a(expr, vars, true);
  auto v = a.eval();
  if (v) {  // an expression that fails part-way changes nothing
    for (const auto& [name, value] : a.assigned()) vars[name] = {{std::to_string(value), line}};
  }
  return v;
}

}  // namespace planck::import
