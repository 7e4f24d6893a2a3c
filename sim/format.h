#pragma once
// Human-readable figures for the text outputs of simulate and enumerate; bytes go through
// core::format_bytes (core/base/format.h), the one byte formatter.

#include <cstdint>
#include <string>

namespace planck::sim {

std::string human_seconds(double s);          // "1.234 s", "12.5 ms", "8.4 us"
// Pads or keeps `s` to `width` columns (left-aligned).
std::string pad(const std::string& s, std::size_t width);

}  // namespace planck::sim
