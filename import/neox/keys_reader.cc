// NeoxKeys: typed reads of a GPT-NeoX YAML's top-level keys (import/neox/reader.h).

#include <charconv>
#include <exception>

#include "import/neox/keys.h"
#include "import/neox/reader.h"

namespace planck::import::neox {

namespace {

int neox_line_of(const YAML::Node& n) { return n.Mark().line >= 0 ? n.Mark().line + 1 : 0; }

}  // namespace

NeoxKeys::NeoxKeys(const YAML::Node& root, PlanBuilder& b) : b_(b) {
  for (const auto& kv : root) {
    if (!kv.first.IsScalar()) continue;
    std::string key = kv.first.Scalar();
    for (char& c : key) {
      if (c == '-') c = '_';
    }
    // One file cannot give a key twice (the YAML loader refuses); "a-b" beside "a_b" is the later.
    if (!values_.count(key)) order_.push_back(key);
    values_[key] = kv.second;
    lines_[key] = neox_line_of(kv.first);
  }
}

int NeoxKeys::line(const std::string& key) const {
  auto it = lines_.find(key);
  return it == lines_.end() ? 0 : it->second;
}

YAML::Node NeoxKeys::get(const std::string& key) {
  read_.insert(key);
  auto it = values_.find(key);
  if (it == values_.end() || it->second.IsNull()) return YAML::Node();
  return it->second;
}

core::Result<std::optional<std::int64_t>> NeoxKeys::integer(const std::string& key) {
  const YAML::Node n = get(key);
  if (!n.IsDefined() || n.IsNull()) return std::optional<std::int64_t>();
  const std::string s = n.IsScalar() ? n.Scalar() : std::string();
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (!n.IsScalar() || s.empty() || ec != std::errc() || end != s.data() + s.size()) {
    return b_.error(line(key), key + " must be an integer, got '" + s + "'");
  }
  return std::optional<std::int64_t>(v);
}

core::Result<std::optional<double>> NeoxKeys::real(const std::string& key) {
  const YAML::Node n = get(key);
  if (!n.IsDefined() || n.IsNull()) return std::optional<double>();
  try {
    return std::optional<double>(n.as<double>());
  } catch (const std::exception&) {
    return b_.error(line(key), key + " must be a number");
  }
}

core::Result<bool> NeoxKeys::boolean(const std::string& key, bool dflt) {
  const YAML::Node n = get(key);
  if (!n.IsDefined() || n.IsNull()) return dflt;
  try {
    return n.as<bool>();
  } catch (const std::exception&) {
    return b_.error(line(key), key + " must be true or false, got '" + (n.IsScalar() ? n.Scalar() : "?") + "'");
  }
}

core::Result<std::optional<std::string>> NeoxKeys::string(const std::string& key) {
  const YAML::Node n = get(key);
  if (!n.IsDefined() || n.IsNull()) return std::optional<std::string>();
  if (!n.IsScalar()) return b_.error(line(key), key + " must be a string");
  return std::optional<std::string>(n.Scalar());
}

core::Result<std::optional<bool>> NeoxKeys::sub_boolean(const std::string& key, const std::string& sub) {
  const YAML::Node m = get(key);
  if (!m.IsDefined() || !m.IsMap() || !m[sub].IsDefined() || m[sub].IsNull()) return std::optional<bool>();
  try {
    return std::optional<bool>(m[sub].as<bool>());
  } catch (const std::exception&) {
    return b_.error(neox_line_of(m[sub]), key + "." + sub + " must be true or false");
  }
}

core::Result<std::optional<std::int64_t>> NeoxKeys::sub_integer(const std::string& key, const std::string& sub) {
  const YAML::Node m = get(key);
  if (!m.IsDefined() || !m.IsMap() || !m[sub].IsDefined() || m[sub].IsNull()) return std::optional<std::int64_t>();
  const std::string s = m[sub].IsScalar() ? m[sub].Scalar() : std::string();
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) {
    return b_.error(neox_line_of(m[sub]), key + "." + sub + " must be an integer, got '" + s + "'");
  }
  return std::optional<std::int64_t>(v);
}

void NeoxKeys::warn_unknown() {
  // NeoXArgs is every class of neox_args.py and deepspeed_args.py (arguments.py:103-126); a key
  // none defines makes NeoX raise (NeoXArgs(**config), arguments.py:285, a TypeError).
  std::map<std::string, std::string> fields;
  for (const auto& [cls, own] : neox_classes()) fields.insert(own.begin(), own.end());
  const std::vector<std::string> known = field_names(fields);
  for (const std::string& key : order_) {
    if (!fields.count(key)) {
      b_.unknown_key(key, line(key), known);
      read_.insert(key);
    }
  }
}

std::vector<std::string> NeoxKeys::unread() const {
  std::vector<std::string> out;
  for (const std::string& key : order_) {
    if (!read_.count(key)) out.push_back(key);
  }
  return out;
}

}  // namespace planck::import::neox
