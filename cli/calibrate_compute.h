#pragma once
// planck calibrate --compute PLAN -o PROFILE: time the GEMMs PLAN's model runs under its tp / cp
// / ep on this host's GPU (one process, no launcher) and write or merge the compute section of a
// planck-topology/1 profile (docs/simulator.md, "Compute profile").

#include <string>

namespace planck::cli {

// Exit code: 0, or 2 when the plan cannot be loaded, there is no GPU / no CUDA in this build,
// or the profile cannot be read or written.
int run_calibrate_compute(const std::string& plan_path, const std::string& output, int warmup, int iters);

}  // namespace planck::cli
