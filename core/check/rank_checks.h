#pragma once
// The rank-program rules of docs/verify.md: rank-program-invalid, rank-out-of-range,
// rank-collision, rank-gap, rank-depends-on-nondp, rank-degree-mismatch, rank-latent (plus the
// added rank-undecided / rank-bounded, see docs/rank-programs.md). They check the plan's
// `rank_program` against its mesh exactly: symbolically where the arithmetic is affine in the
// mesh coordinates, by exhaustive evaluation (with a budget) where it is not.

#include "core/base/invariant.h"
#include "core/check/checks.h"

namespace planck::core {

// Registers the "rank-program" check: skipped when the plan has no rank_program; parse errors are
// reported even when the mesh is invalid, the other rules need the mesh.
void add_rank_checks(CheckRegistry& registry);

}  // namespace planck::core
