#include "exec/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

namespace planck::exec {
namespace {

using nlohmann::ordered_json;

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

void summarize(ExecReport& r) {
  r.membership_ok = std::all_of(r.membership.begin(), r.membership.end(), [](const auto& m) { return m.ok; });
  bool data_ok = true, bytes_ok = true;
  r.max_bytes_error = 0;
  r.traffic_ok = true;
  r.traffic_measured = 0;
  r.max_peer_error = 0;
  r.max_wire_error.reset();
  std::vector<double> ratios;
  for (const OpResult& op : r.ops) {
    data_ok = data_ok && op.wrong_elements == 0;
    // |measured / predicted - 1|; a zero prediction is only met by zero.
    auto rel = [](double measured, double predicted) {
      if (predicted == 0) return measured == 0 ? 0.0 : 1.0;
      return std::fabs(measured / predicted - 1);
    };
    // API bytes must equal the prediction; transport bytes carry headers, so they are held to
    // kWireTolerance from kPeerGateBytes up.
    const bool api = op.bytes_source == "api";
    if (api || op.predicted_bytes_sent_per_rank >= kPeerGateBytes) {
      const double e = rel(static_cast<double>(op.measured_bytes_sent_per_rank),
                           static_cast<double>(op.predicted_bytes_sent_per_rank));
      r.max_bytes_error = std::max(r.max_bytes_error, e);
      bytes_ok = bytes_ok && (api ? e == 0 : e <= kWireTolerance);
    }
    if (op.traffic.measured) {
      ++r.traffic_measured;
      r.traffic_ok = r.traffic_ok && op.traffic.ok();
      r.max_peer_error = std::max(r.max_peer_error, op.traffic.max_peer_error);
    }
    if (op.wire_bytes_measured && op.predicted_bytes_sent_per_rank >= kWireGateBytes) {
      const double e = rel(static_cast<double>(*op.wire_bytes_measured), static_cast<double>(op.predicted_bytes_sent_per_rank));
      r.max_wire_error = std::max(r.max_wire_error.value_or(0), e);
    }
    if (r.calibrated() && op.predicted_time_s && *op.predicted_time_s > 0 && op.measured_time_s.median > 0) {
      ratios.push_back(op.measured_time_s.median / *op.predicted_time_s);
    }
  }
  r.time_ratio_median.reset();
  if (!ratios.empty()) r.time_ratio_median = median(ratios);
  r.ok = r.membership_ok && data_ok && bytes_ok && r.traffic_ok &&
         (!r.max_wire_error || *r.max_wire_error <= kWireTolerance);
}

std::string pair_name(const ExecReport& r, const PeerBytes& p) {
  auto one = [&](std::int64_t rank) {
    std::string s = "rank " + std::to_string(rank);
    if (r.gpus_per_node > 0) s += " (node " + std::to_string(rank / r.gpus_per_node) + ")";
    return s;
  };
  return one(p.from) + " -> " + one(p.to);
}

namespace {

ordered_json pairs_json(const std::vector<PeerBytes>& pairs) {
  ordered_json a = ordered_json::array();
  for (const auto& p : pairs) a.push_back({p.from, p.to, p.predicted, p.measured});
  return a;
}

ordered_json traffic_json(const OpResult& o) {
  const TrafficCheck& t = o.traffic;
  ordered_json j;
  j["source"] = t.source;
  j["measured"] = t.measured;
  if (!o.expected.empty()) j["expected"] = o.expected;
  if (!t.measured) return j;
  j["predicted_bytes"] = t.predicted_total;
  j["measured_bytes"] = t.measured_total;
  j["max_peer_error"] = t.max_peer_error;
  j["ok"] = t.ok();
  j["pairs"] = pairs_json(t.pairs);
  j["unpredicted"] = pairs_json(t.unpredicted);
  j["off"] = pairs_json(t.off);
  return j;
}

}  // namespace

std::string report_json(const ExecReport& r) {
  ordered_json j;
  j["format"] = "planck-exec/1";
  j["backend"] = r.backend;
  j["world"] = r.world;
  j["plan"] = r.plan;
  j["prediction"] = {{"basis", r.prediction_basis}, {"gpu", r.gpu}, {"calibrated", r.calibrated()}};
  if (!r.expect.empty()) j["prediction"]["expect"] = r.expect;
  j["scale"] = {{"max_bytes", r.max_bytes}, {"factor", r.scale_factor}};
  j["run"] = {{"warmup", r.warmup}, {"iters", r.iters}};
  if (r.mpi) {
    ordered_json algos = ordered_json::object();
    for (const auto& [op, algo] : r.mpi->algorithms) algos[op] = algo;
    j["mpi"] = {{"algorithms", algos}, {"transport", r.mpi->transport}};
    if (!r.mpi->notes.empty()) j["mpi"]["notes"] = r.mpi->notes;
  }
  ordered_json comms = ordered_json::array();
  for (const auto& m : r.membership) {
    comms.push_back({{"role", m.role}, {"dims", m.dims}, {"groups", m.groups}, {"group_size", m.group_size},
                     {"wrong_ranks", m.wrong_ranks}, {"ok", m.ok}});
  }
  j["membership"] = {{"ok", r.membership_ok}, {"communicators", comms}};
  ordered_json ops = ordered_json::array();
  for (const auto& o : r.ops) {
    ordered_json e;
    e["role"] = o.role;
    e["dims"] = o.dims;
    e["op"] = core::op_name(o.op);
    e["phase"] = core::phase_name(o.phase);
    e["what"] = o.what;
    e["group_size"] = o.group_size;
    e["groups"] = o.groups;
    e["dtype"] = o.dtype;
    e["bytes_per_call"] = o.bytes_per_call;
    e["unscaled_bytes_per_call"] = o.unscaled_bytes_per_call;
    e["calls_per_step"] = o.calls_per_step;
    e["predicted_bytes_sent_per_rank"] = o.predicted_bytes_sent_per_rank;
    e["measured_bytes_sent_per_rank"] = o.measured_bytes_sent_per_rank;
    e["bytes_source"] = o.bytes_source;
    e["traffic"] = traffic_json(o);
    e["wire_bytes_measured"] = o.wire_bytes_measured ? ordered_json(*o.wire_bytes_measured) : ordered_json(nullptr);
    e["wire_source"] = o.wire_source;
    e["wire_gated"] = o.wire_bytes_measured.has_value() && o.predicted_bytes_sent_per_rank >= kWireGateBytes;
    e["predicted_time_s"] = o.predicted_time_s ? ordered_json(*o.predicted_time_s) : ordered_json(nullptr);
    if (!o.link.empty()) e["link"] = o.link;
    if (!o.model.empty()) e["model"] = o.model;
    e["measured_time_s"] = {{"min", o.measured_time_s.min}, {"median", o.measured_time_s.median},
                            {"max", o.measured_time_s.max}};
    e["algbw_GBps"] = o.algbw_gbps;
    e["busbw_GBps"] = o.busbw_gbps;
    e["wrong_elements"] = o.wrong_elements;
    ops.push_back(std::move(e));
  }
  j["ops"] = ops;
  j["summary"] = {{"ok", r.ok},
                  {"max_bytes_error", r.max_bytes_error},
                  {"max_wire_error", r.max_wire_error ? ordered_json(*r.max_wire_error) : ordered_json(nullptr)},
                  {"traffic_ok", r.traffic_ok},
                  {"traffic_measured", r.traffic_measured},
                  {"max_peer_error", r.max_peer_error},
                  {"calibrated", r.calibrated()},
                  {"time_ratio_median", r.time_ratio_median ? ordered_json(*r.time_ratio_median) : ordered_json(nullptr)}};
  if (!r.notes.empty()) j["notes"] = r.notes;
  return j.dump(2) + "\n";
}

std::string report_table(const ExecReport& r) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "# planck exec: %s, backend %s, world %lld, warmup %d, iters %d\n", r.plan.c_str(),
                r.backend.c_str(), static_cast<long long>(r.world), r.warmup, r.iters);
  out += line;
  std::snprintf(line, sizeof line, "# scale %.6g (largest call capped at %lld bytes); prediction: %s (%s)\n",
                r.scale_factor, static_cast<long long>(r.max_bytes), r.prediction_basis.c_str(), r.gpu.c_str());
  out += line;
  for (const auto& m : r.membership) {
    std::snprintf(line, sizeof line, "# membership %-10s %lld group(s) of %lld over [%s]: %s\n", m.role.c_str(),
                  static_cast<long long>(m.groups), static_cast<long long>(m.group_size), join(m.dims, ",").c_str(),
                  m.ok ? "ok" : "WRONG");
    out += line;
  }
  out += "#\n#  role        op               n       size(B)  type     time_min(us)  median(us)  max(us)  "
         "algbw(GB/s)  busbw(GB/s)  #wrong  pred_bytes  meas_bytes  source       wire_bytes  peer_err   pred_time(us)  ratio\n";
  for (const auto& o : r.ops) {
    char wire[32] = "-", pred[32] = "-", ratio[32] = "-", peer[32] = "-";
    if (o.traffic.measured) std::snprintf(peer, sizeof peer, "%.4f", o.traffic.max_peer_error);
    if (o.wire_bytes_measured) std::snprintf(wire, sizeof wire, "%lld", static_cast<long long>(*o.wire_bytes_measured));
    if (o.predicted_time_s) {
      std::snprintf(pred, sizeof pred, "%.1f", *o.predicted_time_s * 1e6);
      if (r.calibrated() && *o.predicted_time_s > 0) std::snprintf(ratio, sizeof ratio, "%.3f", o.measured_time_s.median / *o.predicted_time_s);
    }
    std::snprintf(line, sizeof line,
                  "   %-11s %-15s %3lld %13lld  %-7s %13.1f %11.1f %8.1f %12.3f %12.3f %7lld %11lld %11lld  %-11s %11s %9s %15s %6s\n",
                  o.role.c_str(), core::op_name(o.op), static_cast<long long>(o.group_size),
                  static_cast<long long>(o.bytes_per_call), o.dtype.c_str(), o.measured_time_s.min * 1e6,
                  o.measured_time_s.median * 1e6, o.measured_time_s.max * 1e6, o.algbw_gbps, o.busbw_gbps,
                  static_cast<long long>(o.wrong_elements), static_cast<long long>(o.predicted_bytes_sent_per_rank),
                  static_cast<long long>(o.measured_bytes_sent_per_rank), o.bytes_source.c_str(), wire, peer, pred,
                  ratio);
    out += line;
  }
  for (std::size_t i = 0; i < r.ops.size(); ++i) {
    const OpResult& o = r.ops[i];
    const std::string op = "op " + std::to_string(i) + " " + core::op_name(o.op) + " of role " + o.role;
    for (const auto& p : o.traffic.unpredicted) {
      out += "# UNPREDICTED traffic: " + op + ": " + pair_name(r, p) + " carried " + std::to_string(p.measured) +
             " bytes; " + (r.expect.empty() ? std::string("the plan") : r.expect) + " predicts none" +
             (o.expected.empty() ? "" : " (" + o.expected + ")") + "\n";
    }
    for (const auto& p : o.traffic.off) {
      std::snprintf(line, sizeof line, "# OFF by more than %.0f%%: %s: %s carried %lld bytes, predicted %lld\n",
                    kPeerTolerance * 100, op.c_str(), pair_name(r, p).c_str(), static_cast<long long>(p.measured),
                    static_cast<long long>(p.predicted));
      out += line;
    }
  }
  const std::string traffic = r.traffic_measured == 0
                                  ? std::string("UNMEASURED (") + (r.ops.empty() ? "no op ran" : r.ops.front().traffic.source) + ")"
                                  : (r.traffic_ok ? "ok" : "WRONG") + std::string(" over ") +
                                        std::to_string(r.traffic_measured) + " op(s), max peer error " +
                                        std::to_string(r.max_peer_error);
  const std::string ratio = r.calibrated() ? (r.time_ratio_median ? std::to_string(*r.time_ratio_median) : "-")
                                           : "none (uncalibrated: predicted times come from the '" + r.gpu +
                                                 "' preset; run planck calibrate and pass --topology)";
  std::snprintf(line, sizeof line, "# summary: %s; membership %s; per-peer traffic %s; max bytes error %.4g; max wire error %s\n",
                r.ok ? "OK" : "FAILED", r.membership_ok ? "ok" : "WRONG", traffic.c_str(), r.max_bytes_error,
                r.max_wire_error ? std::to_string(*r.max_wire_error).c_str() : "unmeasured");
  out += line;
  out += "# time ratio median: " + ratio + "\n";
  for (const auto& n : r.notes) out += "# note: " + n + "\n";
  return out;
}

}  // namespace planck::exec
