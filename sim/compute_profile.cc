#include "sim/compute_profile.h"

#include <cmath>

namespace planck::sim {
namespace {

core::Status bad(const std::string& path, const std::string& ptr, const std::string& what) {
  return core::Status::error(path + ": " + ptr + ": " + what);
}

}  // namespace

core::Result<ComputeProfile> parse_compute_profile(const nlohmann::json& j, const std::string& path,
                                                   const std::string& ptr) {
  if (!j.is_object()) return bad(path, ptr, std::string("expected an object {gemm_scale, points}, got ") + j.type_name());
  ComputeProfile c;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string p = ptr + "/" + it.key();
    if (it.key() == "gpu" || it.key() == "method") {
      if (!it->is_string()) return bad(path, p, "expected a string");
      (it.key() == "gpu" ? c.gpu : c.method) = it->get<std::string>();
    } else if (it.key() == "gemm_scale") {
      if (!it->is_number() || !(it->get<double>() > 0) || !std::isfinite(it->get<double>()) || it->get<double>() > 100) {
        return bad(path, p, "expected a number in (0, 100], got " + it->dump().substr(0, 40));
      }
      c.gemm_scale = it->get<double>();
    } else if (it.key() == "points") {
      if (!it->is_array()) return bad(path, p, "expected an array of [m, n, k, seconds]");
      for (std::size_t i = 0; i < it->size(); ++i) {
        const nlohmann::json& e = (*it)[i];
        bool ok = e.is_array() && e.size() == 4;
        GemmPoint g;
        double* fields[] = {&g.m, &g.n, &g.k, &g.seconds};
        for (std::size_t f = 0; ok && f < 4; ++f) {
          ok = e[f].is_number() && e[f].get<double>() > 0 && std::isfinite(e[f].get<double>());
          if (ok) *fields[f] = e[f].get<double>();
        }
        if (!ok) {
          return bad(path, p + "/" + std::to_string(i),
                     "expected [m, n, k, seconds], all > 0, got " + e.dump().substr(0, 80));
        }
        c.points.push_back(g);
      }
    } else {
      return bad(path, p, "unknown key '" + it.key() + "' (known: gpu, method, gemm_scale, points)");
    }
  }
  return c;
}

nlohmann::json compute_profile_json(const ComputeProfile& c) {
  nlohmann::json j;
  if (!c.gpu.empty()) j["gpu"] = c.gpu;
  if (!c.method.empty()) j["method"] = c.method;
  j["gemm_scale"] = c.gemm_scale;
  if (!c.points.empty()) {
    nlohmann::json pts = nlohmann::json::array();
    for (const auto& g : c.points) pts.push_back({g.m, g.n, g.k, g.seconds});
    j["points"] = pts;
  }
  return j;
}

}  // namespace planck::sim
