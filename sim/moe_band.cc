#include "sim/moe_band.h"

#include <cmath>

#include "sim/simulate.h"

namespace planck::sim {

std::string moe_error_band_note() {
  return "MoE step time: measured error +-" + std::to_string(std::lround(100 * kMoeStepErrorBand)) +
         "% (mean |error|, leave-one-source-out, over " + std::to_string(kMoeBandRuns) + " published MoE runs from " +
         std::to_string(kMoeBandSources) + " sources; docs/simulator.md \"MoE validation\")";
}

MoeConstants fitted_moe_constants() {
  return {std::nullopt, kMoeLayerOverheadUs * 1e-6, kMoeHostLaunchUs * 1e-6, kMoeEpOverlapEfficiency};
}

}  // namespace planck::sim
