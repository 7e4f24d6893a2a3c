#pragma once
// Words for the rank rules: messages that name the ranks, coordinates and values, witnesses in
// docs/verify.md's shape, and the mixed-radix fix as a hint.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/base/diagnostics.h"
#include "core/rank/rank_analysis.h"
#include "core/rank/rank_eval.h"
#include "core/rank/rank_latent.h"

namespace planck::core {

struct RankText {
  const RankSpace& space;
  std::string prefix;              // "dp"
  std::vector<std::string> dims;   // the output's dims, as configured

  // ranks with their coordinates (all mesh dims), and the named values.
  Witness witness(const std::vector<std::int64_t>& ranks,
                  std::vector<std::pair<std::string, std::int64_t>> values) const;
  // "dp_replicate, dp_shard" for space dim indices.
  std::string dim_list(const std::vector<int>& dims) const;
  // "dp_replicate x dp_shard = 8 x 4 = 32"
  std::string degree_text() const;
  // "dp_rank = dp_replicate.rank * dp_shard.size + dp_shard.rank; dp_degree = ..."
  std::string fix_hint() const;
  // One diagnostic per rule the verdict fires.
  void report(const OutputVerdict& v, const std::string& rank_pointer, const std::string& degree_pointer,
              Diagnostics& out) const;
  // rank-latent for a sweep that found a failing mesh.
  void report_latent(const SweepResult& sweep, const std::string& pointer, Diagnostics& out) const;
};

}  // namespace planck::core
