#pragma once
// Reading parsed JSON values safely: integers without wraparound, values quoted in messages
// without echoing megabytes.
//
// Integers: nlohmann::json stores 2^63 .. 2^64-1 as
// an unsigned number, and get<std::int64_t>() on one wraps it (18446744073709551615 read as -1,
// which an importer then took for "unset": issue 34). Every reader that wants an int64 from a
// JSON value asks here, and a value out of range is an error naming it, never a wrapped number.

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace planck::core {

// True for an integer above INT64_MAX, and for a number nlohmann could only hold as a float
// because it is beyond 64 bits or not finite (Python writes 2**70 and 10**400 as digits).
inline bool json_int_out_of_range(const nlohmann::json& v) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX);
  if (v.is_number_float()) {
    const double d = v.get<double>();
    return !std::isfinite(d) || std::fabs(d) >= 9223372036854775808.0;
  }
  return false;
}

// The value when it is an integer within int64; nullopt for anything else (floats included).
inline std::optional<std::int64_t> json_int64(const nlohmann::json& v) {
  if (!v.is_number_integer() || json_int_out_of_range(v)) return std::nullopt;
  return v.get<std::int64_t>();
}

// The value as JSON text for a message, cut to about `max_bytes` (on a UTF-8 boundary) with
// "... (N bytes)" after it: a bad value of 100 KB is named by its start, not echoed whole.
std::string json_excerpt(const nlohmann::json& v, std::size_t max_bytes = 80);

}  // namespace planck::core
