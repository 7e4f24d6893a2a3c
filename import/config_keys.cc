#include "import/config_keys.h"

namespace planck::import {

std::string config_class(const ConfigClasses& classes, const std::string& written) {
  // As written, then without a module prefix: "config.ParallelismConfig" -> "ParallelismConfig",
  // "components.optimizer.OptimizersContainer.Config" -> "OptimizersContainer.Config".
  std::string name = written;
  while (!name.empty()) {
    if (classes.count(name)) return name;
    const std::size_t dot = name.find('.');
    if (dot == std::string::npos) break;
    name = name.substr(dot + 1);
  }
  return "";
}

namespace {

void add_fields(const ConfigClasses& classes, const std::string& type, int depth,
                std::map<std::string, std::string>& out) {
  if (depth > 32) return;  // a base cycle in the data: stop, as Python would have refused the class
  std::size_t start = 0;
  while (start <= type.size()) {
    const std::size_t bar = type.find('|', start);
    const std::string one = type.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
    auto it = classes.find(one);
    if (it != classes.end()) {
      for (const auto& [field, kind] : it->second) {
        if (field.empty()) {
          add_fields(classes, kind, depth + 1, out);
          continue;
        }
        auto [at, fresh] = out.emplace(field, kind);
        if (!fresh && at->second != kind && !kind.empty()) at->second += (at->second.empty() ? "" : "|") + kind;
      }
    }
    if (bar == std::string::npos) break;
    start = bar + 1;
  }
}

}  // namespace

std::map<std::string, std::string> config_fields(const ConfigClasses& classes, const std::string& type) {
  std::map<std::string, std::string> out;
  add_fields(classes, type, 0, out);
  return out;
}

std::vector<std::string> field_names(const std::map<std::string, std::string>& fields) {
  std::vector<std::string> out;
  for (const auto& [name, kind] : fields) out.push_back(name);
  return out;
}

}  // namespace planck::import
