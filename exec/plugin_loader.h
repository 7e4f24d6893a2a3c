#pragma once
// Finding and opening planck's plugins (exec/gpu_plugin.h, exec/mpi_plugin.h): shared objects
// built from the same source as the binary, each exporting one C entry point. The binary links
// none of the libraries they wrap (CUDA, NCCL, OpenMPI), so a command that does not run a world
// never loads them.

#include <mutex>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace planck::exec {

struct PluginSpec {
  const char* file;          // e.g. "libplanck_gpu.so"
  const char* env;           // a variable naming the file elsewhere, e.g. "PLANCK_GPU_PLUGIN"
  const char* entry;         // the exported C symbol, e.g. "planck_gpu_plugin_v1"
  const char* what;          // for messages, e.g. "the GPU plugin"
  const char* install_hint;  // what to do when it is absent or cannot be opened
  int dlopen_flags;          // RTLD_NOW | RTLD_LOCAL, or | RTLD_GLOBAL where the library dlopens its own parts
};

// Where the plugin is looked for, in order: $env (a file), then
// <directory of the planck binary>/../lib/planck/<file> (the install layout and the build tree).
std::vector<std::string> plugin_candidates(const PluginSpec& spec);

// The first candidate present on disk, or "" (not opened).
std::string plugin_path(const PluginSpec& spec);

// Opens the first candidate present and returns its entry point; the error names every place
// tried, or what dlopen said (a missing libnccl.so.2, say), and the hint. Never closed: what
// the plugin made lives until exit.
core::Result<void*> open_plugin(const PluginSpec& spec);

// The table a plugin's entry point returns (GpuPlugin, MpiPlugin: each has abi and
// planck_version), opened once per process; a table of another abi or planck version is refused,
// naming `package` to install.
template <typename Table>
core::Result<const Table*> load_plugin_table(const PluginSpec& spec, int abi, const char* version,
                                             const char* package) {
  static std::once_flag once;
  static const Table* table = nullptr;
  static std::string error;
  std::call_once(once, [&] {
    auto entry = open_plugin(spec);
    if (!entry) {
      error = entry.message();
      return;
    }
    using Entry = const Table* (*)();
    const Table* t = reinterpret_cast<Entry>(*entry)();
    if (!t || t->abi != abi || std::string(t->planck_version) != version) {
      error = std::string(spec.what) + " " + plugin_path(spec) + " was built for planck " +
              (t ? t->planck_version : "?") + " (plugin abi " + std::to_string(t ? t->abi : 0) + "), this is planck " +
              version + " (abi " + std::to_string(abi) + "): install the " + package + " package of the same version";
      return;
    }
    table = t;
  });
  if (!table) return core::Status::error(error);
  return table;
}

}  // namespace planck::exec
