#include "sim/enumerate.h"

#include <algorithm>
#include <limits>

#include "core/base/saturating.h"
#include "sim/enumerate_search.h"
#include "sim/factorizations.h"
#include "sim/moe_band.h"

namespace planck::sim {
namespace {

void rank_and_mark(std::vector<Layout>& layouts, bool by_throughput, bool allow_tight) {
  std::stable_sort(layouts.begin(), layouts.end(), [by_throughput, allow_tight](const Layout& a, const Layout& b) {
    if (a.rejected.empty() != b.rejected.empty()) return a.rejected.empty();
    if (!allow_tight && a.tight != b.tight) return b.tight;
    if (by_throughput && a.tokens_per_s != b.tokens_per_s) return a.tokens_per_s > b.tokens_per_s;
    if (a.step_time_s != b.step_time_s) return a.step_time_s < b.step_time_s;
    if (a.memory_peak != b.memory_peak) return a.memory_peak < b.memory_peak;
    return a.nontrivial_dims() < b.nontrivial_dims();
  });
  // Pareto front of (ranking key, memory): in ranked order, a layout is on it when no better-or-
  // equal one uses less or equal memory (ties on both keep the first); a rejected layout never is.
  std::int64_t best_mem = std::numeric_limits<std::int64_t>::max();
  for (auto& l : layouts) {
    l.pareto = l.rejected.empty() && l.memory_peak < best_mem;
    if (l.pareto) best_mem = l.memory_peak;
  }
}

}  // namespace

const char* to_string(Framework f) {
  switch (f) {
    case Framework::kMegatron: return "megatron";
    case Framework::kTorchtitan: return "torchtitan";
    case Framework::kAny: break;
  }
  return "any";
}

int Layout::nontrivial_dims() const {
  return static_cast<int>(std::count_if(shape.begin(), shape.end(), [](std::int64_t s) { return s > 1; }));
}

core::Result<EnumerateResult> enumerate(const EnumerateRequest& req) {
  if (req.world < 1 || req.world > core::Mesh::kMaxWorld) {
    return core::Status::error("--world " + std::to_string(req.world) + " must be between 1 and 2147483647");
  }
  if (req.gpus_per_node < 1) {
    return core::Status::error("--gpus-per-node " + std::to_string(req.gpus_per_node) + " must be >= 1");
  }
  if (req.world > req.gpus_per_node && req.world % req.gpus_per_node != 0) {
    return core::Status::error("--world " + std::to_string(req.world) + " is not a multiple of --gpus-per-node " +
                               std::to_string(req.gpus_per_node) + ": nodes must be whole");
  }
  if (req.nvlink_domain < 0 || (req.nvlink_domain > 0 && req.nvlink_domain % std::min(req.gpus_per_node, req.world) != 0)) {
    return core::Status::error("--nvlink-domain " + std::to_string(req.nvlink_domain) +
                               " is not a whole number of nodes of " + std::to_string(req.gpus_per_node) + " GPUs");
  }
  if (req.seq_len < 1 || req.micro_batch < 1) {
    return core::Status::error("--seq-len " + std::to_string(req.seq_len) + " and --micro-batch " +
                               std::to_string(req.micro_batch) + " must be >= 1");
  }
  if (req.global_batch && *req.global_batch < 1) {
    return core::Status::error("--global-batch " + std::to_string(*req.global_batch) + " must be >= 1");
  }
  const auto& m = req.model;
  if (m.layers < 1 || m.hidden < 1 || m.heads < 1 || m.vocab < 1) {
    return core::Status::error("model '" + m.name + "' needs layers, hidden, heads and vocab >= 1");
  }
  if (req.gpu.memory_bytes <= 0 || req.gpu.bf16_tflops <= 0) {
    return core::Status::error("gpu '" + req.gpu.name + "' needs memory_bytes and bf16_tflops > 0");
  }
  EnumerateResult out;
  out.world = req.world;
  out.framework = req.framework;
  out.considered = count_factorizations(req.world, m.is_moe() ? 6 : 5);
  if (m.is_moe()) out.error_band = kMoeStepErrorBand;
  // Without --global-batch every layout does the same work: one sequence per GPU per step
  // (world x micro_batch), which every data-parallel degree divides.
  EnumerateRequest fixed = req;
  out.global_batch_default = !req.global_batch;
  if (!fixed.global_batch) fixed.global_batch = core::sat_mul(req.world, req.micro_batch);
  out.global_batch = *fixed.global_batch;
  search_all(fixed, out);
  out.valid = static_cast<std::int64_t>(out.layouts.size());
  if (req.checks) {
    out.checked = true;
    out.template_path = req.base ? req.base->path : "";
    for (const auto& l : out.layouts) {
      out.rejected += l.rejected.empty() ? 0 : 1;
      for (const auto& r : l.unchecked) {
        if (std::find(out.unchecked.begin(), out.unchecked.end(), r) == out.unchecked.end()) out.unchecked.push_back(r);
      }
    }
  }
  rank_and_mark(out.layouts, fixed.rank_by_throughput, fixed.allow_tight);
  return out;
}

}  // namespace planck::sim
