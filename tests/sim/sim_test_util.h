#pragma once
// Helpers for the simulator tests: plans from JSON text, their meshes, schedule sums.

#include <doctest/doctest.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/check/checks.h"
#include "core/mesh/plan_mesh.h"
#include "core/plan/plan_load.h"
#include "core/plan/presets.h"
#include "core/schedule/schedule.h"
#include "sim/enumerate.h"

namespace planck::sim::test {

inline core::Plan plan_from(const std::string& json) {
  core::LoadedPlan loaded = core::load_plan_text(json, "test.json");
  for (const auto& d : loaded.diagnostics.items()) MESSAGE(d.rule << ": " << d.message);
  REQUIRE(loaded.plan.has_value());
  return std::move(*loaded.plan);
}

inline core::Mesh mesh_of(const core::Plan& plan) {
  auto mesh = core::plan_mesh(plan, nullptr);
  REQUIRE(mesh.has_value());
  return *mesh;
}

inline core::Schedule lower_ok(const core::Plan& plan, const core::Mesh& mesh) {
  auto s = core::lower(plan, mesh);
  REQUIRE(s.is_ok());
  return *s;
}

// Every core verify rule on `plan` (its own mesh).
inline core::Diagnostics verify_plan(const core::Plan& plan) {
  core::CheckRegistry registry;
  core::add_core_checks(registry);
  auto mesh = mesh_of(plan);
  core::CheckContext ctx{plan, &mesh, nullptr};
  return core::run_checks(registry, ctx);
}

// A diagnostic of `rule` whose message contains `text`.
inline bool has_rule(const core::Diagnostics& d, const std::string& rule, const std::string& text = "") {
  for (const auto& x : d.items()) {
    if (x.rule == rule && x.message.find(text) != std::string::npos) return true;
  }
  return false;
}

inline bool any_contains(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& l : lines) {
    if (l.find(text) != std::string::npos) return true;
  }
  return false;
}

// Sum of bytes_per_call x calls_per_step over the entries of `role` ("" = all).
inline std::int64_t payload(const core::Schedule& s, const std::string& role = "") {
  std::int64_t total = 0;
  for (const auto& c : s.collectives) {
    if (role.empty() || c.role == role) total += c.bytes_per_call * c.calls_per_step;
  }
  return total;
}

// Parameters of a Llama-style layer (no biases, two RMSNorms), written out from the shape:
// Q (h x a x hd) + K, V (2 x h x kv x hd) + O (a x hd x h) + SwiGLU (3 x h x f) + norms (2h).
inline double llama_layer_params(double h, double f, double a, double kv, double hd) {
  return h * a * hd + 2 * h * kv * hd + a * hd * h + 3 * h * f + 2 * h;
}

// An enumerate request on H100 nodes of 8 for a preset model.
inline EnumerateRequest h100_request(const std::string& model, int world, std::int64_t global_batch,
                                     std::int64_t seq_len) {
  EnumerateRequest req;
  req.world = world;
  req.gpus_per_node = 8;
  auto m = core::model_preset(model);
  REQUIRE(m.has_value());
  req.model = *m;
  req.gpu = *core::gpu_preset("h100-sxm");
  req.global_batch = global_batch;
  req.seq_len = seq_len;
  return req;
}

// The rows of a CSV file under tests/data (quoted cells may hold commas), as header -> cell.
inline std::vector<std::map<std::string, std::string>> read_csv(const std::string& rel) {
  auto split = [](const std::string& line) {
    std::vector<std::string> out(1);
    bool quoted = false;
    for (char ch : line) {
      if (ch == '"') quoted = !quoted;
      else if (ch == ',' && !quoted) out.emplace_back();
      else out.back() += ch;
    }
    return out;
  };
  std::ifstream in(std::string(PLANCK_TEST_DATA_DIR) + "/" + rel);
  REQUIRE_MESSAGE(in.good(), "missing test data " << rel);
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = split(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto cells = split(line);
    REQUIRE(cells.size() == header.size());
    std::map<std::string, std::string> r;
    for (std::size_t i = 0; i < header.size(); ++i) r[header[i]] = cells[i];
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace planck::sim::test
