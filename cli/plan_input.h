#pragma once
// Loading PLAN for the commands that run no checks (groups, simulate, render): docs/verify.md#exit-codes says
// they exit 2 when the plan cannot be loaded or its mesh is invalid. The reason is printed to
// stderr in verify's text form, so the user sees the same file:line:column diagnostics.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/mesh/mesh.h"
#include "core/observed/observed.h"
#include "core/plan/plan.h"
#include "core/plan/plan_load.h"
#include "core/base/diagnostics.h"
#include "core/base/status.h"
#include "import/importer.h"


namespace planck::cli {

struct PlanInput {
  core::Plan plan;
  core::Mesh mesh;
};

// Prints `diags` about the plan at `path` to stderr in verify's text form (file:line:column).
void print_load_failure(const std::string& path, const core::Diagnostics& diags);

// The plan and its mesh, or nullopt after printing why not.
std::optional<PlanInput> load_plan_input(const std::string& path);
// The same for a plan already loaded (from a file or an imported config's text).
std::optional<PlanInput> plan_input_of(core::LoadedPlan loaded, const std::string& path);

// What --model VALUE stands for as a plan's "model" value: a preset name (a JSON string), a file
// holding a planck model object, or a Hugging Face config.json (an object with "model_type",
// converted by core/plan/hf_config.h), with the model-unmodelled-layers warnings of a Hugging Face
// config's layers (`file` the config, `line` the key's). The model is not yet checked against the
// model schema: the plan loader does that.
struct ModelOption {
  nlohmann::json model;
  std::vector<import::ImportFinding> findings;
};
// nullopt after printing why not (`flag` names the option); the findings are printed as warnings.
std::optional<nlohmann::json> model_value(const std::string& flag, const std::string& value);
// The same as a Result, for callers that report it themselves (verify's config-unreadable).
core::Result<ModelOption> read_model_option(const std::string& flag, const std::string& value);
// --model on an imported config (import and verify): `model` (from read_model_option) replaces
// whatever the config implied, a note says so, the importer's "model left out" warnings go, and
// the model's own findings join the config's.
void apply_model_option(import::ImportResult& r, const std::string& value, const ModelOption& model);
// Every --observed file (io/observed_io.h), or nullopt after printing the first that cannot be read.
std::optional<std::vector<core::Observed>> read_observed_files(const std::vector<std::string>& paths);

}  // namespace planck::cli
