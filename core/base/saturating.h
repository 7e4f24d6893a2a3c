#pragma once
// The one overflow policy for byte and call counts: saturate at INT64_MAX. An absurd plan
// (bytes x calls past 2^63) reports the largest count, never a wrapped negative one; sim/ then
// reports it as not fitting. Negative operands count as zero (nothing is sent).

#include <cstdint>
#include <limits>

namespace planck::core {

inline constexpr std::int64_t kSaturated = std::numeric_limits<std::int64_t>::max();

inline std::int64_t sat_add(std::int64_t a, std::int64_t b) {
  if (a <= 0) return b > 0 ? b : 0;
  if (b <= 0) return a;
  return a > kSaturated - b ? kSaturated : a + b;
}

inline std::int64_t sat_mul(std::int64_t a, std::int64_t b) {
  if (a <= 0 || b <= 0) return 0;
  return a > kSaturated / b ? kSaturated : a * b;
}

}  // namespace planck::core
