#include "core/plan/schema_reader.h"

#include <algorithm>
#include <cctype>

#include "core/plan/json_value.h"
#include "core/plan/plan_load.h"

namespace planck::core {

std::string json_type_name(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::object: return "an object";
    case nlohmann::json::value_t::array: return "an array";
    case nlohmann::json::value_t::string: return "a string";
    case nlohmann::json::value_t::boolean: return "a boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned: return "an integer";
    case nlohmann::json::value_t::number_float: return "a number with a fraction or exponent";
    default: return "an unsupported value";
  }
}

void SchemaReader::error(const std::string& pointer, std::string message, std::string hint, bool at_key) {
  Diagnostic d;
  d.rule = "plan-schema";
  d.severity = Severity::kError;
  d.message = std::move(message);
  d.pointer = pointer;
  SourcePos pos = at_key ? doc_.key_position(pointer) : doc_.position(pointer);
  d.line = pos.line;
  d.column = pos.column;
  d.hint = std::move(hint);
  out_.add(std::move(d));
}

void SchemaReader::check_keys(const nlohmann::json& obj, const std::string& pointer,
                              const std::vector<std::string>& allowed) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool ok = false;
    for (const auto& a : allowed) ok = ok || a == it.key();
    if (ok) continue;
    std::string where = pointer.empty() ? "the top level" : "'" + pointer + "'";
    std::string dym = did_you_mean(it.key(), allowed);
    std::string known;
    for (const auto& a : allowed) known += (known.empty() ? "" : ", ") + a;
    error(pointer + "/" + json_pointer_escape(it.key()), "unknown key '" + it.key() + "' in " + where +
              (dym.empty() ? "" : "; " + dym),
          dym.empty() ? "allowed keys: " + known : "rename it, or remove it (allowed keys: " + known + ")", true);
  }
}

bool SchemaReader::is_object(const nlohmann::json& v, const std::string& pointer, const char* what) {
  if (v.is_object()) return true;
  error(pointer, std::string(what) + " must be an object, not " + json_type_name(v));
  return false;
}

std::optional<std::int64_t> SchemaReader::integer(const nlohmann::json& v, const std::string& pointer,
                                                  std::int64_t min, std::int64_t max) {
  std::int64_t x = 0;
  if (v.is_number_integer() && !v.is_number_unsigned()) {
    x = v.get<std::int64_t>();
  } else if (v.is_number_unsigned()) {
    auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(INT64_MAX)) {
      error(pointer, "'" + pointer + "' = " + std::to_string(u) + " does not fit in 64 bits",
            "use a value between " + std::to_string(min) + " and " + std::to_string(max));
      return std::nullopt;
    }
    x = static_cast<std::int64_t>(u);
  } else if (v.is_number_float()) {
    error(pointer, "'" + pointer + "' must be an integer, not " + json_excerpt(v),
          "write a whole number between " + std::to_string(min) + " and " + std::to_string(max));
    return std::nullopt;
  } else {
    error(pointer, "'" + pointer + "' must be an integer, not " + json_type_name(v));
    return std::nullopt;
  }
  if (x < min || x > max) {
    error(pointer, "'" + pointer + "' = " + std::to_string(x) + " is out of range [" + std::to_string(min) + ", " +
                       std::to_string(max) + "]");
    return std::nullopt;
  }
  return x;
}

std::optional<double> SchemaReader::number(const nlohmann::json& v, const std::string& pointer, double min,
                                           double max) {
  if (!v.is_number()) {
    error(pointer, "'" + pointer + "' must be a number, not " + json_type_name(v));
    return std::nullopt;
  }
  double x = v.get<double>();
  if (!(x >= min && x <= max)) {
    error(pointer, "'" + pointer + "' = " + json_excerpt(v) + " is out of range [" + nlohmann::json(min).dump() + ", " +
                       nlohmann::json(max).dump() + "]");
    return std::nullopt;
  }
  return x;
}

std::optional<bool> SchemaReader::boolean(const nlohmann::json& v, const std::string& pointer) {
  if (!v.is_boolean()) {
    error(pointer, "'" + pointer + "' must be true or false, not " + json_type_name(v));
    return std::nullopt;
  }
  return v.get<bool>();
}

std::optional<std::string> SchemaReader::string(const nlohmann::json& v, const std::string& pointer) {
  if (!v.is_string()) {
    error(pointer, "'" + pointer + "' must be a string, not " + json_type_name(v));
    return std::nullopt;
  }
  return v.get<std::string>();
}

std::optional<std::vector<std::string>> SchemaReader::string_list(const nlohmann::json& v,
                                                                  const std::string& pointer) {
  if (!v.is_array()) {
    error(pointer, "'" + pointer + "' must be an array of strings, not " + json_type_name(v));
    return std::nullopt;
  }
  std::vector<std::string> out;
  bool ok = true;
  for (std::size_t i = 0; i < v.size(); ++i) {
    auto s = string(v[i], pointer + "/" + std::to_string(i));
    if (s) out.push_back(*s);
    else ok = false;
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<std::string> SchemaReader::choice(const nlohmann::json& v, const std::string& pointer,
                                                const std::vector<std::string>& choices) {
  std::string known;
  for (const auto& c : choices) known += (known.empty() ? "" : ", ") + c;
  if (!v.is_string()) {
    error(pointer, "'" + pointer + "' must be one of " + known + " (a string), not " + json_type_name(v));
    return std::nullopt;
  }
  const auto s = std::optional<std::string>(v.get<std::string>());
  // Enum values compare without regard to case ("FSDP", "Selective"); the canonical spelling is kept.
  auto same = [](const std::string& a, const std::string& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
             return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
  };
  for (const auto& c : choices) {
    if (same(c, *s)) return c;
  }
  std::string dym = did_you_mean(*s, choices);
  error(pointer, "'" + pointer + "' = \"" + *s + "\" is not one of " + known + (dym.empty() ? "" : "; " + dym));
  return std::nullopt;
}

}  // namespace planck::core
