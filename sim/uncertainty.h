#pragma once
// The interval a predicted step time likely falls in (docs/simulator.md "Stated uncertainty"):
// the 5th and 95th percentiles of published / predicted step time over the published runs of the
// plan's software stack, each run predicted leave-one-source-out (tests/sim/sim_published_loso.h),
// each source weighted equally. A stack with no published runs, or a plan that states none, gets
// the percentiles over every stack. The runs no fit reads (tests/data/published/heldout, the
// Blackwell MLPerf v5.1 rows) count as they are predicted, their error being out of sample already.
// A mixture-of-experts plan gets the percentiles over the published MoE runs instead
// (tests/sim/sim_published_moe_test.cc, each predicted leave-one-source-out), whatever its stack.

#include <string>

#include "core/plan/plan.h"

namespace planck::sim {

struct StepRatioBand {
  const char* stack;  // a core::Stack name, or "any"
  double low = 1, high = 1;  // published / predicted at the 5th and 95th percentiles
  int runs = 0, sources = 0;
};

// The table, from sim_published_step_time_intervals' residuals; `moe` picks the MoE row.
const StepRatioBand& step_ratio_band(const core::Training& training, bool moe = false);

struct StepInterval {
  double low_s = 0, high_s = 0;
  std::string basis;  // "torchtitan_eager: 6 runs of 1 source", ...
};
StepInterval step_interval(const core::Training& training, double step_s, bool moe = false);

}  // namespace planck::sim
