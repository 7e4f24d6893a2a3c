// YAML access for the Lingua importer.

#include "import/formats/yaml_reader.h"

#include <algorithm>
#include <charconv>

#include "import/formats/yaml_omegaconf.h"

namespace planck::import {

core::Result<YAML::Node> parse_yaml(const std::string& text, const PlanBuilder& builder) {
  return load_omegaconf_yaml(text, builder);
}

YAML::Node YamlReader::section(const std::string& name) const {
  auto n = value(root_, name);
  return n && n->IsMap() ? *n : YAML::Node();
}

void YamlReader::check_keys(const YAML::Node& map, const ConfigClasses& classes, const std::string& type,
                            const std::string& where) {
  if (!map.IsDefined() || !map.IsMap()) return;
  const auto fields = config_fields(classes, type);
  if (fields.empty()) return;  // a field typed as a dict or Any: its keys are the user's
  for (const auto& kv : map) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
    auto it = fields.find(key);
    if (it == fields.end()) {
      b_.unknown_key(where + key, line(kv.first), field_names(fields));
    } else if (!it->second.empty()) {
      check_keys(kv.second, classes, it->second, where + key + ".");
    }
  }
}

std::optional<YAML::Node> YamlReader::value(const YAML::Node& map, const std::string& key) const {
  // A default-constructed YAML::Node is a defined null, so presence is tested explicitly.
  if (!map.IsDefined() || !map.IsMap()) return std::nullopt;
  const YAML::Node n = map[key];
  if (!n.IsDefined() || n.IsNull()) return std::nullopt;
  return n;
}

core::Result<std::optional<std::int64_t>> YamlReader::integer(const YAML::Node& map, const std::string& key,
                                                              const std::string& where) {
  auto found = value(map, key);
  if (!found) return std::optional<std::int64_t>();
  const YAML::Node& n = *found;
  std::string s = n.IsScalar() ? n.Scalar() : std::string();
  // YAML 1.1, which PyYAML (axolotl's, OmegaConf's loader) resolves, writes 500_000 for 500000
  // (int: [-+]?[1-9][0-9_]*): the underscores go when the rest are digits.
  if (s.find('_') != std::string::npos && s.find_first_not_of("+-0123456789_") == std::string::npos &&
      s.find_first_of("0123456789") < s.find('_')) {
    std::erase(s, '_');
  }
  std::int64_t v = 0;
  const char* first = s.data() + (s.size() > 1 && s[0] == '+' ? 1 : 0);
  auto [end, ec] = std::from_chars(first, s.data() + s.size(), v);
  if (!n.IsScalar() || s.empty() || ec != std::errc() || end != s.data() + s.size()) {
    return b_.error(line(n), where + key + " must be an integer, got '" + s + "'" +
                                 (ec == std::errc::result_out_of_range ? " (out of 64-bit range)" : ""));
  }
  return std::optional<std::int64_t>(v);
}

core::Result<std::optional<double>> YamlReader::real(const YAML::Node& map, const std::string& key,
                                                     const std::string& where) {
  auto n = value(map, key);
  if (!n) return std::optional<double>();
  try {
    return std::optional<double>(n->as<double>());
  } catch (const YAML::Exception&) {
    return b_.error(line(*n), where + key + " must be a number");
  }
}

core::Result<std::optional<std::string>> YamlReader::string(const YAML::Node& map, const std::string& key,
                                                            const std::string& where) {
  auto n = value(map, key);
  if (!n) return std::optional<std::string>();
  if (!n->IsScalar()) return b_.error(line(*n), where + key + " must be a string");
  return std::optional<std::string>(n->Scalar());
}

core::Result<bool> YamlReader::boolean(const YAML::Node& map, const std::string& key, const std::string& where,
                                       bool dflt) {
  auto n = value(map, key);
  if (!n) return dflt;
  try {
    return n->as<bool>();
  } catch (const YAML::Exception&) {
    return b_.error(line(*n), where + key + " must be true or false");
  }
}

int YamlReader::line_of(const YAML::Node& map, const std::string& key) const {
  auto n = value(map, key);
  return n ? line(*n) : 0;
}

}  // namespace planck::import
