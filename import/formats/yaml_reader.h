#pragma once
// Typed, line-aware reads from a YAML config (yaml-cpp 0.7) for the Lingua importer: wrong types
// become errors naming file:line, unknown keys become warnings.

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "import/config_keys.h"
#include "import/plan_builder.h"

namespace planck::import {

// Parses one YAML document as OmegaConf does (import/formats/yaml_omegaconf.h); a syntax error names
// file:line and the parser's reason.
core::Result<YAML::Node> parse_yaml(const std::string& text, const PlanBuilder& builder);

class YamlReader {
 public:
  YamlReader(const YAML::Node& root, PlanBuilder& b) : root_(root), b_(b) {}

  static int line(const YAML::Node& n) { return n.Mark().line >= 0 ? n.Mark().line + 1 : 0; }
  // The mapping under `name`, or a null node (test with IsMap()) when absent or not a mapping.
  YAML::Node section(const std::string& name) const;
  // unknown-key for each key of `map` (and of its sub-mappings, recursively) that the config class
  // `type` of `classes` (import/config_keys.h) does not define; `where` prefixes key names in
  // messages, e.g. "distributed.".
  void check_keys(const YAML::Node& map, const ConfigClasses& classes, const std::string& type, const std::string& where);

  core::Result<std::optional<std::int64_t>> integer(const YAML::Node& map, const std::string& key,
                                                    const std::string& where);
  core::Result<std::optional<double>> real(const YAML::Node& map, const std::string& key, const std::string& where);
  core::Result<std::optional<std::string>> string(const YAML::Node& map, const std::string& key,
                                                  const std::string& where);
  core::Result<bool> boolean(const YAML::Node& map, const std::string& key, const std::string& where, bool dflt);
  int line_of(const YAML::Node& map, const std::string& key) const;

 private:
  // The value of `key` when `map` is a mapping holding a non-null value.
  std::optional<YAML::Node> value(const YAML::Node& map, const std::string& key) const;

  YAML::Node root_;
  PlanBuilder& b_;
};

}  // namespace planck::import
