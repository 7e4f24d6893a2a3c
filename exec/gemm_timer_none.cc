// exec/gemm_timer.h in a build without CUDA.

#include "exec/gemm_timer.h"

namespace planck::exec {

core::Result<GemmTimings> time_gemms(const std::vector<GemmShape>&, int, int) {
  return core::Status::error(
      "this planck was built without CUDA (cuBLAS not found at configure time): rebuild on a host with the CUDA "
      "toolkit in /usr/local/cuda (or CUDAToolkit_ROOT) to run calibrate --compute");
}

}  // namespace planck::exec
