// Finds and loads libplanck_gpu.so (exec/gpu_plugin.h, exec/plugin_loader.h), RTLD_NOW |
// RTLD_LOCAL: the communicators it made live until exit.

#include <dlfcn.h>

#include <string>

#include "exec/gpu_plugin.h"
#include "exec/plugin_loader.h"
#include "planck/config.h"

namespace planck::exec {
namespace {

constexpr PluginSpec kGpu = {
    "libplanck_gpu.so", "PLANCK_GPU_PLUGIN", "planck_gpu_plugin_v1", "the GPU plugin",
    "install the planck-gpu package, or build planck where CUDA and NCCL are found (docs/exec.md, \"The GPU "
    "plugin\"); a plugin that is present needs the CUDA runtime, cuBLAS and NCCL it was built with on the library "
    "path",
    RTLD_NOW | RTLD_LOCAL};

}  // namespace

core::Result<const GpuPlugin*> load_gpu_plugin() {
  return load_plugin_table<GpuPlugin>(kGpu, kGpuPluginAbi, PLANCK_VERSION, "planck-gpu");
}

std::string gpu_plugin_path() { return plugin_path(kGpu); }

core::Result<GemmTimings> time_gemms(const std::vector<GemmShape>& shapes, int warmup, int iters) {
  auto plugin = load_gpu_plugin();
  if (!plugin) return core::Status::error("GEMM timing needs a GPU: " + plugin.message());
  return (*plugin)->time_gemms(shapes, warmup, iters);
}

}  // namespace planck::exec
