#pragma once
// Megatron-Bridge recipes inside import/bridge/: one evaluated recipe function (the Python reader's
// JSON) to a plan with overrides applied on top (bridge.cc), shared by the recipe-file importer
// and the launch-script importer (launch.cc), and finding a recipe by the name a launch gives
// (lookup.cc).

#include <nlohmann/json.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "import/importer.h"
#include "import/plan_builder.h"

namespace planck::import::bridge {

// One ConfigContainer override, in the order applied: run_recipe.py's convenience flags, its
// KEY=VALUE words, then the command line's --set.
struct Override {
  std::string key;  // "model.tensor_model_parallel_size"
  nlohmann::json value;
  std::string file;  // where it is written (0 = the command line)
  int line = 0;
  std::string text;  // as written, for notes ("-tp 2", "model.sequence_parallel=True", "--set ...")
};

// A Hydra / OmegaConf override value as Bridge parses it (hydra/core/override_parser grammar):
// integers, floats, true/false (any case), null, 'quoted' / "quoted" strings, [a, b] lists; else
// the text itself.
nlohmann::json override_value(const std::string& text);

// The plan of one recipe function `fn` (from read_python_config) defined in `recipe_path`, with
// `overrides` applied in order; positions and findings point into the file each setting is
// written in; the plan's own file is `main_path` (the recipe, or the launch script).
core::Result<ImportResult> import_recipe(const nlohmann::json& fn, const std::string& recipe_path,
                                         const std::string& main_path, const std::vector<Override>& overrides,
                                         const ImportOptions& options);

// optimizer.*_dtype (torch dtypes) -> the strings of Megatron-LM's flags of the same names, so they
// pass through as flags; optimizer.main_grads_dtype noted and dropped (optimizer.cc).
void read_optimizer_dtypes(nlohmann::json& settings, PlanBuilder& notes);

// model.cross_entropy_fusion_impl with cross_entropy_loss_fusion (GPTModelProvider's default True)
// -> training.cross_entropy te, noted; an impl Megatron-Core does not have is a finding
// (cross_entropy.cc). cross_entropy_field: the two fields it reads, not passed on as flags.
bool cross_entropy_field(const std::string& key);
void read_cross_entropy(const nlohmann::json& settings, const std::string& main_path, PlanBuilder& notes,
                        ImportResult& r);

// True for the ConfigContainer fields the recipe reader turns into the plan.
bool reads(const std::string& key);
// True for a field that may set the mesh, model, batch, parallelism, precision or recompute.
bool setting_matters(const std::string& key);

// The run a benchmark recipe's name states (benchmark.cc): `..._<N>gpu_<hardware>_<precision>...`;
// nullopt for any other name. gpus is 0 when N does not fit.
struct BenchmarkRun {
  std::int64_t gpus = 0;
  std::string hardware;  // as named: h100, b200, gb200, ...
};
std::optional<BenchmarkRun> benchmark_run(const std::string& name);
// Fills `options`' world from the name when neither nodes nor gpus_per_node is given; the note to
// give, or "" when nothing was filled.
std::string benchmark_world(const std::string& name, ImportOptions& options);
// Sets the plan's GPU from the name (a note), or says the hardware planck has no preset for
// (setting-unmodelled on /cluster/gpu at `file`:`line`), when the plan states no GPU.
void benchmark_gpu(const std::string& name, const std::string& file, int line, ImportResult& r, PlanBuilder& b);

struct RecipeLocation {
  std::string file;      // the .py file defining the function
  std::string function;  // its name there (the launch may use an alias)
  std::string how;       // how it was found, for the notes
};
// Where `name` is defined in the Megatron-Bridge sources visible from `from_dir` (the launch
// script's directory and its parents, each holding src/megatron/bridge/ or megatron/bridge/)
// and the --python-path / PYTHONPATH directories, looked up as run_recipe.py's load_recipe does:
// a benchmark name (..._<N>gpu_<hw>_<precision>_config) in megatron/bridge/perf_recipes first,
// else megatron/bridge/recipes, following `from X import REAL as NAME` aliases. nullopt with
// `*searched` set to the trees looked in when it is not there.
std::optional<RecipeLocation> find_recipe(const std::string& name, const std::string& from_dir,
                                          const ImportOptions& options, std::string* searched);

}  // namespace planck::import::bridge
