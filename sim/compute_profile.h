#pragma once
// The "compute" section of a planck-topology/1 profile (docs/simulator.md, "Compute profile"):
// a measured correction to the GPU preset's GEMM efficiency curve, written by
// `planck calibrate --compute` (from timed cuBLAS GEMMs) or `planck simulate --measured-step-s`
// (from one measured step time), read by `planck simulate / enumerate --topology`.
//
//   "compute": { "gpu": "h100-sxm",                        (free text, optional)
//                "gemm_scale": 0.93,                       (multiplies every GEMM and attention efficiency)
//                "method": "calibrate --compute ...",      (free text, optional)
//                "points": [[m, n, k, seconds], ...] }     (bf16 GEMMs timed; optional)

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/status.h"

namespace planck::sim {

struct GemmPoint {
  double m = 0, n = 0, k = 0, seconds = 0;
};

struct ComputeProfile {
  std::string gpu;
  std::string method;
  double gemm_scale = 1.0;
  std::vector<GemmPoint> points;
};

// `ptr` is the section's JSON pointer ("/compute"); errors name `path` and the pointer.
core::Result<ComputeProfile> parse_compute_profile(const nlohmann::json& j, const std::string& path,
                                                   const std::string& ptr);
nlohmann::json compute_profile_json(const ComputeProfile& c);

}  // namespace planck::sim
