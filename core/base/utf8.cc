#include "core/base/utf8.h"

#include <cstdio>

namespace planck::core {

std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  const std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  bool ok = len > 0 && i + len <= s.size() && !(len == 2 && c < 0xC2) && !(len == 4 && c > 0xF4);
  for (std::size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(s[i + k]) >> 6) == 0x2;
  if (ok && len == 3) {  // no overlong forms, no UTF-16 surrogates
    const auto c1 = static_cast<unsigned char>(s[i + 1]);
    ok = !(c == 0xE0 && c1 < 0xA0) && !(c == 0xED && c1 >= 0xA0);
  }
  if (ok && len == 4) {
    const auto c1 = static_cast<unsigned char>(s[i + 1]);
    ok = !(c == 0xF0 && c1 < 0x90) && !(c == 0xF4 && c1 >= 0x90);
  }
  return ok ? len : 0;
}

namespace {

template <class Invalid>
std::string replace_invalid(std::string_view s, Invalid on_invalid) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    if (const std::size_t len = utf8_sequence_length(s, i)) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      on_invalid(out, static_cast<unsigned char>(s[i]));
      ++i;
    }
  }
  return out;
}

}  // namespace

std::string valid_utf8(std::string_view s) {
  return replace_invalid(s, [](std::string& out, unsigned char) { out += kReplacementChar; });
}

std::string escape_invalid_utf8(std::string_view s) {
  return replace_invalid(s, [](std::string& out, unsigned char c) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "\\x%02X", c);
    out += hex;
  });
}

std::string excerpt(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) >> 6) == 0x2) --cut;  // not inside a sequence
  return std::string(text.substr(0, cut)) + "... (" + std::to_string(text.size()) + " bytes)";
}

}  // namespace planck::core
