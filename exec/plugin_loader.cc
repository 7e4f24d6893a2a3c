#include "exec/plugin_loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>

namespace planck::exec {

std::vector<std::string> plugin_candidates(const PluginSpec& spec) {
  std::vector<std::string> out;
  if (const char* env = std::getenv(spec.env); env && *env) out.emplace_back(env);
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) out.push_back((self.parent_path().parent_path() / "lib" / "planck" / spec.file).string());
  return out;
}

std::string plugin_path(const PluginSpec& spec) {
  for (const std::string& path : plugin_candidates(spec)) {
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) return path;
  }
  return "";
}

core::Result<void*> open_plugin(const PluginSpec& spec) {
  std::string tried;
  for (const std::string& path : plugin_candidates(spec)) {
    tried += (tried.empty() ? "" : ", ") + path;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) continue;
    void* handle = dlopen(path.c_str(), spec.dlopen_flags);
    if (!handle) {
      const char* why = dlerror();
      return core::Status::error(std::string(spec.what) + " " + path + " could not be loaded: " +
                                 (why ? why : "unknown dlopen error") + " (" + spec.install_hint + ")");
    }
    void* entry = dlsym(handle, spec.entry);
    if (!entry) {
      return core::Status::error(std::string(spec.what) + " " + path + " has no " + spec.entry +
                                 " symbol: it is not a planck plugin");
    }
    return entry;
  }
  return core::Status::error(std::string(spec.what) + " " + spec.file + " is not installed (looked in: " +
                             (tried.empty() ? std::string("nowhere: /proc/self/exe unreadable") : tried) + "): " +
                             spec.install_hint + "; " + spec.env + "=FILE names one elsewhere");
}

}  // namespace planck::exec
