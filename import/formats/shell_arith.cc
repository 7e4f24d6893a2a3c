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

// Integer arithmetic of $(( )): + - * / % and parentheses, overflow and division by zero unknown.
class Arith {
 public:
  Arith(std::string_view s, const std::map<std::string, std::vector<ShellField>>& vars) : s_(s), vars_(vars) {}
  std::optional<std::int64_t> eval() {
    auto v = sum(0);
    skip();
    return v && pos_ == s_.size() ? v : std::nullopt;
  }

 private:
  void skip() {
    while (pos_ < s_.size() && is_blank(s_[pos_])) ++pos_;
  }
  std::optional<std::int64_t> sum(int depth) {
    auto a = product(depth);
    while (a) {
      skip();
      if (pos_ >= s_.size() || (s_[pos_] != '+' && s_[pos_] != '-')) break;
      const char op = s_[pos_++];
      auto b = product(depth);
      if (!b) return std::nullopt;
      std::int64_t r = 0;
      if (op == '+' ? __builtin_add_overflow(*a, *b, &r) : __builtin_sub_overflow(*a, *b, &r)) return std::nullopt;
      a = r;
    }
    return a;
  }
  std::optional<std::int64_t> product(int depth) {
    auto a = unary(depth);
    while (a) {
      skip();
      if (pos_ >= s_.size() || (s_[pos_] != '*' && s_[pos_] != '/' && s_[pos_] != '%')) break;
      const char op = s_[pos_++];
      auto b = unary(depth);
      if (!b) return std::nullopt;
      if (op == '*') {
        a = checked_mul(*a, *b);
      } else {
        if (*b == 0 || (*a == INT64_MIN && *b == -1)) return std::nullopt;
        a = op == '/' ? *a / *b : *a % *b;
      }
    }
    return a;
  }
  std::optional<std::int64_t> unary(int depth) {
    skip();
    if (depth > kMaxDepth || pos_ >= s_.size()) return std::nullopt;
    const char c = s_[pos_];
    if (c == '-' || c == '+') {
      ++pos_;
      auto v = unary(depth + 1);
      if (!v || (c == '-' && *v == INT64_MIN)) return std::nullopt;
      return c == '-' ? -*v : *v;
    }
    if (c == '(') {
      ++pos_;
      auto v = sum(depth + 1);
      skip();
      if (!v || pos_ >= s_.size() || s_[pos_] != ')') return std::nullopt;
      ++pos_;
      return v;
    }
    std::size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    std::string_view tok = s_.substr(start, pos_ - start);
    if (tok.empty()) return std::nullopt;
    if (std::isdigit(static_cast<unsigned char>(tok[0]))) return parse_shell_int(tok);
    auto it = vars_.find(std::string(tok));  // a bare name in $(( )) is its value, unset = 0
    if (it == vars_.end() || it->second.empty()) return 0;
    return parse_shell_int(it->second.front().text);
  }

  std::string_view s_;
  const std::map<std::string, std::vector<ShellField>>& vars_;
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
  return Arith(expr, vars).eval();
}

}  // namespace planck::import
