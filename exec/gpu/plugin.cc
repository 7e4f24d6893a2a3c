// libplanck_gpu.so: the NCCL backend and the cuBLAS GEMM timer behind exec/gpu_plugin.h. Built
// with -fvisibility=hidden: planck_gpu_plugin_v1 is its only exported symbol.

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>

#include "exec/cuda/gemm_timer_cublas.h"
#include "exec/gpu_plugin.h"
#include "exec/nccl/world.h"
#include "planck/config.h"

namespace {

std::string built_with() {
  return "NCCL " + std::to_string(NCCL_MAJOR) + "." + std::to_string(NCCL_MINOR) + "." + std::to_string(NCCL_PATCH) +
         ", CUDA runtime " + std::to_string(CUDART_VERSION);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const planck::exec::GpuPlugin* planck_gpu_plugin_v1() {
  static const std::string with = built_with();
  static const planck::exec::GpuPlugin plugin = [] {
    planck::exec::GpuPlugin p;
    p.abi = planck::exec::kGpuPluginAbi;
    p.planck_version = PLANCK_VERSION;
    p.built_with = with.c_str();
    p.visible_gpus = &planck::exec::nccl::visible_gpus;
    p.nccl_init = &planck::exec::nccl::init;
    p.time_gemms = &planck::exec::cublas_time_gemms;
    return p;
  }();
  return &plugin;
}
