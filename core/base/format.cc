#include "core/base/format.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace planck::core {

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

std::string format_bytes(std::int64_t bytes) {
  static const char* kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
  if (bytes < 1000) return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (v >= 1000.0 && unit < 6) {
    v /= 1000.0;
    ++unit;
  }
  char buf[32];
  const char* fmt = v < 10 ? "%.2f %s" : (v < 100 ? "%.1f %s" : "%.0f %s");
  std::snprintf(buf, sizeof buf, fmt, v, kUnits[unit]);
  return buf;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  // Levenshtein distance; suggest the closest candidate within a third of the word's length.
  auto dist = [](std::string_view a, std::string_view b) {
    std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      cur[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j) {
        std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
      }
      std::swap(prev, cur);
    }
    return prev[b.size()];
  };
  if (word.size() > 256) return "";
  std::size_t best = SIZE_MAX;
  std::string pick;
  for (const auto& c : candidates) {
    std::size_t d = dist(word, c);
    if (d < best) {
      best = d;
      pick = c;
    }
  }
  std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  if (pick.empty() || best > limit) return "";
  return "did you mean '" + pick + "'?";
}

}  // namespace planck::core
