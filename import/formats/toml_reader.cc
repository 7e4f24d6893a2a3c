// TOML access for the torchtitan importer.

#include "import/formats/toml_reader.h"

#include <algorithm>
#include <sstream>

#include "core/base/utf8.h"
#include "import/formats/toml_scan.h"

namespace planck::import {

namespace {

int node_line(const toml::node& n) { return static_cast<int>(n.source().begin.line); }

const char* type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    default:
      return "a date/time";
  }
}

}  // namespace

core::Result<toml::table> parse_toml(std::string_view text, const PlanBuilder& builder) {
  if (auto st = check_toml_limits(text, builder.path()); !st) return st;
  try {
    return toml::parse(text, builder.path());
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    std::ostringstream os;
    os << builder.path() << ":" << b.line << ":" << b.column << ": not valid TOML: " << core::excerpt(e.description(), 200);
    return core::Status::error(os.str());
  }
}

namespace {

void check_table(const toml::table& t, const ConfigClasses& classes, const std::string& type, const std::string& where,
                 PlanBuilder& b, const std::string& extension) {
  const auto fields = config_fields(classes, type);
  if (fields.empty()) return;  // a field typed as a dict: its keys are the user's
  for (const auto& [name, node] : t) {
    const std::string key(name.str());
    const std::string shown = where.empty() ? "[" + key + "]" : "[" + where + "] " + key;
    auto it = fields.find(key);
    if (it == fields.end() && where.empty() && node.is_table() && !extension.empty()) {
      // A section the config's own JobConfig extension defines (torchtitan merges the dataclass
      // that module names into JobConfig): the framework reads it, planck does not.
      b.unmodelled(shown, node_line(node),
                   "a section of " + extension + ", the JobConfig extension the config names, which planck does not "
                   "read; what it sets is not applied");
    } else if (it == fields.end()) {
      b.unknown_key(shown, node_line(node), field_names(fields));
    } else if (const toml::table* sub = node.as_table(); sub && !it->second.empty()) {
      check_table(*sub, classes, it->second, where.empty() ? key : where + "." + key, b, extension);
    }
  }
}

}  // namespace

void TomlReader::check_keys(const ConfigClasses& classes, const std::string& root, const std::string& extension) {
  check_table(root_, classes, root, "", builder_, extension);
}

const toml::node* TomlReader::find(const std::string& section, const std::string& key) const {
  // A dotted section ("quantize.linear.float8") is a path of nested tables.
  const toml::table* t = section.find('.') == std::string::npos ? root_[section].as_table()
                                                                 : toml::at_path(root_, section).as_table();
  if (!t) return nullptr;
  return t->get(key);
}

const toml::node* TomlReader::first(const std::vector<std::string>& sections, const std::string& key,
                                    std::string* found_in) {
  for (std::size_t i = 0; i < sections.size(); ++i) {
    if (const toml::node* n = find(sections[i], key)) {
      *found_in = sections[i];
      if (i > 0 && std::find(noted_legacy_.begin(), noted_legacy_.end(), key) == noted_legacy_.end()) {
        noted_legacy_.push_back(key);
        builder_.note(key + " read from [" + sections[i] + "] (torchtitan's layout before #980, 2025-03)");
      }
      return n;
    }
  }
  return nullptr;
}

int TomlReader::line_of(const toml::node& node, const std::string& section, const std::string& key) const {
  if (lines_) {
    auto it = lines_->find(section + "." + key);
    if (it != lines_->end()) return it->second;
  }
  return node_line(node);
}

core::Status TomlReader::type_error(const toml::node& node, const std::string& section, const std::string& key,
                                    const char* wanted) const {
  return builder_.error(line_of(node, section, key), "[" + section + "] " + key + " must be " + wanted + ", got " + type_name(node));
}

core::Result<std::optional<TomlInt>> TomlReader::int_in(const std::string& section, const std::string& key) {
  return first_int({section}, key);
}

core::Result<std::optional<TomlInt>> TomlReader::first_int(const std::vector<std::string>& sections,
                                                           const std::string& key) {
  std::string section;
  const toml::node* n = first(sections, key, &section);
  if (!n) return std::optional<TomlInt>();
  auto v = n->value<std::int64_t>();
  if (!n->is_integer() || !v) return type_error(*n, section, key, "an integer");
  return std::optional<TomlInt>(TomlInt{*v, line_of(*n, section, key), section, key});
}

core::Result<std::optional<TomlString>> TomlReader::string_in(const std::string& section, const std::string& key) {
  return first_string({section}, key);
}

core::Result<std::optional<TomlString>> TomlReader::first_string(const std::vector<std::string>& sections,
                                                                 const std::string& key) {
  std::string section;
  const toml::node* n = first(sections, key, &section);
  if (!n) return std::optional<TomlString>();
  if (!n->is_string()) return type_error(*n, section, key, "a string");
  return std::optional<TomlString>(TomlString{*n->value<std::string>(), line_of(*n, section, key), section, key});
}

core::Result<std::optional<bool>> TomlReader::bool_in(const std::string& section, const std::string& key) {
  const toml::node* n = find(section, key);
  if (!n) return std::optional<bool>();
  if (!n->is_boolean()) return type_error(*n, section, key, "a boolean");
  return std::optional<bool>(*n->value<bool>());
}

int TomlReader::line_in(const std::string& section, const std::string& key) const {
  const toml::node* n = find(section, key);
  return n ? line_of(*n, section, key) : 0;
}

core::Result<std::optional<TomlValue<std::vector<std::string>>>> TomlReader::strings_in(const std::string& section,
                                                                                        const std::string& key) {
  using Out = std::optional<TomlValue<std::vector<std::string>>>;
  const toml::node* n = find(section, key);
  if (!n) return Out();
  TomlValue<std::vector<std::string>> v{{}, line_of(*n, section, key), section, key};
  if (n->is_string()) {
    v.value.push_back(*n->value<std::string>());
    return Out(v);
  }
  const toml::array* a = n->as_array();
  if (!a) return type_error(*n, section, key, "an array of strings");
  for (const toml::node& e : *a) {
    if (!e.is_string()) return type_error(*n, section, key, "an array of strings");
    v.value.push_back(*e.value<std::string>());
  }
  return Out(v);
}

}  // namespace planck::import
