#pragma once
// Python-format configs (torchtitan registries, Megatron-Bridge recipes) as planck's embedded
// reader (python/planck_pyvalues.py + planck_pyeval.py) sees them: where their imports are looked
// for, running the reader on one file, and which of the constructs it could not follow matter.

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/base/status.h"
#include "import/importer.h"
#include "import/plan_builder.h"

namespace planck::import {

// Where a Python config's imports are looked for after its own directory and parents:
// --python-path, then PYTHONPATH.
std::vector<std::string> python_search_path(const ImportOptions& options);

// The reader's JSON for `path` (every function, or `function` alone when not ""), with the
// search path above; `what` names the config in errors ("torchtitan registry").
// `kwargs`: keyword arguments `function` is called with, where it has such a parameter.
core::Result<nlohmann::json> read_python_config(const std::string& path, const std::string& function,
                                                const ImportOptions& options, const std::string& what,
                                                const std::vector<std::pair<std::string, nlohmann::json>>& kwargs = {});

// The constructs of one evaluated function (the reader's "unfollowed" and settings it could not
// evaluate) that may set a setting `matters` names: refused; the others noted on `b` (shared by the
// torchtitan registry and Megatron-Bridge recipe importers). Its environment reads that took their
// default are said on `b` too: a warning where a setting `matters` names, or a branch, rests on one.
std::vector<Unfollowed> python_unfollowed(const nlohmann::json& fn, const std::string& path,
                                          const ImportOptions& options, PlanBuilder& b,
                                          bool (*matters)(const std::string&));

// "FILE:LINE" of a setting or construct the reader printed (`main` when it names no file).
std::string python_where(const nlohmann::json& item, const std::string& main);

}  // namespace planck::import
