#include "import/deepspeed/hjson.h"

namespace planck::import {

namespace {

// Blanks [from, to) but keeps line breaks, so positions after it do not move.
void blank(std::string& s, std::size_t from, std::size_t to) {
  for (std::size_t i = from; i < to && i < s.size(); ++i) {
    if (s[i] != '\n' && s[i] != '\r') s[i] = ' ';
  }
}

core::SourcePos position_of(std::string_view text, std::size_t at) {
  core::SourcePos p{1, 1};
  for (std::size_t i = 0; i < at && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++p.line;
      p.column = 1;
    } else {
      ++p.column;
    }
  }
  return p;
}

}  // namespace

HjsonStripped strip_hjson(std::string_view text) {
  HjsonStripped out{std::string(text), {}};
  std::string& s = out.text;
  bool in_string = false;
  std::size_t last_comma = std::string::npos;  // a comma with only blanks after it so far
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '#' || (c == '/' && i + 1 < s.size() && s[i + 1] == '/')) {
      const std::size_t end = s.find('\n', i);
      blank(s, i, end == std::string::npos ? s.size() : end);
      i = end == std::string::npos ? s.size() : end;
      continue;
    }
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      const std::size_t end = s.find("*/", i + 2);
      if (end == std::string::npos) {
        out.error = position_of(text, i);
        return out;
      }
      blank(s, i, end + 2);
      i = end + 1;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    if ((c == '}' || c == ']') && last_comma != std::string::npos) s[last_comma] = ' ';
    last_comma = c == ',' ? i : std::string::npos;
    if (c == '"') in_string = true;
  }
  return out;
}

}  // namespace planck::import
