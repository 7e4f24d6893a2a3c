// NeoxKeys: typed reads of a GPT-NeoX YAML's top-level keys (import/neox/reader.h).

#include <cctype>
#include <charconv>
#include <exception>
#include <filesystem>

#include "import/neox/keys.h"
#include "import/neox/reader.h"

namespace planck::import::neox {

std::string neox_key(std::string key) {
  for (char& c : key) {
    if (c == '-') c = '_';
  }
  return key;
}

int neox_line_of(const YAML::Node& n) { return n.Mark().line >= 0 ? n.Mark().line + 1 : 0; }

std::string neox_lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

core::Status NeoxKeys::add(const YAML::Node& root, const std::string& file) {
  // from_ymls asserts the files' names differ (arguments.py:258-260): it saves each by its name.
  const std::string base = std::filesystem::path(file.empty() ? b_.path() : file).filename().string();
  if (!basenames_.insert(base).second) {
    return b_.error(Where(0, file), "two files of the run are named " + base +
                                        ": NeoX asserts \"At least two config files have the same filename\" "
                                        "(arguments.py:258-260); rename one");
  }
  for (const auto& kv : root) {
    if (!kv.first.IsScalar()) continue;
    const std::string written = kv.first.Scalar();
    const std::string key = neox_key(written);
    const int at = neox_line_of(kv.first);
    if (files_.count(key) && files_.at(key) != file) {
      // from_ymls checks the key as written against the merged (underscored) keys: a key another
      // file gave raises; its dashed spelling passes the check and replaces the earlier value.
      if (written == key) {
        const std::string earlier = files_.at(key).empty() ? b_.path() : files_.at(key);
        return b_.error(Where(at, file), key + " is given by " + earlier + ":" + std::to_string(lines_.at(key)) +
                                             " too: NeoX raises \"has the following duplicate keys with previously "
                                             "loaded file\" (arguments.py:245-248); keep one");
      }
      b_.note(written + " in " + (file.empty() ? b_.path() : file) + " replaces " + key +
              " of an earlier file: NeoX's duplicate check compares the dashed name and misses it");
    }
    // One file cannot give a key twice (the YAML loader refuses); "a-b" beside "a_b" is the later.
    if (!values_.count(key)) order_.push_back(key);
    values_[key] = kv.second;
    lines_[key] = at;
    files_[key] = file;
  }
  return core::Status::ok();
}

Where NeoxKeys::line(const std::string& key) const {
  auto it = lines_.find(key);
  if (it == lines_.end()) return 0;
  return Where(it->second, files_.at(key));
}

const std::string& NeoxKeys::file(const std::string& key) const {
  static const std::string kConfig;
  auto it = files_.find(key);
  return it == files_.end() ? kConfig : it->second;
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
    return b_.error(Where(neox_line_of(m[sub]), file(key)), key + "." + sub + " must be true or false");
  }
}

core::Result<std::optional<std::int64_t>> NeoxKeys::sub_integer(const std::string& key, const std::string& sub) {
  const YAML::Node m = get(key);
  if (!m.IsDefined() || !m.IsMap() || !m[sub].IsDefined() || m[sub].IsNull()) return std::optional<std::int64_t>();
  const std::string s = m[sub].IsScalar() ? m[sub].Scalar() : std::string();
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) {
    return b_.error(Where(neox_line_of(m[sub]), file(key)), key + "." + sub + " must be an integer, got '" + s + "'");
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
