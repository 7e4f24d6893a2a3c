// torchtitan registry settings against torchtitan's own config classes (import/torchtitan/keys.h,
// generated from pytorch/torchtitan@b5bcd76c): a field no config class of the path defines is
// unknown-key, at the line that sets it. Each dotted setting is followed from the function's
// config class (Trainer.Config) down, through the class a sub-config was built with
// (ParallelismConfig(...)) or, for a field edited in place, the class its parent declares.

#include <string>
#include <vector>

#include "import/config_keys.h"
#include "import/torchtitan/common.h"
#include "import/torchtitan/keys.h"

namespace planck::import {

void check_registry_keys(const nlohmann::json& fn, const std::string& main, PlanBuilder& b) {
  const nlohmann::json& settings = fn["settings"];
  const std::string root = config_class(torchtitan_classes(), fn.value("class", "Trainer.Config"));
  if (root.empty()) return;  // a config class torchtitan does not define at that commit: nothing to check against
  for (const auto& [path, entry] : settings.items()) {
    std::string type = root, prefix;
    std::size_t start = 0;
    while (true) {
      const std::size_t dot = path.find('.', start);
      const std::string field = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      const auto fields = config_fields(torchtitan_classes(), type);
      if (fields.empty()) break;  // a field of no known config class (a dict, a model spec): not checked
      auto it = fields.find(field);
      if (it == fields.end()) {
        b.unknown_key(path, entry.value("line", 0), field_names(fields), entry.value("file", main) == main
                                                                             ? std::string()
                                                                             : entry.value("file", main));
        break;
      }
      if (dot == std::string::npos) break;
      prefix += (prefix.empty() ? "" : ".") + field;
      // The class the sub-config was built with (a class the table lacks: not checked, its fields
      // are its own), else the one its parent declares; an object of defaults edited in place
      // carries its field's name as its class.
      const auto built = settings.find(prefix);
      const std::string written = built != settings.end() ? built->value("class", "") : "";
      type = written.empty() || written == field ? it->second : config_class(torchtitan_classes(), written);
      start = dot + 1;
    }
  }
}

}  // namespace planck::import
