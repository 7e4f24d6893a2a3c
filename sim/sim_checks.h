#pragma once
// The simulator's verify rules (docs/verify.md): memory-exceeds, memory-tight,
// sync-every-microbatch, pipeline-bubble. They need a valid mesh and the inputs their RuleInfo
// names; without those they are skipped and a checks-skipped note says so.

#include <cstdint>
#include <optional>

#include "core/check/checks.h"
#include "core/mesh/mesh.h"
#include "core/plan/plan.h"

namespace planck::sim {

void add_sim_checks(core::CheckRegistry& registry);

// memory-tight fires above this fraction of capacity (docs/verify.md); enumerate ranks such
// layouts after the others.
inline constexpr double kMemoryTightFraction = 0.9;

// Bytes each rank sends per step under the plan's grad_sync minus under last_microbatch (ring
// bytes from core/schedule/collectives.h), or nullopt when the plan cannot be lowered.
std::optional<std::int64_t> sync_extra_bytes_per_step(const core::Plan& plan, const core::Mesh& mesh);

}  // namespace planck::sim
