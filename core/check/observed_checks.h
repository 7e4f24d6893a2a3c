#pragma once
// Checks of observed communicators (--observed files) against the plan's mesh (docs/verify.md):
//   groups-mismatch     an observed group that is no group of any role's dims (names the closest role)
//   hsdp-flattened      HSDP planned, but the run built the replicate x shard group and no shard group
//   placement-mismatch  observed hosts put ranks on nodes other than the plan's block placement
//   observed-partial    a file covered only some ranks (note; never turns a partial view into an error)
//   observed-suspicious a reader left something out as implausible (a stray communicator larger than the world)
// Each diagnostic carries the observed `file` and `line`; group rules set Diagnostic::role.

#include "core/check/checks.h"

namespace planck::core {

void add_observed_checks(CheckRegistry& registry);

}  // namespace planck::core
