// Group placement (core/mesh/placement.h): exact from members, or from mesh strides in O(1) of
// the world size.
//
// Rank r sits on node r / G (block placement, docs/plan-format.md). A group's members are
// base + sum_i c_i x stride_i over its varied dims; bases differ by the fixed dims. Only
// base mod G matters for how the group lies across node boundaries, so we collect the reachable
// residues (at most G) and take the worst.

#include <algorithm>

#include "core/mesh/placement.h"

namespace planck::core {
namespace {

// Members of a low-stride part enumerated explicitly up to this many.
constexpr std::int64_t kExplicitLimit = 1024;

struct Dim {
  std::int64_t size, stride;
};

// Residues base mod G reachable through the fixed dims.
std::vector<std::int64_t> residues(const std::vector<Dim>& fixed, std::int64_t g) {
  std::vector<char> seen(static_cast<std::size_t>(g), 0), next(static_cast<std::size_t>(g), 0);
  seen[0] = 1;
  std::int64_t count = 1;
  for (const Dim& d : fixed) {
    if (count >= g) break;
    std::fill(next.begin(), next.end(), 0);
    const std::int64_t steps = std::min(d.size, g);  // c x stride mod G repeats within G steps
    const std::int64_t step = d.stride % g;
    for (std::int64_t base = 0; base < g; ++base) {
      if (!seen[static_cast<std::size_t>(base)]) continue;
      for (std::int64_t c = 0; c < steps; ++c) next[static_cast<std::size_t>((base + c * step) % g)] = 1;
    }
    seen.swap(next);
    count = std::count(seen.begin(), seen.end(), 1);
  }
  std::vector<std::int64_t> out;
  for (std::int64_t r = 0; r < g; ++r) {
    if (seen[static_cast<std::size_t>(r)]) out.push_back(r);
  }
  return out;
}

}  // namespace

Placement placement_of(const GroupSet& groups, std::int64_t gpus_per_node) {
  Placement p;
  p.nodes_spanned = std::max<std::int64_t>(1, groups.max_nodes_spanned(std::max<std::int64_t>(1, gpus_per_node)));
  const std::int64_t n = groups.group_size();
  p.ranks_per_node = std::max<std::int64_t>(1, (n + p.nodes_spanned - 1) / p.nodes_spanned);
  return p;
}

Placement placement_of(const Mesh& mesh, const std::vector<std::string>& dims, std::int64_t gpus_per_node) {
  const std::int64_t g = std::max<std::int64_t>(1, gpus_per_node);
  std::vector<Dim> lo, fixed;
  std::int64_t hi_groups = 1, n = 1;
  for (int i = 0; i < mesh.ndims(); ++i) {
    const Dim d{mesh.sizes()[i], mesh.strides()[i]};
    if (d.size <= 1) continue;
    const bool varied = std::find(dims.begin(), dims.end(), mesh.dims()[i]) != dims.end();
    if (!varied) {
      fixed.push_back(d);
      continue;
    }
    n *= d.size;
    // A stride that is a multiple of G moves whole nodes: each coordinate is another node set.
    if (d.stride % g == 0) {
      hi_groups *= d.size;
    } else {
      lo.push_back(d);
    }
  }
  if (n <= 1) return {};
  if (g >= mesh.world()) return {1, n};  // one node holds everything
  std::int64_t lo_count = 1, lo_extent = 1;
  for (const Dim& d : lo) {
    lo_count *= d.size;
    lo_extent += (d.size - 1) * d.stride;
  }
  std::vector<std::int64_t> offsets;
  if (lo_count <= kExplicitLimit) {
    offsets.push_back(0);
    for (const Dim& d : lo) {
      std::vector<std::int64_t> next;
      next.reserve(offsets.size() * static_cast<std::size_t>(d.size));
      for (std::int64_t o : offsets) {
        for (std::int64_t c = 0; c < d.size; ++c) next.push_back(o + c * d.stride);
      }
      offsets.swap(next);
    }
    // Row-major strides: generated outermost first, the offsets come out ascending already.
    if (!std::is_sorted(offsets.begin(), offsets.end())) std::sort(offsets.begin(), offsets.end());
  }
  std::int64_t worst = 1;
  // Past this node size the residue scan would cost more than it tells; read offset 0 only.
  constexpr std::int64_t kResidueLimit = 1 << 16;
  const std::vector<std::int64_t> starts = g <= kResidueLimit ? residues(fixed, g) : std::vector<std::int64_t>{0};
  for (std::int64_t r : starts) {
    std::int64_t nodes = 0;
    if (!offsets.empty()) {
      std::int64_t last = -1;
      for (std::int64_t o : offsets) {
        const std::int64_t node = (r + o) / g;
        if (node != last) ++nodes;
        last = node;
      }
    } else {
      nodes = (r + lo_extent - 1) / g + 1;
    }
    worst = std::max(worst, nodes);
  }
  Placement p;
  p.nodes_spanned = worst * hi_groups;
  p.ranks_per_node = std::max<std::int64_t>(1, (n + p.nodes_spanned - 1) / p.nodes_spanned);
  return p;
}

int placement_priority(const std::string& dim) {
  if (dim == "tp") return 4;
  if (dim == "cp" || dim == "ep") return 3;
  if (dim == "dp_shard" || dim == "dp") return 2;
  return 1;  // dp_replicate, pp
}

std::int64_t ranks_placed_inside(const Mesh& mesh, const std::vector<std::string>& dims) {
  int lowest = 5;
  for (const auto& d : dims) lowest = std::min(lowest, placement_priority(d));
  std::int64_t inner = 1;
  for (const auto& d : mesh.dims()) {
    if (std::find(dims.begin(), dims.end(), d) == dims.end() && placement_priority(d) > lowest) inner *= mesh.size(d);
  }
  return inner;
}

bool crossing_avoidable(const Mesh& mesh, const std::vector<std::string>& dims, std::int64_t gpus_per_node) {
  std::int64_t size = 1;
  for (const auto& d : dims) size *= mesh.size(d);
  const std::int64_t block = ranks_placed_inside(mesh, dims) * size;
  return size > 1 && block <= gpus_per_node && gpus_per_node % block == 0;
}

}  // namespace planck::core
