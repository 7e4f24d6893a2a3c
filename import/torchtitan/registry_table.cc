// The in-memory TOML table a registry function's settings are written into (registry_table.h).

#include "import/torchtitan/registry_table.h"

#include <algorithm>

#include "core/plan/json_value.h"

namespace planck::import::registry {

using json = nlohmann::json;

int Table::position(const json& setting) {
  const int line = setting.value("line", 0);
  const std::string file = setting.value("file", main_);
  if (file == main_ || line <= 0 || line >= kFileStride) return line;
  auto it = std::find(files_.begin(), files_.end(), file);
  if (it == files_.end() && files_.size() >= 1000) return 0;  // beyond what the encoding holds: unlocated
  if (it == files_.end()) it = files_.insert(files_.end(), file);
  return static_cast<int>(it - files_.begin() + 1) * kFileStride + line;
}

void Table::set(const std::string& dotted, const json& value, int line) {
  const std::size_t dot = dotted.find('.');
  set_in(dotted.substr(0, dot), dotted.substr(dot + 1), value, line);
}

void Table::set_in(const std::string& section, const std::string& key, const json& value, int line) {
  toml::table* t = &root_;
  for (std::size_t start = 0; start <= section.size();) {
    const std::size_t end = std::min(section.find('.', start), section.size());
    const std::string part = section.substr(start, end - start);
    if (!t->contains(part)) t->insert(part, toml::table{});
    t = (*t)[part].as_table();
    if (!t) return;
    start = end + 1;
  }
  const std::string dotted = section + "." + key;
  if (value.is_array()) {
    toml::array a;
    for (const json& e : value) {
      if (e.is_string()) a.push_back(e.get<std::string>());
    }
    t->insert_or_assign(key, std::move(a));
    lines_[dotted] = line;
    return;
  }
  if (value.is_boolean()) t->insert_or_assign(key, value.get<bool>());
  else if (auto i = core::json_int64(value)) t->insert_or_assign(key, *i);
  else if (value.is_number()) t->insert_or_assign(key, value.get<double>());
  else if (value.is_string()) t->insert_or_assign(key, value.get<std::string>());
  else return;
  lines_[dotted] = line;
}

const json* Table::value(const json& settings, const std::string& dotted) const {
  auto it = settings.find(dotted);
  if (it == settings.end() || it->contains("unknown")) return nullptr;
  return it->contains("value") ? &(*it)["value"] : nullptr;
}

int Table::line_of(const json& settings, const std::string& dotted) {
  auto it = settings.find(dotted);
  return it == settings.end() ? 0 : position(*it);
}

void locate_files(ImportResult& r, const std::vector<std::string>& files) {
  for (auto& [pointer, line] : r.positions) {
    const int index = line / kFileStride;
    if (index < 1 || index > static_cast<int>(files.size())) continue;
    r.position_files[pointer] = files[static_cast<std::size_t>(index - 1)];
    line %= kFileStride;
  }
  // A finding placed at a setting written in another file (a base function's model_registry in the
  // package it imports) is that file's line.
  // The warning and note that print it are written again with that file and line.
  for (ImportFinding& f : r.findings) {
    const int index = f.line / kFileStride;
    if (index < 1 || index > static_cast<int>(files.size())) continue;
    const std::string before = finding_text(f);
    f.file = files[static_cast<std::size_t>(index - 1)];
    f.line %= kFileStride;
    const std::string after = finding_text(f);
    for (std::string& w : r.warnings) w = w == before ? after : w;
    for (std::string& n : r.notes) n = n == "warning: " + before ? "warning: " + after : n;
    for (auto& n : r.plan["notes"]) {
      if (n.is_string() && n.get_ref<const std::string&>() == "warning: " + before) n = "warning: " + after;
    }
  }
}

}  // namespace planck::import::registry
