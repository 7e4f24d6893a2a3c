#include "import/formats/toml_scan.h"

#include <vector>

#include "core/base/utf8.h"

namespace planck::import {

namespace {

class Scanner {
 public:
  Scanner(std::string_view text, const std::string& path) : t_(text), path_(path) {}

  core::Status run() {
    at_line_start_ = true;
    while (i_ < t_.size()) {
      const char c = t_[i_];
      if (c == '\n') {
        newline();
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r') {
        ++i_;
        continue;
      }
      if (c == '#') {  // to the end of the line
        while (i_ < t_.size() && t_[i_] != '\n') ++i_;
        continue;
      }
      if (at_line_start_ && stack_.empty()) {
        at_line_start_ = false;
        if (c == '[') {
          if (auto st = header(); !st) return st;
          continue;
        }
        start_key();
      }
      at_line_start_ = false;
      if (c == '"' || c == '\'') {
        skip_string();
        continue;
      }
      if (key_mode_ && c == '.') {
        if (++parts_ > kMaxTomlKeyParts) return too_many_parts("key");
      } else if (key_mode_ && c == '=') {
        key_mode_ = false;
      } else if (c == '[' || c == '{') {
        stack_.push_back(c);
        if (static_cast<int>(stack_.size()) > kMaxTomlNesting) {
          return error("arrays and inline tables nested more than " + std::to_string(kMaxTomlNesting) +
                       " deep; planck reads TOML nested at most " + std::to_string(kMaxTomlNesting) + " deep");
        }
        if (c == '{') start_key();
      } else if ((c == ']' || c == '}') && !stack_.empty()) {
        stack_.pop_back();
      } else if (c == ',' && !stack_.empty() && stack_.back() == '{') {
        start_key();
      }
      ++i_;
    }
    return core::Status::ok();
  }

 private:
  void newline() {
    ++line_;
    line_start_ = ++i_;
    at_line_start_ = true;
    if (stack_.empty()) key_mode_ = false;
  }
  void start_key() {
    key_mode_ = true;
    parts_ = 1;
  }
  // [a.b.c] or [[a.b.c]]: dotted parts up to the closing bracket.
  core::Status header() {
    parts_ = 1;
    ++i_;
    while (i_ < t_.size() && t_[i_] != ']' && t_[i_] != '\n') {
      if (t_[i_] == '"' || t_[i_] == '\'') {
        skip_string();
        continue;
      }
      if (t_[i_] == '.' && ++parts_ > kMaxTomlKeyParts) return too_many_parts("table header");
      ++i_;
    }
    return core::Status::ok();
  }
  // A basic or literal string, one-line or multi-line ("""/'''), from its opening quote.
  void skip_string() {
    const char q = t_[i_];
    const bool multi = t_.compare(i_, 3, std::string(3, q)) == 0;
    i_ += multi ? 3 : 1;
    while (i_ < t_.size()) {
      const char c = t_[i_];
      if (c == '\\' && q == '"') {
        i_ += 2;
        continue;
      }
      if (c == '\n') {
        if (!multi) return;  // malformed; toml++ will say so
        ++line_;
        line_start_ = i_ + 1;
      }
      if (c == q && (!multi || t_.compare(i_, 3, std::string(3, q)) == 0)) {
        i_ += multi ? 3 : 1;
        return;
      }
      ++i_;
    }
  }
  core::Status too_many_parts(const char* what) {
    return error(std::string("a ") + what + " of more than " + std::to_string(kMaxTomlKeyParts) +
                 " dotted parts; planck reads TOML keys of at most " + std::to_string(kMaxTomlKeyParts) + " parts");
  }
  core::Status error(const std::string& what) const {
    const std::size_t end = t_.find('\n', line_start_);
    const std::string_view line = t_.substr(line_start_, end == std::string_view::npos ? std::string_view::npos : end - line_start_);
    return core::Status::error(path_ + ":" + std::to_string(line_) + ": " + what + " (the line starts '" +
                               core::valid_utf8(core::excerpt(line, 40)) + "')");
  }

  std::string_view t_;
  const std::string& path_;
  std::size_t i_ = 0, line_start_ = 0;
  int line_ = 1;
  bool at_line_start_ = true, key_mode_ = false;
  int parts_ = 1;
  std::vector<char> stack_;
};

}  // namespace

core::Status check_toml_limits(std::string_view text, const std::string& path) { return Scanner(text, path).run(); }

}  // namespace planck::import
