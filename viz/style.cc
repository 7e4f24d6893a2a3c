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

// Appended, not "r" + to_string(): GCC 12 warns falsely (-Wrestrict) on the inlined operator+.
std::string rank_id(std::int64_t rank) { return std::string("r").append(std::to_string(rank)); }
std::string node_id(std::int64_t node) { return std::string("node").append(std::to_string(node)); }

std::string format_ranks(const std::vector<std::int64_t>& ranks) {
  if (ranks.empty()) return "(none)";
  bool contiguous = true;
  for (std::size_t i = 1; i < ranks.size(); ++i) contiguous = contiguous && ranks[i] == ranks[i - 1] + 1;
  if (ranks.size() == 1) return rank_id(ranks[0]);
  if (contiguous) return rank_id(ranks.front()) + "\u2013" + rank_id(ranks.back());
  constexpr std::size_t kShown = 4;
  std::string out;
  if (ranks.size() <= 2 * kShown) {
    for (std::size_t i = 0; i < ranks.size(); ++i) out.append(i ? " " : "").append(rank_id(ranks[i]));
    return out;
  }
  for (std::size_t i = 0; i < kShown - 1; ++i) out += rank_id(ranks[i]) + " ";
  out.append("\u2026 ").append(rank_id(ranks.back())).append(" (").append(std::to_string(ranks.size())).append(" ranks)");
  return out;
}

std::string tuple(const std::vector<std::string>& items) {
  std::string out = "(";
  out += core::join(items, ", ");
  return out + ")";
}

}  // namespace planck::viz
