#pragma once
// The cuBLAS GEMM timer inside the GPU plugin; `planck` reaches it through exec::time_gemms.

#include "exec/gemm_timer.h"

namespace planck::exec {

core::Result<GemmTimings> cublas_time_gemms(const std::vector<GemmShape>& shapes, int warmup, int iters);

}  // namespace planck::exec
