#pragma once
// Pieces of the torchtitan importer shared by its two front-ends: TOML job files (torchtitan.cc)
// and Python config registries (registry.cc, which turns a registry function's
// settings into the same [section] key = value table, with the registry's lines).

#include <toml++/toml.h>

#include <cctype>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "import/importer.h"
#include "import/plan_builder.h"
#include "import/formats/toml_reader.h"

namespace planck::import {

struct TorchtitanInput {
  const std::map<std::string, int>* lines = nullptr;  // "section.key" -> line, for a table built in memory
  bool check_unknown_keys = true;                      // TOML: warn about keys torchtitan does not define
  const nlohmann::json* model_args = nullptr;          // a registry flavour's literal sizes (dim, n_layers, ...)
};

// The plan for a torchtitan config given as TOML-shaped sections ([parallelism], [training],
// [activation_checkpoint], [model]); `b` carries the file name, notes and source positions.
core::Result<ImportResult> import_torchtitan_table(const toml::table& root, PlanBuilder& b,
                                                   const ImportOptions& options, const TorchtitanInput& input);

struct Degrees {
  std::int64_t dpr = 1, dps = -1, tp = 1, pp = 1, cp = 1, ep = 1, etp = 1;
  bool etp_given = false;
  std::map<std::string, int> lines;  // key -> line it was written on
  // pipeline_parallel_degree read from [experimental] / [training]: a file of torchtitan before #980
  // (2025-03), whose pipeline micro-batch default differs from today's (read_torchtitan_training).
  bool pp_before_980 = false;
  std::int64_t stages_per_rank = 1;  // pipeline stages each rank holds (2 for multi-stage schedules)
};

inline std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// pipeline_parallel_split_points as written: the module names where stages 1.. begin ("layers.N").
struct SplitPoints {
  std::vector<std::string> names;
  int line = 0;
  std::string setting;  // "[section] pipeline_parallel_split_points"
};
core::Result<std::optional<SplitPoints>> read_split_points(TomlReader& r);
// Stages a rank for those split points under `schedule` (planck's name); an error where torchtitan
// asserts (stages not a multiple of pp; V-shaped schedules other than 2 a rank).
core::Result<std::int64_t> split_stages_per_rank(const SplitPoints& sp, std::int64_t pp, const std::string& schedule,
                                                 PlanBuilder& b);
// A note when the split is torchtitan's even split of `layers` (0: unknown) into `stages`, else
// setting-unmodelled at its line: the stage count is followed, the stages' sizes are not.
void check_split_layers(const SplitPoints& sp, std::int64_t layers, std::int64_t stages, PlanBuilder& b);

// The plan's "training" object: batch, micro-batches, accumulation, dtypes, checkpointing.
core::Result<nlohmann::ordered_json> read_torchtitan_training(TomlReader& r, const Degrees& d, std::int64_t dps_known);

// unknown-key for each registry setting (fn["settings"], python/planck_torchtitan_registry.py)
// that torchtitan's config classes do not define (import/torchtitan/registry_keys.cc).
void check_registry_keys(const nlohmann::json& fn, const std::string& main, PlanBuilder& b);

// A model object from a registry flavour's literal sizes; false (and nothing set) when they are
// not enough for one. Layers it prices as something else are model-unmodelled-layers at `line`.
bool registry_model(const nlohmann::json& args, const std::string& described_as, PlanBuilder& b, int line);
// What a preset the flavour maps to leaves out or prices as something else, at the flavour's line.
void say_preset_layers(const std::string& preset, const std::string& described_as, int line, PlanBuilder& b);

}  // namespace planck::import
