#pragma once
// Typed, line-aware access to a TOML config (toml++ 3.3) for the torchtitan importer: wrong
// types and bad values become errors naming file:line, unknown keys become warnings.

#include <toml++/toml.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/status.h"
#include "import/config_keys.h"
#include "import/plan_builder.h"

namespace planck::import {

template <typename T>
struct TomlValue {
  T value{};
  int line = 0;
  std::string section;
  std::string key;
};
using TomlInt = TomlValue<std::int64_t>;
using TomlString = TomlValue<std::string>;

// Parses TOML; a syntax error names file:line:column and the parser's reason.
core::Result<toml::table> parse_toml(std::string_view text, const PlanBuilder& builder);

class TomlReader {
 public:
  TomlReader(const toml::table& root, PlanBuilder& builder) : root_(root), builder_(builder) {}
  PlanBuilder& builder() { return builder_; }
  // Lines of a table built in memory rather than parsed ("section.key" -> line in the config the
  // values came from, e.g. a torchtitan registry); parsed nodes carry their own.
  void set_lines(const std::map<std::string, int>* lines) { lines_ = lines; }

  // unknown-key for each section or key the config class `root` of `classes` (import/config_keys.h)
  // does not define, followed down nested tables ([quantize.linear.float8]).
  // `extension`: a module the config names that adds sections to the root class (torchtitan's
  // [experimental] custom_args_module); a top-level section unknown to `classes` is then said to be
  // its, not a typo.
  void check_keys(const ConfigClasses& classes, const std::string& root, const std::string& extension = "");

  core::Result<std::optional<TomlInt>> int_in(const std::string& section, const std::string& key);
  core::Result<std::optional<TomlString>> string_in(const std::string& section, const std::string& key);
  core::Result<std::optional<bool>> bool_in(const std::string& section, const std::string& key);
  // The line `key` of `section` is written on; 0 when absent.
  int line_in(const std::string& section, const std::string& key) const;
  // An array of strings (torchtitan's [model] converters); a single string reads as one element.
  core::Result<std::optional<TomlValue<std::vector<std::string>>>> strings_in(const std::string& section,
                                                                              const std::string& key);
  // The key from the first of `sections` that has it; reading it from a later (legacy) section
  // is noted.
  core::Result<std::optional<TomlInt>> first_int(const std::vector<std::string>& sections, const std::string& key);
  core::Result<std::optional<TomlString>> first_string(const std::vector<std::string>& sections,
                                                       const std::string& key);

 private:
  const toml::node* find(const std::string& section, const std::string& key) const;
  const toml::node* first(const std::vector<std::string>& sections, const std::string& key, std::string* found_in);
  int line_of(const toml::node& node, const std::string& section, const std::string& key) const;
  core::Status type_error(const toml::node& node, const std::string& section, const std::string& key,
                          const char* wanted) const;

  const toml::table& root_;
  PlanBuilder& builder_;
  std::vector<std::string> noted_legacy_;
  const std::map<std::string, int>* lines_ = nullptr;
};

}  // namespace planck::import
