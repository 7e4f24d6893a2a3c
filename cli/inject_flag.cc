#include "cli/inject_flag.h"

#include <cmath>
#include <cstdio>
#include <utility>

#include "cli/number_flags.h"
#include "exec/traffic.h"

namespace planck::cli {

namespace {

// The largest accepted perturbation: predictions x 1001 stay far inside int64 for any call
// --max-bytes allows (at most 2^40 bytes).
constexpr double kMaxPerturb = 1000;

std::string rank_range(std::int64_t world) { return "a rank from 0 to " + std::to_string(world - 1); }

}  // namespace

core::Result<exec::Fault> parse_fault(const std::string& text, std::int64_t world) {
  using K = exec::Fault::Kind;
  exec::Fault f;
  if (text.empty()) return f;
  const auto colon = text.find(':');
  const std::string kind = text.substr(0, colon), value = colon == std::string::npos ? "" : text.substr(colon + 1);
  const std::pair<const char*, K> kinds[] = {{"kill", K::kKill}, {"wrong-data", K::kWrongData},
                                             {"wrong-colour", K::kWrongColour}, {"perturb", K::kPerturbPrediction}};
  for (const auto& [name, k] : kinds) {
    if (kind != name) continue;
    f.kind = k;
    if (k == K::kPerturbPrediction) {
      // Below the 3% per-peer tolerance the check could not tell the perturbed prediction from
      // the true one; below -1 the prediction would be negative bytes.
      const auto v = parse_finite(value, -1, kMaxPerturb);
      if (!v || std::fabs(*v) <= exec::kPeerTolerance) {
        char range[160];
        std::snprintf(range, sizeof range,
                      "a finite fraction from -1 to %g whose size is more than %g (the per-peer traffic tolerance)",
                      kMaxPerturb, exec::kPeerTolerance);
        return core::Status::error("--inject '" + text + "': " + "'" + value + "' is not " + range);
      }
      f.factor = *v;
      return f;
    }
    const auto v = parse_finite(value, 0, static_cast<double>(world - 1));
    if (!v || *v != std::floor(*v) || value.find_first_not_of("0123456789") != std::string::npos) {
      return core::Status::error("--inject '" + text + "': '" + value + "' is not " + rank_range(world) +
                                 " (the plan has " + std::to_string(world) + " ranks)");
    }
    f.rank = static_cast<int>(*v);
    return f;
  }
  return core::Status::error("--inject '" + text +
                             "': expected kill:RANK, wrong-data:RANK, wrong-colour:RANK or perturb:FRACTION "
                             "(e.g. wrong-data:3, perturb:0.05)");
}

std::string fault_without_effect(const exec::Fault& fault, const exec::ExecReport& report) {
  using K = exec::Fault::Kind;
  if (fault.kind == K::kNone || !report.ok) return "";
  switch (fault.kind) {
    case K::kWrongColour:
      return "rank " + std::to_string(fault.rank) +
             "'s next group is its own group in every communicator (each role has one group), so the split did "
             "not change";
    case K::kWrongData:
      return "rank " + std::to_string(fault.rank) + " sent no data that another rank checks";
    case K::kPerturbPrediction:
      return report.traffic_measured == 0
                 ? std::string("this run measured no per-peer traffic to compare the perturbed prediction with")
                 : "no rank pair carried at least " + std::to_string(exec::kPeerGateBytes) +
                       " bytes, the size below which per-peer traffic is not judged (raise --max-bytes)";
    default:
      return "the run completed as if no fault was injected";
  }
}

}  // namespace planck::cli
