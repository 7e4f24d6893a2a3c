#pragma once
// The one input path every command shares for framework configs (docs/verify.md "Framework
// configs"): the flags that describe a config's run, the import with them applied, and a plan
// input from either a planck plan or a config. verify, import, simulate, render, report, diff and
// groups all go through here, so detection, --model and the run's facts mean the same everywhere.

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/plan_input.h"
#include "cli/verify_config.h"
#include "core/base/status.h"
#include "import/importer.h"

namespace planck::cli {

// --seq-len, --micro-batch, --global-batch, --gpu, --set NAME=VALUE (repeatable), --script-args.
void add_run_fact_options(CLI::App& app, RunFacts& facts);
// --framework, --nodes, --gpus-per-node, --nvlink-domain, --model, --python-path and the run's facts.
void add_config_options(CLI::App& app, ConfigOptions& options);

// The error for a planck plan given flags that describe a framework config's run ("" when none is):
// a plan states its own cluster, model and batch.
std::string config_flags_on_plan(const std::string& path, const ConfigOptions& options);
// The importer's options: the cluster, --python-path, and --set / --script-args as (name, value).
core::Result<import::ImportOptions> import_options(const ConfigOptions& options);
// After an import: --model, then --seq-len / --micro-batch / --global-batch / --gpu written into
// the plan over the config's values (each noted; the config's line no longer locates them).
core::Status finish_import(import::ImportResult& r, const ConfigOptions& options);
// Imports `spec` (every plan it defines) with the options and finish_import applied.
core::Result<std::vector<import::NamedImport>> import_config(const std::string& spec, const std::string& framework,
                                                             const ConfigOptions& options);

// The plan and mesh of PATH, a planck plan or a framework config (one plan: FILE.py:FUNCTION for a
// registry), or nullopt after printing why not (exit 2 for the caller): a config whose cluster
// size is unknown, or with a construct that could not be followed, is refused.
std::optional<PlanInput> load_plan_input(const std::string& path, const ConfigOptions& options);

}  // namespace planck::cli
