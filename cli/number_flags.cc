#include "cli/number_flags.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace planck::cli {

CLI::Validator whole_number(std::int64_t lo, std::int64_t hi) {
  const std::string range = "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, range](std::string& value) -> std::string {
        char* end = nullptr;
        errno = 0;
        const long long v = std::strtoll(value.c_str(), &end, 10);
        if (value.empty() || *end != '\0' || errno == ERANGE || v < lo || v > hi) {
          return "'" + value + "' is not " + range;
        }
        return "";
      },
      range);
}

std::optional<double> parse_finite(const std::string& text, double lo, double hi) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  // !(v >= lo && v <= hi) rather than (v < lo || v > hi): NaN fails every comparison.
  if (*end != '\0' || !std::isfinite(v) || !(v >= lo && v <= hi)) return std::nullopt;
  return v;
}

CLI::Validator finite_number(double lo, double hi, const std::string& unit) {
  char range[128];
  std::snprintf(range, sizeof range, "%s, a finite number from %g to %g", unit.c_str(), lo, hi);
  const std::string r = range;
  return CLI::Validator(
      [lo, hi, r](std::string& value) -> std::string {
        return parse_finite(value, lo, hi) ? "" : "'" + value + "' is not " + r;
      },
      r);
}

CLI::Validator finite_seconds(double lo, double hi) { return finite_number(lo, hi, "seconds"); }

}  // namespace planck::cli
