#pragma once
// How far MoE step-time predictions are from measured runs (docs/simulator.md "MoE validation"):
// the mean absolute error, leave-one-source-out, over the published MoE runs of
// tests/data/published/moe_validation.csv, which tests/sim/sim_published_moe_test.cc measures
// and checks this constant against. simulate, enumerate and the report print it beside every
// MoE prediction until MoE step times are validated to the level of dense ones.

#include <string>

namespace planck::sim {

inline constexpr double kMoeStepErrorBand = 0.133;
// The shared MoE constants (SimOptions::moe), fitted on all rows of moe_validation.csv by the
// same grid the test's leave-one-source-out fit searches (the test checks they are its optimum),
// with the grouped-GEMM scale of each GPU generation (ComputeCurve::grouped_gemm_scale, held by
// the presets).
inline constexpr double kMoeLayerOverheadUs = 500;
inline constexpr double kMoeHostLaunchUs = 35;
inline constexpr double kMoeEpOverlapEfficiency = 0.75;
inline constexpr int kMoeBandRuns = 153;
inline constexpr int kMoeBandSources = 39;

// "MoE step time: measured error +-X% (mean |error| over N published MoE runs from S sources, ...)"
std::string moe_error_band_note();

}  // namespace planck::sim
