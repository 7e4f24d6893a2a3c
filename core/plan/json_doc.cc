#include "core/plan/json_doc.h"
#include "core/base/str_cat.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace planck::core {
namespace {

// Recursive-descent JSON (RFC 8259) that records the position of every value and key.
class Parser {
 public:
  Parser(std::string_view text, JsonDoc* doc) : s_(text), doc_(doc) {}

  bool run(nlohmann::json* out, JsonParseError* err) {
    err_ = err;
    skip_ws();
    if (at_end()) return fail("the file is empty: expected a JSON value");
    std::string ptr;
    if (!value(out, ptr, 0)) return false;
    skip_ws();
    if (!at_end()) return fail("unexpected text after the end of the JSON document");
    return true;
  }

 private:
  bool at_end() const { return i_ >= s_.size(); }
  char peek() const { return s_[i_]; }
  SourcePos here() const { return {line_, static_cast<int>(i_ - line_start_) + 1}; }

  bool fail(std::string msg) {
    if (err_) {
      err_->message = std::move(msg);
      err_->pos = here();
    }
    return false;
  }

  void advance() {
    if (s_[i_] == '\n') {
      ++line_;
      line_start_ = i_ + 1;
    }
    ++i_;
  }

  void skip_ws() {
    while (!at_end()) {
      char c = peek();
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        advance();
      } else {
        break;
      }
    }
  }

  bool expect_literal(std::string_view lit) {
    if (s_.substr(i_, lit.size()) != lit) return fail("invalid literal: expected '" + std::string(lit) + "'");
    i_ += lit.size();
    return true;
  }

  bool value(nlohmann::json* out, std::string& ptr, int depth) {
    if (depth > JsonDoc::kMaxDepth) {
      return fail("nesting deeper than " + std::to_string(JsonDoc::kMaxDepth) + " levels");
    }
    if (at_end()) return fail("unexpected end of file: expected a value");
    char c = peek();
    // Positions of every container, and of scalars up to a budget: a 100 MB plan of rank lists
    // must not cost gigabytes of index. Unrecorded values report their nearest ancestor.
    if (c == '{' || c == '[' || recorded_ < kScalarPositionBudget) {
      doc_->set_position(ptr, here());
      ++recorded_;
    }
    switch (c) {
      case '{': return object(out, ptr, depth);
      case '[': return array(out, ptr, depth);
      case '"': {
        std::string str;
        if (!string(&str)) return false;
        *out = std::move(str);
        return true;
      }
      case 't': *out = true; return expect_literal("true");
      case 'f': *out = false; return expect_literal("false");
      case 'n': *out = nullptr; return expect_literal("null");
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return number(out);
        if (c == '\0') return fail("NUL byte in the file: not JSON text");
        return fail(std::string("unexpected character '") + printable(c) + "': expected a JSON value");
    }
  }

  static std::string printable(char c) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) return std::string(1, c);
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", u);
    return buf;
  }

  bool object(nlohmann::json* out, std::string& ptr, int depth) {
    advance();  // '{'
    *out = nlohmann::json::object();
    skip_ws();
    if (!at_end() && peek() == '}') {
      advance();
      return true;
    }
    while (true) {
      skip_ws();
      if (at_end()) return fail("unexpected end of file inside an object: expected '\"' or '}'");
      if (peek() != '"') return fail(std::string("expected a quoted key, found '") + printable(peek()) + "'");
      SourcePos key_pos = here();
      std::string key;
      if (!string(&key)) return false;
      if (out->contains(key)) {
        const SourcePos first = doc_->key_position(ptr + "/" + json_pointer_escape(key));
        std::string msg = str_cat("key '", key, "' appears twice in one object");
        if (first.line > 0) msg += str_cat(" (first at line ", std::to_string(first.line), ")");
        if (err_) err_->duplicate_key = true;
        return fail_at(key_pos, std::move(msg));
      }
      skip_ws();
      if (at_end() || peek() != ':') return fail("expected ':' after the key '" + key + "'");
      advance();
      skip_ws();
      std::size_t saved = ptr.size();
      ptr += '/';
      ptr += json_pointer_escape(key);
      doc_->set_key_position(ptr, key_pos);
      nlohmann::json child;
      if (!value(&child, ptr, depth + 1)) return false;
      ptr.resize(saved);
      (*out)[key] = std::move(child);
      skip_ws();
      if (at_end()) return fail("unexpected end of file inside an object: expected ',' or '}'");
      if (peek() == ',') {
        advance();
        continue;
      }
      if (peek() == '}') {
        advance();
        return true;
      }
      return fail(std::string("expected ',' or '}' after an object member, found '") + printable(peek()) + "'");
    }
  }

  bool fail_at(SourcePos pos, std::string msg) {
    if (err_) {
      err_->message = std::move(msg);
      err_->pos = pos;
    }
    return false;
  }

  bool array(nlohmann::json* out, std::string& ptr, int depth) {
    advance();  // '['
    *out = nlohmann::json::array();
    skip_ws();
    if (!at_end() && peek() == ']') {
      advance();
      return true;
    }
    std::size_t index = 0;
    while (true) {
      skip_ws();
      std::size_t saved = ptr.size();
      ptr += '/';
      ptr += std::to_string(index);
      nlohmann::json child;
      if (!value(&child, ptr, depth + 1)) return false;
      ptr.resize(saved);
      out->push_back(std::move(child));
      ++index;
      skip_ws();
      if (at_end()) return fail("unexpected end of file inside an array: expected ',' or ']'");
      if (peek() == ',') {
        advance();
        continue;
      }
      if (peek() == ']') {
        advance();
        return true;
      }
      return fail(std::string("expected ',' or ']' after an array element, found '") + printable(peek()) + "'");
    }
  }

  static void append_utf8(std::string* out, std::uint32_t cp) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  bool hex4(std::uint32_t* v) {
    if (i_ + 4 > s_.size()) return fail("unexpected end of file in a \\u escape");
    *v = 0;
    for (int k = 0; k < 4; ++k) {
      char c = s_[i_ + k];
      *v <<= 4;
      if (c >= '0' && c <= '9') *v |= static_cast<std::uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f') *v |= static_cast<std::uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') *v |= static_cast<std::uint32_t>(c - 'A' + 10);
      else return fail("invalid \\u escape: expected 4 hex digits");
    }
    i_ += 4;
    return true;
  }

  // Length of a valid UTF-8 sequence starting at i_, or 0.
  std::size_t utf8_len() const {
    auto b = [&](std::size_t k) { return static_cast<unsigned char>(s_[i_ + k]); };
    unsigned char c = b(0);
    std::size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    if (c > 0xF4 || n == 0 || i_ + n > s_.size()) return 0;
    for (std::size_t k = 1; k < n; ++k) {
      if ((b(k) & 0xC0) != 0x80) return 0;
    }
    if (n == 3 && ((c == 0xE0 && b(1) < 0xA0) || (c == 0xED && b(1) > 0x9F))) return 0;  // overlong, surrogate
    if (n == 4 && ((c == 0xF0 && b(1) < 0x90) || (c == 0xF4 && b(1) > 0x8F))) return 0;
    return n;
  }

  bool string(std::string* out) {
    advance();  // opening quote
    while (true) {
      if (at_end()) return fail("unexpected end of file inside a string: missing closing '\"'");
      unsigned char c = static_cast<unsigned char>(peek());
      if (c == '"') {
        advance();
        return true;
      }
      if (c == '\\') {
        ++i_;
        if (at_end()) return fail("unexpected end of file in an escape");
        char e = peek();
        ++i_;
        switch (e) {
          case '"': out->push_back('"'); break;
          case '\\': out->push_back('\\'); break;
          case '/': out->push_back('/'); break;
          case 'b': out->push_back('\b'); break;
          case 'f': out->push_back('\f'); break;
          case 'n': out->push_back('\n'); break;
          case 'r': out->push_back('\r'); break;
          case 't': out->push_back('\t'); break;
          case 'u': {
            std::uint32_t cp = 0;
            if (!hex4(&cp)) return false;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
              std::uint32_t lo = 0;
              if (s_.substr(i_, 2) != "\\u") return fail("unpaired UTF-16 surrogate in a \\u escape");
              i_ += 2;
              if (!hex4(&lo)) return false;
              if (lo < 0xDC00 || lo > 0xDFFF) return fail("unpaired UTF-16 surrogate in a \\u escape");
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
              return fail("unpaired UTF-16 surrogate in a \\u escape");
            }
            append_utf8(out, cp);
            break;
          }
          default:
            --i_;
            return fail(std::string("invalid escape '\\") + printable(e) + "' in a string");
        }
        continue;
      }
      if (c < 0x20) {
        if (c == 0) return fail("NUL byte inside a string");
        return fail("control character inside a string (newline or tab must be escaped)");
      }
      if (c < 0x80) {
        out->push_back(static_cast<char>(c));
        ++i_;
        continue;
      }
      std::size_t n = utf8_len();
      if (n == 0) return fail("invalid UTF-8 byte sequence inside a string");
      out->append(s_.substr(i_, n));
      i_ += n;
    }
  }

  bool number(nlohmann::json* out) {
    std::size_t start = i_;
    bool is_float = false;
    if (peek() == '-') ++i_;
    if (at_end() || !(peek() >= '0' && peek() <= '9')) return fail("invalid number: expected a digit");
    if (peek() == '0') {
      ++i_;
      if (!at_end() && peek() >= '0' && peek() <= '9') return fail("invalid number: leading zeros are not allowed");
    } else {
      while (!at_end() && peek() >= '0' && peek() <= '9') ++i_;
    }
    if (!at_end() && peek() == '.') {
      is_float = true;
      ++i_;
      if (at_end() || !(peek() >= '0' && peek() <= '9')) return fail("invalid number: expected a digit after '.'");
      while (!at_end() && peek() >= '0' && peek() <= '9') ++i_;
    }
    if (!at_end() && (peek() == 'e' || peek() == 'E')) {
      is_float = true;
      ++i_;
      if (!at_end() && (peek() == '+' || peek() == '-')) ++i_;
      if (at_end() || !(peek() >= '0' && peek() <= '9')) return fail("invalid number: expected a digit in the exponent");
      while (!at_end() && peek() >= '0' && peek() <= '9') ++i_;
    }
    std::string text(s_.substr(start, i_ - start));
    if (!is_float) {
      errno = 0;
      char* end = nullptr;
      long long v = std::strtoll(text.c_str(), &end, 10);
      if (errno == 0) {
        *out = static_cast<std::int64_t>(v);
        return true;
      }
      if (text[0] != '-') {
        errno = 0;
        unsigned long long u = std::strtoull(text.c_str(), &end, 10);
        if (errno == 0) {
          *out = static_cast<std::uint64_t>(u);
          return true;
        }
      }
      // Larger than 64 bits: keep it as a double; schema checks report it as out of range.
    }
    double d = std::strtod(text.c_str(), nullptr);
    if (!std::isfinite(d)) d = text[0] == '-' ? -std::numeric_limits<double>::max() : std::numeric_limits<double>::max();
    *out = d;
    return true;
  }

  std::string_view s_;
  JsonDoc* doc_;
  JsonParseError* err_ = nullptr;
  static constexpr std::size_t kScalarPositionBudget = 200000;
  std::size_t recorded_ = 0;
  std::size_t i_ = 0;
  int line_ = 1;
  std::size_t line_start_ = 0;
};

}  // namespace

std::optional<JsonDoc> JsonDoc::parse(std::string_view text, JsonParseError* error) {
  JsonDoc doc;
  Parser p(text, &doc);
  JsonParseError local;
  if (error) *error = JsonParseError{};
  if (!p.run(&doc.root_, error ? error : &local)) return std::nullopt;
  return doc;
}

SourcePos JsonDoc::position(std::string_view pointer) const {
  std::string p(pointer);
  while (true) {
    auto it = values_.find(p);
    if (it != values_.end()) return it->second;
    if (p.empty()) return {};
    auto slash = p.rfind('/');
    p.resize(slash == std::string::npos ? 0 : slash);
  }
}

SourcePos JsonDoc::key_position(std::string_view pointer) const {
  auto it = keys_.find(std::string(pointer));
  if (it != keys_.end()) return it->second;
  return position(pointer);
}

std::string json_pointer_escape(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

}  // namespace planck::core
