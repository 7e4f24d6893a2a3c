#include "sim/enumerate_plan.h"

#include <algorithm>
#include <string>

#include "core/observed/observed.h"

namespace planck::sim {
namespace {

int recompute_order(core::Checkpointing c) {
  switch (c) {
    case core::Checkpointing::kNone:
      return 0;
    case core::Checkpointing::kSelectiveAttention:
      return 1;
    case core::Checkpointing::kSelective:
      return 2;
    case core::Checkpointing::kFull:
      return 3;
  }
  return 0;
}

void add_once(std::vector<std::string>& list, const std::string& rule) {
  if (std::find(list.begin(), list.end(), rule) == list.end()) list.push_back(rule);
}

}  // namespace

core::Plan enumerate_base_plan(const EnumerateRequest& req) {
  core::Plan p = req.base ? *req.base : core::Plan{};
  p.groups.clear();
  const std::int64_t gpn = std::min(req.gpus_per_node, req.world);
  p.cluster.gpus_per_node = gpn;
  p.cluster.nodes = req.world / gpn;
  p.cluster.nvlink_domain = req.nvlink_domain;
  p.cluster.gpu = req.gpu;
  p.gpu_given = true;
  p.model = req.model;
  p.parallelism.present = true;
  p.parallelism.pipeline_schedule = core::PipelineSchedule::k1F1B;
  core::Training t = p.training.value_or(core::Training{});
  t.seq_len = req.seq_len;
  t.micro_batch = req.micro_batch;
  t.global_batch = req.global_batch;
  t.grad_accumulation.reset();
  t.activation_checkpointing = req.least_checkpointing;
  if (req.fp8) t.fp8 = *req.fp8;
  p.training = t;
  return p;
}

std::vector<core::Checkpointing> checkpointing_ladder(core::Checkpointing least,
                                                      const std::vector<core::Checkpointing>& tried) {
  std::vector<core::Checkpointing> out = {least};
  for (auto c : tried) {
    if (recompute_order(c) > recompute_order(least)) out.push_back(c);
  }
  return out;
}

void vet_layout(const core::CheckRegistry& checks, const core::Plan& plan, const core::Mesh& mesh, Layout& l) {
  static const std::vector<core::Observed> kNoRun;  // enumerate has no --observed run to compare
  const core::CheckContext ctx{plan, &mesh, &kNoRun};
  const core::Diagnostics found = core::run_checks(checks, ctx);
  l.rejected.clear();
  l.warnings.clear();
  l.unchecked.clear();
  for (const auto& d : found.items()) {
    if (d.severity == core::Severity::kError) add_once(l.rejected, d.rule);
    if (d.severity == core::Severity::kWarning) add_once(l.warnings, d.rule);
    for (const auto& r : d.skipped_rules) add_once(l.unchecked, r);
  }
}

}  // namespace planck::sim
