// Finds and loads libplanck_gpu.so (exec/gpu_plugin.h). The plugin is opened once per process,
// RTLD_NOW | RTLD_LOCAL, and never closed: the communicators it made live until exit.

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "exec/gpu_plugin.h"
#include "planck/config.h"

namespace planck::exec {
namespace {

constexpr const char* kPluginFile = "libplanck_gpu.so";

std::vector<std::string> candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("PLANCK_GPU_PLUGIN"); env && *env) out.emplace_back(env);
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) out.push_back((self.parent_path().parent_path() / "lib" / "planck" / kPluginFile).string());
  return out;
}

struct Loaded {
  const GpuPlugin* plugin = nullptr;
  std::string error;
};

Loaded load_once() {
  Loaded l;
  std::string tried;
  for (const std::string& path : candidates()) {
    tried += (tried.empty() ? "" : ", ") + path;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) continue;
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = dlerror();
      l.error = "the GPU plugin " + path + " could not be loaded: " + (why ? why : "unknown dlopen error") +
                " (install the CUDA runtime, cuBLAS and NCCL it was built with, or put them on LD_LIBRARY_PATH)";
      return l;
    }
    using Entry = const GpuPlugin* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(handle, "planck_gpu_plugin_v1"));
    if (!entry) {
      l.error = "the GPU plugin " + path + " has no planck_gpu_plugin_v1 symbol: it is not a planck plugin";
      return l;
    }
    const GpuPlugin* p = entry();
    if (!p || p->abi != kGpuPluginAbi || std::string(p->planck_version) != PLANCK_VERSION) {
      l.error = "the GPU plugin " + path + " was built for planck " + (p ? p->planck_version : "?") + " (plugin abi " +
                std::to_string(p ? p->abi : 0) + "), this is planck " + PLANCK_VERSION + " (abi " +
                std::to_string(kGpuPluginAbi) + "): install the planck-gpu package of the same version";
      return l;
    }
    l.plugin = p;
    return l;
  }
  l.error = "the GPU plugin " + std::string(kPluginFile) + " is not installed (looked in: " +
            (tried.empty() ? std::string("nowhere: /proc/self/exe unreadable") : tried) +
            "): install the planck-gpu package, or build planck where CUDA and NCCL are found "
            "(docs/exec.md, \"The GPU plugin\"); PLANCK_GPU_PLUGIN=FILE names one elsewhere";
  return l;
}

}  // namespace

core::Result<const GpuPlugin*> load_gpu_plugin() {
  static std::once_flag once;
  static Loaded loaded;
  std::call_once(once, [] { loaded = load_once(); });
  if (!loaded.plugin) return core::Status::error(loaded.error);
  return loaded.plugin;
}

std::string gpu_plugin_path() {
  for (const std::string& path : candidates()) {
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) return path;
  }
  return "";
}

core::Result<GemmTimings> time_gemms(const std::vector<GemmShape>& shapes, int warmup, int iters) {
  auto plugin = load_gpu_plugin();
  if (!plugin) return core::Status::error("GEMM timing needs a GPU: " + plugin.message());
  return (*plugin)->time_gemms(shapes, warmup, iters);
}

}  // namespace planck::exec
