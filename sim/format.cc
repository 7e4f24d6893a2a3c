#include "sim/format.h"

#include <cmath>
#include <cstdio>

namespace planck::sim {

std::string human_seconds(double s) {
  char buf[64];
  if (!std::isfinite(s)) return "inf";
  if (s >= 1.0) {
    std::snprintf(buf, sizeof buf, "%.3f s", s);
  } else if (s >= 1e-3) {
    std::snprintf(buf, sizeof buf, "%.2f ms", s * 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f us", s * 1e6);
  }
  return buf;
}

std::string pad(const std::string& s, std::size_t width) {
  return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' ');
}

}  // namespace planck::sim
