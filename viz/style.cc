#include "viz/style.h"
#include "core/base/str_cat.h"

#include <cstdio>

namespace planck::viz {

const char* group_fill(std::int64_t group) {
  static const char* kSet3[kGroupColours] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
                                             "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};
  if (group < 0) group = 0;
  return kSet3[group % kGroupColours];
}

const char* set_colour(int set_index) {
  static const char* kDark2[8] = {"#1b9e77", "#d95f02", "#7570b3", "#e7298a",
                                  "#66a61e", "#e6ab02", "#a6761d", "#666666"};
  if (set_index < 0) set_index = 0;
  return kDark2[set_index % 8];
}

std::string rank_id(std::int64_t rank) { return core::str_cat("r", std::to_string(rank)); }
std::string node_id(std::int64_t node) { return "node" + std::to_string(node); }

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
  // Three significant digits: 1.21 GB, 12.3 MB, 512 MB.
  const char* fmt = v < 10 ? "%.2f %s" : (v < 100 ? "%.1f %s" : "%.0f %s");
  std::snprintf(buf, sizeof buf, fmt, v, kUnits[unit]);
  return buf;
}

std::string format_ranks(const std::vector<std::int64_t>& ranks) {
  if (ranks.empty()) return "(none)";
  bool contiguous = true;
  for (std::size_t i = 1; i < ranks.size(); ++i) contiguous = contiguous && ranks[i] == ranks[i - 1] + 1;
  if (ranks.size() == 1) return rank_id(ranks[0]);
  if (contiguous) return rank_id(ranks.front()) + "\u2013" + rank_id(ranks.back());
  constexpr std::size_t kShown = 4;
  std::string out;
  if (ranks.size() <= 2 * kShown) {
    for (std::size_t i = 0; i < ranks.size(); ++i) out += core::str_cat(i ? " " : "", rank_id(ranks[i]));
    return out;
  }
  for (std::size_t i = 0; i < kShown - 1; ++i) out += rank_id(ranks[i]) + " ";
  out += "\u2026 " + rank_id(ranks.back()) + " (" + std::to_string(ranks.size()) + " ranks)";
  return out;
}

std::string tuple(const std::vector<std::string>& items) {
  std::string out = "(";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out + ")";
}

}  // namespace planck::viz
