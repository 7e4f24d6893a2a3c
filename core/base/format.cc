#include "core/base/format.h"

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

}  // namespace planck::core
