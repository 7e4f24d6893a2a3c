#pragma once
// The lowering's building blocks, shared by its steps (core/schedule/schedule.cc for TP, PP, CP
// and EP; lower_data_parallel.cc for the data-parallel family): the entry writer and byte
// helpers. Internal to core/schedule.

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/base/saturating.h"
#include "core/mesh/mesh.h"
#include "core/schedule/schedule.h"

namespace planck::core::lowering {

inline std::int64_t to_bytes(double params, int bytes_per_element) {
  const double b = std::round(params * bytes_per_element);
  if (!(b > 0)) return 0;
  // Absurd shapes saturate (core/base/saturating.h); 2^63 itself is past INT64_MAX.
  return b >= 9223372036854775808.0 ? kSaturated : static_cast<std::int64_t>(b);
}

// Rounded-up share of `bytes` over n ranks (n >= 1), without overflowing at saturation.
inline std::int64_t ceil_div(std::int64_t bytes, std::int64_t n) {
  n = std::max<std::int64_t>(1, n);
  return bytes / n + (bytes % n != 0 ? 1 : 0);
}

class Lowering {
 public:
  Lowering(const Mesh& mesh, Schedule& out) : mesh_(mesh), out_(out) {}

  void add(const std::string& role, const std::vector<std::string>& dims, CollOp op, Phase phase,
           std::int64_t bytes, std::int64_t calls, int dtype, std::string what) {
    if (bytes <= 0 || calls <= 0) return;
    GroupSet g = mesh_.groups(dims);
    if (g.group_size() <= 1) return;
    ScheduledCollective c;
    c.role = role;
    c.dims = g.dims();
    c.op = op;
    c.phase = phase;
    c.group_size = g.group_size();
    c.groups = g.num_groups();
    c.bytes_per_call = bytes;
    c.calls_per_step = calls;
    c.dtype_bytes = dtype;
    c.what = std::move(what);
    c.micro_batches = repeats_;
    c.stages = stages_;
    out_.collectives.push_back(std::move(c));
  }

  // What the next add() calls repeat over (k micro-batches or 1 per step) and which stages run them.
  void repeats(std::int64_t micro_batches, StageScope stages = StageScope::kEvery) {
    repeats_ = std::max<std::int64_t>(1, micro_batches);
    stages_ = stages;
  }

  // `total` bytes in buckets of `bucket` bytes, `syncs` times per step: full buckets and the
  // remainder as two entries so bytes add up exactly.
  void add_bucketed(const std::string& role, const std::vector<std::string>& dims, CollOp op, Phase phase,
                    std::int64_t total, std::int64_t bucket, std::int64_t syncs, int dtype, const std::string& what) {
    if (total <= 0) return;
    const std::int64_t full = total / bucket, rest = total % bucket;
    add(role, dims, op, phase, bucket, sat_mul(full, syncs), dtype, what + " (full buckets)");
    add(role, dims, op, phase, rest, syncs, dtype, what + (full > 0 ? " (last bucket)" : ""));
  }

 private:
  const Mesh& mesh_;
  Schedule& out_;
  std::int64_t repeats_ = 1;
  StageScope stages_ = StageScope::kEvery;
};

// What the data-parallel step needs from the lowering of one plan.
struct DataParallelInputs {
  std::int64_t k = 1;  // micro-batches per step
  int bp = 2, bg = 4;  // parameter and gradient-reduction bytes
  bool every = false, rs_every = false;  // grad_sync every micro-batch; reduce-scatter every micro-batch (HSDP)
  RankParams rp;
  FsdpRuntime runtime = FsdpRuntime::kFsdp2;
};

// The data-parallel family's collectives (ddp, zero1/2, fsdp/zero3/hsdp), dense parameters over
// the data-parallel dims and routed experts over their expert-data-parallel dims.
void lower_data_parallel(const Plan& plan, const Mesh& mesh, const DataParallelInputs& in, Lowering& lo);

}  // namespace planck::core::lowering
