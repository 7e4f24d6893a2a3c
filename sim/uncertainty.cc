#include "sim/uncertainty.h"

#include <cstring>
#include <iterator>

namespace planck::sim {

namespace {

// published / predicted, 5th and 95th percentiles of the leave-one-source-out predictions of
// tests/data/published/validation.csv, per stack, each source's runs weighted 1 / its run count
// (printed by sim_published_step_times, which fails when this table and its residuals disagree).
// A stack gets its own row only with at least 10 runs (torchtitan_compile has 3, fsdp2 1: they
// use "any"); deepspeed and megatron_deepspeed have none yet.
constexpr StepRatioBand kBands[] = {
    {"any", 0.845, 1.203, 314, 12},
    {"fsdp1", 0.834, 1.140, 209, 1},
    {"megatron", 0.831, 1.123, 62, 6},
    {"nanotron", 0.846, 2.613, 26, 1},
    {"torchtitan_eager", 0.915, 1.215, 13, 2},
};

}  // namespace

const StepRatioBand& step_ratio_band(const core::Training& training) {
  if (training.stack_given) {
    for (const auto& b : kBands) {
      if (std::strcmp(b.stack, core::to_string(training.stack)) == 0) return b;
    }
  }
  return kBands[0];
}

StepInterval step_interval(const core::Training& training, double step_s) {
  const StepRatioBand& b = step_ratio_band(training);
  StepInterval out;
  out.low_s = step_s * b.low;
  out.high_s = step_s * b.high;
  out.basis = std::string(b.stack) + ": " + std::to_string(b.runs) + " published runs of " + std::to_string(b.sources) +
              (b.sources == 1 ? " source" : " sources");
  return out;
}

}  // namespace planck::sim
