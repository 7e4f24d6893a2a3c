#include "core/base/json_scan.h"

#include <algorithm>

namespace planck::core {

namespace {

// Index just past the string whose opening quote is at `i` (or text.size() when unterminated).
std::size_t skip_string(std::string_view text, std::size_t i) {
  for (++i; i < text.size(); ++i) {
    if (text[i] == '\\') ++i;
    else if (text[i] == '"') return i + 1;
  }
  return text.size();
}

}  // namespace

Status check_json_nesting(std::string_view text, const std::string& source, int max_depth) {
  int depth = 0, line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '"') {
      const std::size_t end = skip_string(text, i);
      // A string may not hold a raw newline in JSON, but keep the count right if one does.
      for (std::size_t k = i; k < end; ++k) {
        if (text[k] == '\n') ++line, line_start = k + 1;
      }
      i = end;
      continue;
    }
    if (c == '\n') ++line, line_start = i + 1;
    if (c == '[' || c == '{') {
      if (++depth > max_depth) {
        return Status::error(source + ":" + std::to_string(line) + ":" + std::to_string(i - line_start + 1) +
                             ": arrays and objects nested more than " + std::to_string(max_depth) +
                             " deep; planck reads JSON nested at most " + std::to_string(max_depth) + " deep");
      }
    } else if (c == ']' || c == '}') {
      depth = std::max(0, depth - 1);
    }
    ++i;
  }
  return Status::ok();
}

std::unordered_map<std::string, int> member_key_lines(std::string_view text, std::size_t key_at) {
  std::unordered_map<std::string, int> out;
  if (key_at >= text.size()) return out;
  int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(key_at), '\n'));
  std::size_t i = skip_string(text, key_at);
  // To the object that is the key's value.
  while (i < text.size() && text[i] != '{') {
    if (text[i] == '\n') ++line;
    if (text[i] != ':' && text[i] != ' ' && text[i] != '\t' && text[i] != '\r' && text[i] != '\n') return out;
    ++i;
  }
  int depth = 0;
  bool expect_key = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      const std::size_t end = skip_string(text, i);
      if (depth == 1 && expect_key) {
        const std::string_view key = text.substr(i + 1, end - i - 2 < text.size() ? end - i - 2 : 0);
        if (key.find('\\') == std::string_view::npos) out.emplace(std::string(key), line);
        expect_key = false;
      }
      line += static_cast<int>(std::count(text.begin() + static_cast<long>(i), text.begin() + static_cast<long>(end), '\n'));
      i = end - 1;
    } else if (c == '\n') {
      ++line;
    } else if (c == '{' || c == '[') {
      ++depth;
      expect_key = depth == 1;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) break;
    } else if (c == ',' && depth == 1) {
      expect_key = true;
    }
  }
  return out;
}

std::unordered_map<std::string, JsonMember> top_level_members(std::string_view text) {
  std::unordered_map<std::string, JsonMember> out;
  auto space = [&](std::size_t i) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) ++i;
    return i;
  };
  std::size_t i = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;  // a UTF-8 BOM
  i = space(i);
  if (i >= text.size() || text[i] != '{') return out;
  ++i;
  for (;;) {
    i = space(i);
    if (i >= text.size() || text[i] != '"') return out;
    const std::size_t key_at = i;
    const std::size_t key_end = skip_string(text, i);
    const std::string key(text.substr(key_at + 1, key_end - key_at - 2));
    i = space(key_end);
    if (i >= text.size() || text[i] != ':') return out;
    const std::size_t begin = space(i + 1);
    int depth = 0;
    for (i = begin; i < text.size(); ++i) {
      const char c = text[i];
      if (c == '"') {
        i = skip_string(text, i) - 1;
      } else if (c == '[' || c == '{') {
        ++depth;
      } else if (c == ']' || c == '}') {
        if (depth == 0) break;  // the top-level object's own '}'
        --depth;
      } else if (c == ',' && depth == 0) {
        break;
      }
    }
    std::size_t end = i;
    while (end > begin && (text[end - 1] == ' ' || text[end - 1] == '\t' || text[end - 1] == '\n' || text[end - 1] == '\r')) --end;
    out.emplace(key, JsonMember{key_at, text.substr(begin, end - begin)});
    if (i >= text.size() || text[i] == '}') return out;
    ++i;  // past ','
  }
}

}  // namespace planck::core
