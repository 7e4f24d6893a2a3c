#include "core/mesh/group_text.h"
#include "core/base/str_cat.h"

namespace planck::core {

std::string rank_list_text(const std::vector<std::int64_t>& ranks, std::size_t max_items) {
  std::string s = "[";
  std::size_t items = 0;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (items == max_items) {
      s += ",...";
      break;
    }
    if (items) s += ',';
    if (j - i >= 2) {
      s += std::to_string(ranks[i]) + ".." + std::to_string(ranks[j]);
      i = j + 1;
    } else {
      s += std::to_string(ranks[i]);
      i += 1;
    }
    ++items;
  }
  return s + "]";
}

std::string group_set_text(const GroupSet& groups, std::int64_t max_groups) {
  std::string s = std::to_string(groups.num_groups()) + (groups.num_groups() == 1 ? " group of " : " groups of ") +
                  std::to_string(groups.group_size()) + ": ";
  for (std::int64_t g = 0; g < groups.num_groups(); ++g) {
    if (g == max_groups) {
      s += ", ...";
      break;
    }
    if (g) s += ", ";
    if (groups.group_size() > 4096) {
      s += str_cat("[", std::to_string(groups.member(g, 0)), ",...]");
    } else {
      s += rank_list_text(groups.members(g));
    }
  }
  return s;
}

std::string coord_text(const Mesh& mesh, std::int64_t rank) {
  std::string s = "(";
  for (int d = 0; d < mesh.ndims(); ++d) {
    if (d) s += ", ";
    s += mesh.dims()[d] + "=" + std::to_string(mesh.coord(rank, d));
  }
  return s + ")";
}

}  // namespace planck::core
