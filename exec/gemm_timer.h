#pragma once
// Timing GEMMs on this host's GPU for `planck calibrate --compute` (docs/simulator.md, "Compute
// profile"): cuBLAS BF16 inputs, FP32 accumulation, one process, GPU 0. The cuBLAS code is in
// the GPU plugin (exec/gpu_plugin.h); without the plugin, its libraries or a GPU this returns an
// error saying which.

#include <string>
#include <vector>

#include "core/base/status.h"

namespace planck::exec {

struct GemmShape {
  long long m = 0, n = 0, k = 0;
};

struct GemmTimings {
  std::string device;            // the GPU's name
  std::vector<double> seconds;   // per shape, the mean of `iters` calls after `warmup`
};

core::Result<GemmTimings> time_gemms(const std::vector<GemmShape>& shapes, int warmup, int iters);

}  // namespace planck::exec
