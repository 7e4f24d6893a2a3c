#include "sim/topology.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/base/input_file.h"
#include "core/plan/json_doc.h"

namespace planck::sim {
namespace {

constexpr LinkClass kLinks[] = {LinkClass::kNvlink, LinkClass::kNet, LinkClass::kShm, LinkClass::kLoopback};

int op_index(core::CollOp op) { return static_cast<int>(op); }
int link_index(LinkClass link) { return static_cast<int>(link); }

std::string known_links() { return "nvlink, net, shm, loopback"; }

core::Status err(const std::string& path, const std::string& pointer, const std::string& what) {
  return core::Status::error(path + ": " + (pointer.empty() ? std::string("/") : pointer) + ": " + what);
}

// A non-negative finite number at obj[key]; absent -> `fallback`.
core::Result<double> number(const nlohmann::json& obj, const char* key, double fallback, const std::string& path,
                            const std::string& ptr) {
  auto it = obj.find(key);
  if (it == obj.end()) return fallback;
  if (!it->is_number()) return err(path, ptr + "/" + key, std::string("expected a number, got ") + it->type_name());
  double v = it->get<double>();
  if (!std::isfinite(v) || v < 0) {
    return err(path, ptr + "/" + key, "must be a finite number >= 0, got " + it->dump());
  }
  return v;
}

// "points": [[group_size, bytes, seconds], ...], returned sorted by (group_size, bytes).
core::Result<std::vector<MeasuredPoint>> parse_points(const nlohmann::json& j, const std::string& path,
                                                      const std::string& ptr) {
  constexpr const char* kShape = "expected [group_size, bytes, seconds]";
  if (!j.is_array()) return err(path, ptr, std::string("expected an array of [group_size, bytes, seconds], got ") + j.type_name());
  std::vector<MeasuredPoint> out;
  out.reserve(j.size());
  for (std::size_t i = 0; i < j.size(); ++i) {
    const std::string p = ptr + "/" + std::to_string(i);
    const nlohmann::json& e = j[i];
    if (!e.is_array() || e.size() != 3) return err(path, p, std::string(kShape) + ", got " + e.dump().substr(0, 80));
    MeasuredPoint m;
    for (int c = 0; c < 2; ++c) {
      const nlohmann::json& v = e[static_cast<std::size_t>(c)];
      const char* what = c == 0 ? "group_size" : "bytes";
      // Unsigned first: a value past 2^63 does not fit get<std::int64_t>().
      constexpr std::uint64_t kMax = std::uint64_t{1} << 62;
      const bool ok = v.is_number_unsigned() ? v.get<std::uint64_t>() >= 1 && v.get<std::uint64_t>() <= kMax
                                             : v.is_number_integer() && v.get<std::int64_t>() >= 1 &&
                                                   static_cast<std::uint64_t>(v.get<std::int64_t>()) <= kMax;
      if (!ok) {
        return err(path, p + "/" + std::to_string(c),
                   std::string(what) + " must be an integer from 1 to 2^62, got " + v.dump().substr(0, 40));
      }
      (c == 0 ? m.group_size : m.bytes) = v.get<std::int64_t>();
    }
    const nlohmann::json& t = e[2];
    if (!t.is_number() || !std::isfinite(t.get<double>()) || t.get<double>() <= 0) {
      return err(path, p + "/2", "seconds must be a finite number > 0, got " + t.dump().substr(0, 40));
    }
    m.time_s = t.get<double>();
    out.push_back(m);
  }
  sort_points(out);
  for (std::size_t i = 1; i < out.size(); ++i) {
    if (out[i].group_size == out[i - 1].group_size && out[i].bytes == out[i - 1].bytes) {
      return err(path, ptr,
                 "two points for group size " + std::to_string(out[i].group_size) + " and " +
                     std::to_string(out[i].bytes) + " bytes: keep one (calibrate writes the median)");
    }
  }
  return out;
}

core::Result<LinkFit> parse_fit(const nlohmann::json& j, const std::string& path, const std::string& ptr) {
  if (!j.is_object()) return err(path, ptr, std::string("expected an object, got ") + j.type_name());
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    if (k != "latency_s" && k != "step_latency_s" && k != "bandwidth_GBps" && k != "points" && k != "fit") {
      return err(path, ptr + "/" + k,
                 "unknown key '" + k + "' (known: latency_s, step_latency_s, bandwidth_GBps, points, fit)");
    }
  }
  if (!j.contains("bandwidth_GBps")) {
    return err(path, ptr, "missing bandwidth_GBps (bus bandwidth in GB/s, GB = 1e9 bytes)");
  }
  LinkFit f;
  auto lat = number(j, "latency_s", 0, path, ptr);
  if (!lat) return lat.status();
  auto step = number(j, "step_latency_s", 0, path, ptr);
  if (!step) return step.status();
  auto bw = number(j, "bandwidth_GBps", 0, path, ptr);
  if (!bw) return bw.status();
  if (*bw <= 0) return err(path, ptr + "/bandwidth_GBps", "must be > 0 GB/s");
  f.latency_s = *lat;
  f.step_latency_s = *step;
  f.bandwidth_gbps = *bw;
  if (auto it = j.find("points"); it != j.end()) {
    auto points = parse_points(*it, path, ptr + "/points");
    if (!points) return points.status();
    f.points = std::move(*points);
  }
  if (auto it = j.find("fit"); it != j.end()) f.fit = *it;
  return f;
}

core::Result<LinkClass> link_at(const nlohmann::json& j, const std::string& path, const std::string& ptr) {
  if (!j.is_string()) return err(path, ptr, std::string("expected a link class name, got ") + j.type_name());
  auto l = parse_link(j.get<std::string>());
  if (!l) return err(path, ptr, "unknown link class '" + j.get<std::string>() + "' (known: " + known_links() + ")");
  return *l;
}

nlohmann::json fit_json(const LinkFit& f) {
  nlohmann::json j = {{"latency_s", f.latency_s}, {"step_latency_s", f.step_latency_s},
                      {"bandwidth_GBps", f.bandwidth_gbps}};
  if (!f.points.empty()) {
    nlohmann::json points = nlohmann::json::array();
    for (const auto& m : f.points) points.push_back({m.group_size, m.bytes, m.time_s});
    j["points"] = std::move(points);
  }
  if (!f.fit.is_null()) j["fit"] = f.fit;
  return j;
}

}  // namespace

const char* link_name(LinkClass link) {
  switch (link) {
    case LinkClass::kNvlink: return "nvlink";
    case LinkClass::kNet: return "net";
    case LinkClass::kShm: return "shm";
    case LinkClass::kLoopback: return "loopback";
  }
  return "nvlink";
}

std::optional<LinkClass> parse_link(std::string_view name) {
  for (LinkClass l : kLinks) {
    if (name == link_name(l)) return l;
  }
  if (name == "nic") return LinkClass::kNet;  // the brief's other name for the network class
  return std::nullopt;
}

void sort_points(std::vector<MeasuredPoint>& points) {
  std::sort(points.begin(), points.end(), [](const MeasuredPoint& a, const MeasuredPoint& b) {
    return std::pair(a.group_size, a.bytes) < std::pair(b.group_size, b.bytes);
  });
}

double LinkFit::line_time_s(core::CollOp op, std::int64_t n, std::int64_t bytes) const {
  const double wire = static_cast<double>(core::wire_bytes_per_rank(op, n, bytes));
  const double steps = static_cast<double>(core::ring_steps(op, n));
  // A group of one rank moves nothing and launches nothing worth timing.
  if (wire == 0 && steps == 0) return 0;
  return latency_s + step_latency_s * steps + wire / (bandwidth_gbps * 1e9);
}

LinkFit::Estimate LinkFit::estimate(core::CollOp op, std::int64_t n, std::int64_t bytes) const {
  const double line = line_time_s(op, n, bytes);
  auto first = std::lower_bound(points.begin(), points.end(), n,
                                [](const MeasuredPoint& m, std::int64_t g) { return m.group_size < g; });
  auto last = std::find_if(first, points.end(), [n](const MeasuredPoint& m) { return m.group_size != n; });
  if (first == last || line == 0) return {line, false};
  auto hi = std::lower_bound(first, last, bytes, [](const MeasuredPoint& m, std::int64_t b) { return m.bytes < b; });
  if (hi != last && hi->bytes == bytes) return {hi->time_s, true};
  if (hi == first || hi == last) {
    // Outside the sweep: the nearest measurement, scaled as the line scales.
    const MeasuredPoint& end = hi == first ? *first : *(last - 1);
    const double line_end = line_time_s(op, n, end.bytes);
    return {line_end > 0 ? end.time_s * line / line_end : end.time_s, true};
  }
  // Between two measured sizes: a power law through both (a straight line in log-log).
  const MeasuredPoint& lo = *(hi - 1);
  const double x = std::log(static_cast<double>(bytes) / static_cast<double>(lo.bytes)) /
                   std::log(static_cast<double>(hi->bytes) / static_cast<double>(lo.bytes));
  return {lo.time_s * std::pow(hi->time_s / lo.time_s, x), true};
}

const LinkFit* Topology::find(LinkClass link, core::CollOp op) const {
  const auto& f = fits[link_index(link)][op_index(op)];
  if (f) return &*f;
  const auto& d = defaults[link_index(link)];
  return d ? &*d : nullptr;
}

void Topology::set(LinkClass link, core::CollOp op, LinkFit fit) { fits[link_index(link)][op_index(op)] = std::move(fit); }

void Topology::set_default(LinkClass link, LinkFit fit) { defaults[link_index(link)] = std::move(fit); }

bool Topology::empty() const {
  if (compute) return false;  // a compute-only profile (calibrate --compute) is a real one
  for (const auto& link : fits) {
    for (const auto& f : link) {
      if (f) return false;
    }
  }
  for (const auto& d : defaults) {
    if (d) return false;
  }
  return true;
}

std::string missing_figures(const Topology& topology, const std::vector<std::pair<LinkClass, core::CollOp>>& used) {
  std::vector<std::pair<LinkClass, core::CollOp>> seen;
  std::string out;
  for (const auto& [link, op] : used) {
    if (topology.find(link, op) || std::find(seen.begin(), seen.end(), std::make_pair(link, op)) != seen.end()) continue;
    seen.emplace_back(link, op);
    out += (out.empty() ? "" : ", ") + std::string(core::op_name(op)) + " on " + link_name(link);
  }
  return out;
}

core::Result<Topology> parse_topology(const nlohmann::json& doc, const std::string& path) {
  if (!doc.is_object()) return err(path, "", std::string("expected a JSON object, got ") + doc.type_name());
  auto fmt = doc.find("format");
  if (fmt == doc.end() || !fmt->is_string() || fmt->get<std::string>() != "planck-topology/1") {
    return err(path, "/format", "expected \"format\": \"planck-topology/1\" (a profile written by planck calibrate)");
  }
  Topology t;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const std::string& k = it.key();
    if (k == "format") continue;
    if (k == "source") {
      if (!it->is_string()) return err(path, "/source", "expected a string");
      t.source = it->get<std::string>();
    } else if (k == "placement") {
      if (!it->is_object()) return err(path, "/placement", "expected an object {intra_node, inter_node}");
      for (auto p = it->begin(); p != it->end(); ++p) {
        const std::string ptr = "/placement/" + p.key();
        if (p.key() != "intra_node" && p.key() != "inter_node") {
          return err(path, ptr, "unknown key '" + p.key() + "' (known: intra_node, inter_node)");
        }
        auto l = link_at(*p, path, ptr);
        if (!l) return l.status();
        (p.key() == "intra_node" ? t.intra_node : t.inter_node) = *l;
      }
    } else if (k == "links") {
      if (!it->is_object()) return err(path, "/links", "expected an object keyed by link class");
      for (auto l = it->begin(); l != it->end(); ++l) {
        const std::string lptr = "/links/" + core::json_pointer_escape(l.key());
        auto link = parse_link(l.key());
        if (!link) return err(path, lptr, "unknown link class '" + l.key() + "' (known: " + known_links() + ")");
        if (!l->is_object()) return err(path, lptr, "expected an object keyed by collective op or \"default\"");
        for (auto o = l->begin(); o != l->end(); ++o) {
          const std::string optr = lptr + "/" + core::json_pointer_escape(o.key());
          auto fit = parse_fit(*o, path, optr);
          if (!fit) return fit.status();
          if (o.key() == "default") {
            t.set_default(*link, std::move(*fit));
            continue;
          }
          auto op = core::parse_op(o.key());
          if (!op) {
            return err(path, optr,
                       "unknown op '" + o.key() +
                           "' (known: all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, send_recv, default)");
          }
          t.set(*link, *op, std::move(*fit));
        }
      }
    } else if (k == "compute") {
      auto c = parse_compute_profile(*it, path, "/compute");
      if (!c) return c.status();
      t.compute = std::move(*c);
    } else {
      return err(path, "/" + core::json_pointer_escape(k),
                 "unknown key '" + k + "' (known: format, source, placement, links, compute)");
    }
  }
  return t;
}

core::Result<Topology> load_topology(const std::string& path) {
  auto text = core::read_input(path);
  if (!text) return text.status();
  core::JsonParseError pe;
  auto doc = core::JsonDoc::parse(*text, &pe);
  if (!doc) {
    return core::Status::error(path + ":" + std::to_string(pe.pos.line) + ":" + std::to_string(pe.pos.column) +
                               ": not valid JSON: " + pe.message);
  }
  auto t = parse_topology(doc->root(), path);
  if (t && t->empty()) {
    return core::Status::error(path + ": a planck-topology/1 profile with no link figures and no compute section "
                               "(\"links\" and \"compute\" are missing or empty), so it would predict nothing; write one "
                               "with planck calibrate (docs/exec.md)");
  }
  return t;
}

std::string topology_to_json(const Topology& t) {
  nlohmann::json j;
  j["format"] = "planck-topology/1";
  if (!t.source.empty()) j["source"] = t.source;
  j["placement"] = {{"intra_node", link_name(t.intra_node)}, {"inter_node", link_name(t.inter_node)}};
  nlohmann::json links = nlohmann::json::object();
  for (LinkClass l : kLinks) {
    nlohmann::json entry = nlohmann::json::object();
    for (core::CollOp op : core::kAllCollOps) {
      if (const auto& f = t.fits[link_index(l)][op_index(op)]) entry[core::op_name(op)] = fit_json(*f);
    }
    if (const auto& d = t.defaults[link_index(l)]) entry["default"] = fit_json(*d);
    if (!entry.empty()) links[link_name(l)] = entry;
  }
  j["links"] = links;
  if (t.compute) j["compute"] = compute_profile_json(*t.compute);
  return j.dump(2) + "\n";
}

}  // namespace planck::sim
