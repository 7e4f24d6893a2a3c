#pragma once
// planck enumerate --plan TEMPLATE: the plan every candidate layout is filled into, and verify's
// rules run on each candidate (docs/simulator.md "enumerate --plan").

#include <vector>

#include "core/check/checks.h"
#include "core/mesh/mesh.h"
#include "core/plan/plan.h"
#include "sim/enumerate.h"

namespace planck::sim {

// The plan the search fills in per candidate: the request's template (an empty plan without one)
// with the request's cluster, gpu, model, sequence length, micro-batch and global batch. The
// template's declared groups are dropped: they list the ranks of its own mesh, not a candidate's.
// The layout fields (mesh, data_parallel, reshard_after_forward, sequence_parallel, etp,
// pipeline_schedule, virtual_stages, ep_overlap, activation_checkpointing, grad_accumulation)
// are the search's to set; every other field stays as the template has it.
core::Plan enumerate_base_plan(const EnumerateRequest& req);

// The activation checkpointings tried, lightest first: `least`, then those of `tried` (the
// framework's, lightest first) that recompute more (none < selective_attention < selective < full).
std::vector<core::Checkpointing> checkpointing_ladder(core::Checkpointing least,
                                                      const std::vector<core::Checkpointing>& tried);

// Every rule of `checks` on `plan`, a candidate with `mesh`, the way `planck verify` runs them
// (core::run_checks): the rules with an error go to l.rejected, those with a warning to
// l.warnings, and the rules a checks-skipped note names (an input the plan lacks) to l.unchecked,
// each name once, in the order found. Notes are not kept.
void vet_layout(const core::CheckRegistry& checks, const core::Plan& plan, const core::Mesh& mesh, Layout& l);

}  // namespace planck::sim
