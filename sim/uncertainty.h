#pragma once
// The interval a predicted step time likely falls in (docs/simulator.md "Stated uncertainty"):
// the 5th and 95th percentiles of published / predicted step time over the published runs of the
// plan's software stack, each run predicted leave-one-source-out (tests/sim/sim_published_loso.h),
// each source weighted equally. A stack with no published runs, or a plan that states none, gets
// the percentiles over every stack.

#include <string>

#include "core/plan/plan.h"

namespace planck::sim {

struct StepRatioBand {
  const char* stack;  // a core::Stack name, or "any"
  double low = 1, high = 1;  // published / predicted at the 5th and 95th percentiles
  int runs = 0, sources = 0;
};

// The table, from sim_published_step_times' leave-one-source-out residuals.
const StepRatioBand& step_ratio_band(const core::Training& training);

struct StepInterval {
  double low_s = 0, high_s = 0;
  std::string basis;  // "torchtitan_eager: 6 runs of 1 source", ...
};
StepInterval step_interval(const core::Training& training, double step_s);

}  // namespace planck::sim
