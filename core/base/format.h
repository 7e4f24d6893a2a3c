#pragma once
// The text helpers every part shares: one join, one byte formatter (GB means 1e9 bytes).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace planck::core {

// parts[0] + sep + parts[1] + ...; "" for none.
std::string join(const std::vector<std::string>& parts, std::string_view sep);

// Decimal units to three significant digits: "999 B", "1.50 kB", "12.3 MB", "512 MB", "1.21 GB",
// "26.0 GB", up to EB.
std::string format_bytes(std::int64_t bytes);

// "did you mean 'X'?" for the candidate closest to `word` (Levenshtein distance within a third of
// its length, at least 2), or "" when none is that close.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace planck::core
