#include "io/flight_recorder.h"

#include <algorithm>
#include <climits>
#include <set>
#include <unordered_map>

#include "core/base/json_scan.h"
#include "core/base/utf8.h"
#include "core/plan/json_value.h"
#include "io/nccl_line.h"
#include "io/pickle_reader.h"

namespace planck::io {
namespace {

using nlohmann::json;

// "[0, 1, 2]" (torch's ranks_str, with or without spaces) or a JSON array of ints.
core::Result<std::vector<std::int64_t>> parse_ranks(const json& v, const std::string& where) {
  std::vector<std::int64_t> out;
  auto add = [&](std::int64_t r) {
    if (r < 0 || r >= kMaxRanks) return false;
    out.push_back(r);
    return true;
  };
  if (v.is_array()) {
    for (const auto& x : v) {
      if (!x.is_number_integer() || !add(x.get<std::int64_t>())) {
        return core::Status::error(where + ": ranks must be integers in [0, 2^31 - 1), got " + core::json_excerpt(x));
      }
    }
  } else if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    std::int64_t cur = -1;
    for (char c : s) {
      if (c >= '0' && c <= '9') {
        cur = (cur < 0 ? 0 : cur) * 10 + (c - '0');
        if (cur >= kMaxRanks) return core::Status::error(where + ": rank past 2^31 - 1 in \"" + s.substr(0, 80) + "\"");
      } else if (c == ',' || c == ']') {
        if (cur >= 0) add(cur);
        cur = -1;
      } else if (c != ' ' && c != '[') {
        return core::Status::error(where + ": ranks \"" + s.substr(0, 80) + "\" is not a list like \"[0, 1, 2]\"");
      }
    }
    if (cur >= 0) add(cur);
  } else {
    return core::Status::error(where + ": ranks must be a list or a string like \"[0, 1, 2]\"");
  }
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end()) {
    return core::Status::error(where + ": a rank is listed twice");
  }
  return out;
}

// Trailing digits of the file name (fr_trace: rank = int(filename[len(prefix):])).
std::int64_t rank_from_name(const std::string& path) {
  std::string base = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  for (const char* ext : {".json", ".pkl", ".pickle"}) {
    std::string e(ext);
    if (base.size() > e.size() && base.compare(base.size() - e.size(), e.size(), e) == 0) base.resize(base.size() - e.size());
  }
  std::size_t k = base.size();
  while (k > 0 && base[k - 1] >= '0' && base[k - 1] <= '9') --k;
  if (k == base.size() || base.size() - k > 9) return -1;
  return std::stoll(base.substr(k));
}

}  // namespace

bool looks_like_flight_recorder(const json& doc) {
  return doc.is_object() && (doc.contains("pg_config") || (doc.contains("entries") && doc.contains("version")));
}

core::Result<core::Observed> flight_recorder_to_observed(const json& dump, const std::string& source,
                                                         std::string_view text, std::size_t pg_config_at) {
  if (!dump.is_object() || !dump.contains("pg_config") || !dump["pg_config"].is_object()) {
    return core::Status::error(source + ": flight-recorder dump without a \"pg_config\" object (process groups); "
                               "it needs torch >= 2.2 with TORCH_NCCL_TRACE_BUFFER_SIZE (or TORCH_FR_BUFFER_SIZE) > 0");
  }
  core::Observed obs;
  obs.sources.push_back(source);
  // The line of every group's key, indexed in one pass (a text.find per key was quadratic: 50,000
  // groups took 3 minutes).
  const std::size_t pg_at = pg_config_at != std::string_view::npos ? pg_config_at : text.find("\"pg_config\"");
  const auto key_lines = pg_at == std::string_view::npos ? std::unordered_map<std::string, int>()
                                                         : core::member_key_lines(text, pg_at);
  std::vector<std::string> names;
  for (const auto& [key, _] : dump["pg_config"].items()) names.push_back(key);
  // Numeric pg names ("0", "1", ...) in creation order.
  std::stable_sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  for (const auto& key : names) {
    const json& v = dump["pg_config"][key];
    const std::string where = source + ": pg_config \"" + key + "\"";
    auto ranks = parse_ranks(v.is_object() ? v.value("ranks", json()) : v, where);
    if (!ranks) return ranks.status();
    core::ObservedGroup g;
    g.ranks = std::move(*ranks);
    g.size = static_cast<std::int64_t>(g.ranks.size());
    g.complete = true;
    g.id = v.is_object() && v.contains("name") && v["name"].is_string() ? v["name"].get<std::string>() : key;
    if (v.is_object() && v.contains("desc") && v["desc"].is_string()) g.name = v["desc"].get<std::string>();
    g.source = source;
    const auto line = key_lines.find(key);
    g.line = line == key_lines.end() ? 0 : line->second;
    if (g.name == "default_pg") obs.world = g.size;
    obs.groups.push_back(std::move(g));
  }
  // The dumping rank belongs to every group it lists.
  std::set<std::int64_t> common;
  for (std::size_t i = 0; i < obs.groups.size(); ++i) {
    std::set<std::int64_t> these(obs.groups[i].ranks.begin(), obs.groups[i].ranks.end());
    if (i == 0) common = these;
    else {
      std::set<std::int64_t> keep;
      std::set_intersection(common.begin(), common.end(), these.begin(), these.end(), std::inserter(keep, keep.end()));
      common = std::move(keep);
    }
  }
  std::int64_t rank = rank_from_name(source);
  if (rank >= 0 && !obs.groups.empty() && !common.count(rank)) rank = -1;
  if (rank < 0 && common.size() == 1) rank = *common.begin();
  if (rank >= 0) obs.ranks_seen.push_back(rank);
  if (obs.world) {
    for (const auto& g : obs.groups) {
      if (!g.ranks.empty() && g.ranks.back() >= *obs.world) {
        return core::Status::error(source + ": pg_config \"" + g.id + "\" names rank " + std::to_string(g.ranks.back()) +
                                   " but the default group has only " + std::to_string(*obs.world) + " ranks");
      }
    }
  }
  return obs;
}

core::Result<core::Observed> read_flight_recorder_json(std::string_view text, const std::string& source) {
  if (auto st = core::check_json_nesting(text, source); !st) return st;
  // Validated without building anything, then only pg_config and the version are built: entries
  // and stack frames can be hundreds of MB. (nlohmann's callback parser, which once did the
  // keeping, rescans an object's members each time one of them ends: quadratic in the number of
  // process groups.)
  if (!json::accept(text.begin(), text.end())) {
    try {
      [[maybe_unused]] const json where = json::parse(text.begin(), text.end());
    } catch (const json::exception& e) {
      return core::Status::error(source + ": not valid JSON: " + core::excerpt(e.what(), 200));
    }
    return core::Status::error(source + ": not valid JSON");
  }
  const auto members = core::top_level_members(text);
  json doc = json::object();
  for (const char* key : {"pg_config", "version", "comm_lib_version"}) {
    auto it = members.find(key);
    if (it != members.end()) doc[key] = json::parse(it->second.value.begin(), it->second.value.end());
  }
  const auto pg = members.find("pg_config");
  return flight_recorder_to_observed(doc, source, text, pg == members.end() ? std::string_view::npos : pg->second.key_at);
}

core::Result<core::Observed> read_flight_recorder_pickle(std::string_view bytes, const std::string& source) {
  auto doc = read_pickle(bytes);
  if (!doc) return core::Status::error(source + ": " + doc.message());
  return flight_recorder_to_observed(*doc, source, {});
}

}  // namespace planck::io
