// Python configs through planck's embedded reader: the search path, one run of the reader, and
// the split of what it could not follow into refused constructs and notes.

#include "import/formats/python_config.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "import/formats/python_script.h"

namespace planck::import {

using json = nlohmann::json;

std::string python_where(const json& item, const std::string& main) {
  return item.value("file", main) + ":" + std::to_string(item.value("line", 0));
}

// python3 runs with -I, which ignores PYTHONPATH, so planck passes it as --path.
std::vector<std::string> python_search_path(const ImportOptions& options) {
  std::vector<std::string> out = options.python_path;
  if (const char* env = std::getenv("PYTHONPATH")) {
    std::string all = env;
    std::size_t start = 0;
    while (start <= all.size()) {
      const std::size_t colon = std::min(all.find(':', start), all.size());
      if (colon > start) out.push_back(all.substr(start, colon - start));
      start = colon + 1;
    }
  }
  return out;
}

core::Result<json> read_python_config(const std::string& path, const std::string& function,
                                      const ImportOptions& options, const std::string& what,
                                      const std::vector<std::pair<std::string, json>>& kwargs) {
  std::vector<std::string> args = {path};
  if (!function.empty()) args.push_back(function);
  // A config function is one whose return annotation names the config class: a Megatron-Bridge
  // recipe returns a ConfigContainer (its helpers return an OptimizerConfig, a dataset config...),
  // a torchtitan registry function a Trainer.Config / JobConfig.
  args.push_back("--returns");
  args.push_back(what.rfind("Megatron-Bridge", 0) == 0 ? "ConfigContainer" : "Config");
  for (const std::string& dir : python_search_path(options)) {
    args.push_back("--path");
    args.push_back(dir);
  }
  // --set NAME=VALUE with a plain name: the launch's environment, which os.environ.get reads.
  for (const auto& [name, value] : options.sets) {
    if (name.empty() || name.find('.') != std::string::npos) continue;
    args.push_back("--env");
    args.push_back(name + "=" + value);
  }
  for (const auto& [name, value] : kwargs) {
    args.push_back("--kwarg");
    args.push_back(name + "=" + value.dump());
  }
  auto out = run_python(torchtitan_registry_script(), args, 60);
  if (!out) return core::Status::error(path + ": cannot read the " + what + ": " + out.message());
  json doc = json::parse(*out, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return core::Status::error(path + ": the " + what + " reader printed no JSON (planck's python/ script)");
  }
  if (doc.contains("error")) return core::Status::error(doc["error"].get<std::string>());
  return doc;
}

// What the reader could not follow: those that may set a setting that matters are refused, the
// others are notes (--explain); a setting --set gives is settled.
std::vector<Unfollowed> python_unfollowed(const json& fn, const std::string& path, const ImportOptions& options,
                                          PlanBuilder& b, bool (*matters)(const std::string&)) {
  std::vector<Unfollowed> out;
  auto given = [&](const std::string& p) {  // --set gives the value, whatever the code does
    return std::any_of(options.sets.begin(), options.sets.end(), [&](const auto& s) { return s.first == p; });
  };
  for (const json& u : fn.value("unfollowed", json::array())) {
    std::string settings;
    for (const json& t : u.value("touches", json::array())) {
      const std::string p = t.get<std::string>();
      if (!matters(p) || given(p)) continue;
      if (!settings.empty()) settings += ", ";
      settings += p.empty() ? std::string("the whole config") : p;
    }
    std::string text = "`";  // appended, not `"`" + ...`: GCC 12 warns -Wrestrict on that inlined operator+
    text += u.value("construct", "") + "` not followed: " + u.value("why", "");
    if (settings.empty()) {
      b.note(python_where(u, path) + ": " + text + " (sets nothing planck reads)");
      continue;
    }
    Unfollowed one{u.value("file", path), u.value("line", 0), u.value("construct", ""), u.value("why", ""), settings};
    const bool seen = std::any_of(out.begin(), out.end(), [&](const Unfollowed& o) {  // a helper called twice
      return o.file == one.file && o.line == one.line && o.construct == one.construct && o.settings == one.settings;
    });
    if (!seen) out.push_back(std::move(one));
  }
  // Environment reads (os.environ.get(NAME, DEFAULT)) the command line did not give: a setting
  // planck reads that was made from one, or a branch one decided, rests on the default.
  auto env_default = [&](const std::string& name) {
    for (const json& e : fn.value("env", json::array())) {
      if (e.value("name", "") == name && e.contains("default") && !given(name)) return e["default"].dump();
    }
    return std::string();
  };
  for (const auto& [key, s] : fn["settings"].items()) {
    if (!s.contains("env") || !matters(key) || given(key)) continue;
    std::string names, defaults;
    for (const json& n : s["env"]) {
      const std::string d = env_default(n.get<std::string>());
      if (d.empty()) continue;
      names += (names.empty() ? "" : ", ") + n.get<std::string>();
      defaults += (defaults.empty() ? "" : ", ") + n.get<std::string>() + " " + d;
    }
    if (names.empty()) continue;
    // ASCII (cut anywhere without splitting a character); a pipeline layout runs to kilobytes.
    std::string shown = s["value"].dump(-1, ' ', true);
    if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
    b.finding("setting-unmodelled", s.value("line", 0),
              key + " = " + shown + " comes from the environment (" + names + ") and was read with its "
                  "default (" + defaults + "): the launch may set it; pass --set NAME=VALUE",
              s.value("file", path));
  }
  for (const json& t : fn.value("env_tests", json::array())) {
    std::string names;
    for (const json& n : t.value("names", json::array())) {
      if (!env_default(n.get<std::string>()).empty()) names += (names.empty() ? "" : ", ") + n.get<std::string>();
    }
    if (names.empty()) continue;
    std::string text = "`";  // appended, not `"`" + ...`: GCC 12 warns -Wrestrict on that inlined operator+
    text += t.value("test", "") + "` is decided by the default of " + names +
            " (the launch may set it; pass --set NAME=VALUE)";
    b.finding("setting-unmodelled", t.value("line", 0), text, t.value("file", path));
  }
  for (const json& e : fn.value("env", json::array())) {
    const std::string got = e.contains("given") ? e["given"].dump() + " from --set"
                                                : e.value("default", json()).dump() + ", its default";
    b.note(python_where(e, path) + ": " + e.value("text", "") + " = " + got);
  }
  for (const auto& [key, s] : fn["settings"].items()) {
    if (!s.contains("unknown")) continue;
    if (!matters(key) || given(key)) {
      b.note(python_where(s, path) + ": " + key + " = `" + s.value("unknown", "") +
             "` not evaluated (planck does not read it)");
      continue;
    }
    std::string why = s.value("why", "");
    out.push_back({s.value("file", path), s.value("line", 0), s.value("unknown", ""),
                   why.empty() ? "not a value planck can evaluate without running the code" : why, key});
  }
  return out;
}

}  // namespace planck::import
