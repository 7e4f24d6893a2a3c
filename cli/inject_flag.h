#pragma once
// exec's --inject FAULT:VALUE, a testing aid that must always inject: the rank is one of the
// plan's (0 to world-1, as --kill-rank), the perturbation a finite fraction large enough for the
// per-peer traffic check to see, and a run in which the fault changed nothing planck checks is
// an error, not a pass (issue 34: kill:9 on 8 ranks and perturb:nan once exited 0).

#include <cstdint>
#include <string>

#include "core/base/status.h"
#include "exec/runner.h"

namespace planck::cli {

// Parses "kill:R", "wrong-data:R", "wrong-colour:R" or "perturb:F" ("" = no fault) for a world
// of `world` ranks. Errors name the flag, the value and the accepted range.
core::Result<exec::Fault> parse_fault(const std::string& text, std::int64_t world);

// "" when the run shows the fault (a rank died, a check failed); else why the injection changed
// nothing, for an exit-2 error.
std::string fault_without_effect(const exec::Fault& fault, const exec::ExecReport& report);

}  // namespace planck::cli
