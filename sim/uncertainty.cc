#include "sim/uncertainty.h"

#include <cstring>
#include <iterator>

namespace planck::sim {

namespace {

// published / predicted, 5th and 95th percentiles per stack, each source's runs weighted 1 / its
// run count, over the leave-one-source-out predictions of tests/data/published/validation.csv and
// the shipped predictions of the runs no fit reads (heldout/runs.csv, validation_blackwell.csv),
// printed by sim_published_step_time_intervals, which fails when this table and its residuals
// disagree. A stack gets its own row only with at least 10 runs (torchtitan_compile has 3, fsdp2
// 1, megatron_deepspeed 5: they use "any"); deepspeed has none yet.
constexpr StepRatioBand kBands[] = {
    {"any", 0.845, 1.297, 364, 18},
    {"fsdp1", 0.852, 1.097, 210, 2},
    {"megatron", 0.849, 1.253, 106, 10},
    {"nanotron", 0.846, 2.613, 26, 1},
    {"torchtitan_eager", 0.915, 1.215, 13, 2},
};

// The published MoE runs of tests/data/published/moe_validation.csv, each predicted
// leave-one-source-out (sim_published_moe_test.cc prints and checks this row).
constexpr StepRatioBand kMoeBand = {"MoE", 0.797, 1.460, 153, 39};

}  // namespace

const StepRatioBand& step_ratio_band(const core::Training& training, bool moe) {
  if (moe) return kMoeBand;
  if (training.stack_given) {
    for (const auto& b : kBands) {
      if (std::strcmp(b.stack, core::to_string(training.stack)) == 0) return b;
    }
  }
  return kBands[0];
}

StepInterval step_interval(const core::Training& training, double step_s, bool moe) {
  const StepRatioBand& b = step_ratio_band(training, moe);
  StepInterval out;
  out.low_s = step_s * b.low;
  out.high_s = step_s * b.high;
  out.basis = std::string(b.stack) + ": " + std::to_string(b.runs) +
              (moe ? " published MoE runs of " : " published runs of ") + std::to_string(b.sources) +
              (b.sources == 1 ? " source" : " sources");
  return out;
}

}  // namespace planck::sim
