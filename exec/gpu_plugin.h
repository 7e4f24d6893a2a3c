#pragma once
// The seam between the CPU-only planck binary and its GPU backends. NCCL and the cuBLAS GEMM
// timer live in a plugin, libplanck_gpu.so, built whenever CUDA and NCCL are found; `planck`
// links no CUDA library and loads the plugin with dlopen only when `exec --backend nccl`,
// `calibrate --compute` or a GPU host's default backend asks for it (docs/exec.md, "The GPU
// plugin"). The plugin exports one C symbol, planck_gpu_plugin_v1, returning this table; the
// loader refuses a table whose abi or planck version differs from its own, since the two sides
// share C++ types (Communicator, Result) and must be built from the same source.

#include <chrono>
#include <memory>
#include <vector>

#include "core/base/status.h"
#include "exec/communicator.h"
#include "exec/gemm_timer.h"

namespace planck::exec {

// Bumped whenever GpuPlugin or a type it passes changes.
inline constexpr int kGpuPluginAbi = 1;

struct GpuPlugin {
  int abi = 0;
  const char* planck_version = "";  // PLANCK_VERSION of the build that made the plugin
  const char* built_with = "";      // e.g. "NCCL 2.28.3, CUDA runtime 13000"
  // CUDA devices this process sees (0 when there is no driver or GPU).
  int (*visible_gpus)() = nullptr;
  // The NCCL world over a started bootstrap world (rank 0 makes the unique id, broadcast over
  // `bootstrap`), one GPU per local rank.
  core::Result<std::unique_ptr<Communicator>> (*nccl_init)(Communicator& bootstrap, int local_rank,
                                                           std::chrono::milliseconds timeout) = nullptr;
  // exec/gemm_timer.h on GPU 0.
  core::Result<GemmTimings> (*time_gemms)(const std::vector<GemmShape>& shapes, int warmup, int iters) = nullptr;
};

// Where the loader looks, in order: $PLANCK_GPU_PLUGIN (a file), then
// <directory of the planck binary>/../lib/planck/libplanck_gpu.so (the install layout and the
// build tree alike). The error names every place tried and what dlopen said (a missing
// libnccl.so.2, say), so the message says what to install.
core::Result<const GpuPlugin*> load_gpu_plugin();

// The plugin's path when one is present on disk (not loaded), for --version and messages.
std::string gpu_plugin_path();

}  // namespace planck::exec

// The plugin's one exported symbol.
extern "C" const planck::exec::GpuPlugin* planck_gpu_plugin_v1();
