#include "io/observed_io.h"

#include <algorithm>
#include <climits>
#include <set>

#include "core/base/input_file.h"
#include "core/plan/json_doc.h"
#include "io/flight_recorder.h"
#include "io/nccl_line.h"
#include "io/nccl_log.h"
#include "core/plan/plan_load.h"
#include "core/base/str_cat.h"
#include "core/plan/json_value.h"

namespace planck::io {
namespace {

using nlohmann::json;

std::string_view skip_bom_and_space(std::string_view s) {
  if (s.substr(0, 3) == "\xEF\xBB\xBF") s.remove_prefix(3);
  while (!s.empty() && (s[0] == ' ' || s[0] == '\t' || s[0] == '\n' || s[0] == '\r')) s.remove_prefix(1);
  return s;
}

const std::vector<std::string> kTopKeys = {"format", "sources", "world", "ranks_seen", "hosts", "groups", "notes"};
const std::vector<std::string> kNoteKeys = {"source", "line", "message"};
const std::vector<std::string> kGroupKeys = {"ranks", "size", "complete", "id", "name", "source", "line"};

// Reads the checked planck-observed/1 document; errors are "FILE:LINE:COL: /pointer: what".
class ObservedReader {
 public:
  ObservedReader(const core::JsonDoc& doc, const std::string& source) : doc_(doc), source_(source) {}

  core::Status fail(const std::string& pointer, const std::string& what) const {
    core::SourcePos p = doc_.position(pointer);
    return core::Status::error(source_ + ":" + std::to_string(p.line) + ":" + std::to_string(p.column) + ": " +
                         (pointer.empty() ? "" : pointer + ": ") + what);
  }
  core::Status check_keys(const json& obj, const std::string& pointer, const std::vector<std::string>& known) const {
    for (const auto& [k, _] : obj.items()) {
      if (std::find(known.begin(), known.end(), k) != known.end()) continue;
      std::string hint = core::did_you_mean(k, known);
      core::SourcePos p = doc_.key_position(pointer + "/" + core::json_pointer_escape(k));
      return core::Status::error(source_ + ":" + std::to_string(p.line) + ":" + std::to_string(p.column) + ": unknown key '" +
                           k + "'" + (hint.empty() ? "" : " (" + hint + ")"));
    }
    return core::Status::ok();
  }
  core::Status rank(const json& v, const std::string& pointer, std::int64_t& out) const {
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() >= kMaxRanks) {
      return fail(pointer, "expected a rank, an integer in [0, 2^31 - 1), got " + core::json_excerpt(v));
    }
    out = v.get<std::int64_t>();
    return core::Status::ok();
  }
  core::Status ranks(const json& v, const std::string& pointer, std::vector<std::int64_t>& out) const {
    if (!v.is_array()) return fail(pointer, "expected a list of ranks");
    for (std::size_t i = 0; i < v.size(); ++i) {
      std::int64_t r = 0;
      if (core::Status st = rank(v[i], pointer + "/" + std::to_string(i), r); !st) return st;
      out.push_back(r);
    }
    std::sort(out.begin(), out.end());
    auto dup = std::adjacent_find(out.begin(), out.end());
    if (dup != out.end()) return fail(pointer, "rank " + std::to_string(*dup) + " is listed twice");
    return core::Status::ok();
  }
  core::Status group(const json& v, const std::string& p, core::ObservedGroup& g) const {
    if (!v.is_object()) return fail(p, "expected an object {\"ranks\": [...], \"size\": N, ...}");
    if (core::Status st = check_keys(v, p, kGroupKeys); !st) return st;
    if (!v.contains("ranks")) return fail(p, "missing \"ranks\"");
    if (core::Status st = ranks(v["ranks"], p + "/ranks", g.ranks); !st) return st;
    g.size = static_cast<std::int64_t>(g.ranks.size());
    if (v.contains("size")) {
      const json& s = v["size"];
      if (!s.is_number_integer() || s.get<std::int64_t>() < 1 || s.get<std::int64_t>() > kMaxRanks) {
        return fail(p + "/size", "expected a communicator size in [1, 2^31 - 1], got " + core::json_excerpt(s));
      }
      g.size = s.get<std::int64_t>();
      if (g.size < static_cast<std::int64_t>(g.ranks.size())) {
        return fail(p + "/size", "size " + std::to_string(g.size) + " is smaller than the " +
                                     std::to_string(g.ranks.size()) + " ranks listed");
      }
    }
    g.complete = static_cast<std::int64_t>(g.ranks.size()) == g.size;
    if (v.contains("complete")) {
      if (!v["complete"].is_boolean()) return fail(p + "/complete", "expected true or false");
      if (v["complete"].get<bool>() != g.complete) {
        return fail(p + "/complete", std::string("complete is ") + (g.complete ? "false" : "true") + " but " +
                                         std::to_string(g.ranks.size()) + " of " + std::to_string(g.size) + " ranks are listed");
      }
    }
    for (const char* k : {"id", "name", "source"}) {
      if (!v.contains(k)) continue;
      if (!v[k].is_string()) return fail(p + "/" + k, "expected a string");
      (k[0] == 'i' ? g.id : k[0] == 'n' ? g.name : g.source) = v[k].get<std::string>();
    }
    g.line = doc_.position(p).line;
    if (v.contains("line")) {
      if (!v["line"].is_number_integer() || v["line"].get<std::int64_t>() < 0 || v["line"].get<std::int64_t>() > INT_MAX) {
        return fail(p + "/line", "expected a line number");
      }
      g.line = static_cast<int>(v["line"].get<std::int64_t>());
    } else if (!g.source.empty()) {
      g.line = 0;  // a line of this JSON file means nothing in the named source
    }
    if (g.source.empty()) g.source = source_;
    return core::Status::ok();
  }

  core::Result<core::Observed> read() const {
    const json& root = doc_.root();
    if (!root.is_object()) return fail("", "expected a JSON object");
    if (core::Status st = check_keys(root, "", kTopKeys); !st) return st;
    if (!root.contains("format") || root["format"] != "planck-observed/1") {
      return fail("/format", "expected \"format\": \"planck-observed/1\"");
    }
    core::Observed o;
    if (root.contains("sources")) {
      if (!root["sources"].is_array()) return fail("/sources", "expected a list of file names");
      for (const auto& s : root["sources"]) {
        if (!s.is_string()) return fail("/sources", "expected a list of file names");
        o.sources.push_back(s.get<std::string>());
      }
    }
    if (o.sources.empty()) o.sources.push_back(source_);
    if (root.contains("world")) {
      const json& w = root["world"];
      if (!w.is_number_integer() || w.get<std::int64_t>() < 1 || w.get<std::int64_t>() > kMaxRanks) {
        return fail("/world", "expected the world size, an integer in [1, 2^31 - 1]");
      }
      o.world = w.get<std::int64_t>();
    }
    if (root.contains("ranks_seen")) {
      if (core::Status st = ranks(root["ranks_seen"], "/ranks_seen", o.ranks_seen); !st) return st;
    }
    if (root.contains("hosts")) {
      if (!root["hosts"].is_object()) return fail("/hosts", "expected {\"RANK\": \"HOST\", ...}");
      for (const auto& [k, v] : root["hosts"].items()) {
        std::string p = "/hosts/" + core::json_pointer_escape(k);
        std::int64_t r = -1;
        if (k.empty() || k.size() > 10 || k.find_first_not_of("0123456789") != std::string::npos ||
            (r = std::stoll(k)) >= kMaxRanks) {
          return fail(p, "key '" + k + "' is not a rank");
        }
        if (!v.is_string() || v.get<std::string>().empty()) return fail(p, "expected a host name");
        o.hosts[r] = v.get<std::string>();
      }
    }
    if (root.contains("groups")) {
      if (!root["groups"].is_array()) return fail("/groups", "expected a list of groups");
      for (std::size_t i = 0; i < root["groups"].size(); ++i) {
        core::ObservedGroup g;
        if (core::Status st = group(root["groups"][i], "/groups/" + std::to_string(i), g); !st) return st;
        o.groups.push_back(std::move(g));
      }
    }
    if (root.contains("notes")) {
      const json& ns = root["notes"];
      if (!ns.is_array()) return fail("/notes", "expected a list of {\"source\", \"line\", \"message\"}");
      for (std::size_t i = 0; i < ns.size(); ++i) {
        const std::string p = "/notes/" + std::to_string(i);
        const json& n = ns[i];
        if (!n.is_object()) return fail(p, "expected {\"source\": FILE, \"line\": N, \"message\": TEXT}");
        if (core::Status st = check_keys(n, p, kNoteKeys); !st) return st;
        core::ObservedNote note;
        if (!n.contains("message") || !n["message"].is_string()) return fail(p + "/message", "expected a string");
        note.message = n["message"].get<std::string>();
        note.source = source_;
        if (n.contains("source")) {
          if (!n["source"].is_string()) return fail(p + "/source", "expected a string");
          note.source = n["source"].get<std::string>();
        }
        if (n.contains("line")) {
          if (!n["line"].is_number_integer() || n["line"].get<std::int64_t>() < 0 || n["line"].get<std::int64_t>() > INT_MAX) {
            return fail(p + "/line", "expected a line number");
          }
          note.line = static_cast<int>(n["line"].get<std::int64_t>());
        }
        o.notes.push_back(std::move(note));
      }
    }
    if (o.world) {
      auto too_big = [&](std::int64_t r) { return r >= *o.world; };
      for (std::size_t i = 0; i < o.groups.size(); ++i) {
        const auto& g = o.groups[i];
        if ((!g.ranks.empty() && too_big(g.ranks.back())) || g.size > *o.world) {
          return fail("/groups/" + std::to_string(i), "group does not fit the world of " + std::to_string(*o.world) + " ranks");
        }
      }
      if (!o.ranks_seen.empty() && too_big(o.ranks_seen.back())) {
        return fail("/ranks_seen", "rank " + std::to_string(o.ranks_seen.back()) + " is outside the world of " +
                                       std::to_string(*o.world));
      }
    }
    return o;
  }

 private:
  const core::JsonDoc& doc_;
  const std::string& source_;
};

}  // namespace

const char* format_name(ObservedFormat f) {
  switch (f) {
    case ObservedFormat::kPlanckObserved: return "planck-observed/1";
    case ObservedFormat::kNcclLog: return "nccl-log";
    case ObservedFormat::kFlightRecorderJson: return "flight-recorder-json";
    case ObservedFormat::kFlightRecorderPickle: return "flight-recorder-pickle";
  }
  return "?";
}

ObservedFormat detect_format(std::string_view head) {
  std::string_view s = skip_bom_and_space(head);
  if (!s.empty() && static_cast<unsigned char>(s[0]) == 0x80) return ObservedFormat::kFlightRecorderPickle;
  if (s.empty() || s[0] != '{') return ObservedFormat::kNcclLog;
  if (s.substr(0, 4096).find("planck-observed/") != std::string_view::npos) return ObservedFormat::kPlanckObserved;
  if (s.find("\"pg_config\"") != std::string_view::npos || s.find("\"entries\"") != std::string_view::npos) {
    return ObservedFormat::kFlightRecorderJson;
  }
  return ObservedFormat::kPlanckObserved;
}

core::Result<core::Observed> parse_observed_json(std::string_view text, const std::string& source) {
  core::JsonParseError err;
  auto doc = core::JsonDoc::parse(text, &err);
  if (!doc) {
    return core::Status::error(source + ":" + std::to_string(err.pos.line) + ":" + std::to_string(err.pos.column) +
                         ": not valid JSON: " + err.message);
  }
  return ObservedReader(*doc, source).read();
}

core::Result<core::Observed> read_observed_file(const std::string& path) {
  // Peek without reading everything: logs are streamed, JSON and pickle read whole.
  core::InputFile in;
  core::Status st = in.open(path);
  if (!st) return st;
  auto head = in.peek(4096);
  if (!head) return head.status();
  std::string_view h = skip_bom_and_space(*head);
  bool structured = !h.empty() && (h[0] == '{' || static_cast<unsigned char>(h[0]) == 0x80);
  if (!structured) return read_nccl_log(std::move(in));
  auto text = in.read_rest();
  if (!text) return text.status();
  switch (detect_format(*text)) {
    case ObservedFormat::kFlightRecorderPickle: return read_flight_recorder_pickle(*text, path);
    case ObservedFormat::kFlightRecorderJson: return read_flight_recorder_json(*text, path);
    default: return parse_observed_json(*text, path);
  }
}

std::string observed_to_json(const core::Observed& o) {
  // Written by hand, one group per line (readable, diffable): an ordered_json object looks keys up
  // linearly, which costs minutes for 10^5 hosts.
  // Strings from pickles and logs may hold bytes that are not UTF-8: written as U+FFFD, never an error.
  auto q = [](const std::string& v) { return json(v).dump(-1, ' ', false, json::error_handler_t::replace); };
  auto ranks = [](const std::vector<std::int64_t>& v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) s += core::str_cat(i ? "," : "", std::to_string(v[i]));
    return s + "]";
  };
  std::string out = "{\n  \"format\": \"planck-observed/1\",\n  \"sources\": [";
  for (std::size_t i = 0; i < o.sources.size(); ++i) out += core::str_cat(i ? "," : "", q(o.sources[i]));
  out += "],\n";
  if (o.world) out += "  \"world\": " + std::to_string(*o.world) + ",\n";
  out += "  \"ranks_seen\": " + ranks(o.ranks_seen) + ",\n  \"hosts\": {";
  bool first = true;
  for (const auto& [r, h] : o.hosts) {
    out += core::str_cat(first ? "" : ",", q(std::to_string(r)), ":", q(h));
    first = false;
  }
  out += "},\n  \"groups\": [";
  for (std::size_t i = 0; i < o.groups.size(); ++i) {
    const auto& g = o.groups[i];
    out += std::string(i ? "," : "") + "\n    {\"ranks\":" + ranks(g.ranks) + ",\"size\":" + std::to_string(g.size) +
           ",\"complete\":" + (g.complete ? "true" : "false");
    if (!g.id.empty()) out += ",\"id\":" + q(g.id);
    if (!g.name.empty()) out += ",\"name\":" + q(g.name);
    if (!g.source.empty()) out += ",\"source\":" + q(g.source);
    if (g.line > 0) out += ",\"line\":" + std::to_string(g.line);
    out += "}";
  }
  out += o.groups.empty() ? "]" : "\n  ]";
  if (!o.notes.empty()) {
    out += ",\n  \"notes\": [";
    for (std::size_t i = 0; i < o.notes.size(); ++i) {
      const auto& n = o.notes[i];
      out += std::string(i ? "," : "") + "\n    {\"source\":" + q(n.source) + ",\"line\":" + std::to_string(n.line) +
             ",\"message\":" + q(n.message) + "}";
    }
    out += "\n  ]";
  }
  return out + "\n}\n";
}

}  // namespace planck::io
