#pragma once
// Lingua reads its YAML through OmegaConf (lingua/args.py: OmegaConf.load), whose loader
// (omegaconf/_utils.py get_yaml_loader, a yaml.SafeLoader) differs from yaml-cpp's defaults in
// three ways planck follows, so a config means to planck what it means to Lingua:
//  - merge keys: `<<: *base` (or a list of aliases) copies the keys the mapping does not set
//    itself, earlier aliases first (YAML 1.1 merge-key type); yaml-cpp keeps "<<" as a plain key;
//  - a key given twice in one mapping is an error (OmegaConf's loader raises
//    yaml.constructor.ConstructorError "found duplicate key"); yaml-cpp keeps both;
//  - a file holds one document: OmegaConf.load calls yaml.load, which raises ComposerError
//    "expected a single document in the stream" on a second.

#include <yaml-cpp/yaml.h>

#include <string>

#include "core/base/status.h"
#include "import/plan_builder.h"

namespace planck::import {

// The most nodes the merge-key walk visits, aliases counted each time they are reached: a
// "billion laughs" of aliases stops here with an error instead of expanding.
inline constexpr long kMaxYamlVisits = 1000000;
// The deepest nesting the walk follows: also where an alias inside the node it names (`a: &a
// {b: [*a]}`, which yaml-cpp builds as a cycle) stops.
inline constexpr int kMaxYamlDepth = 256;

// Parses one YAML document of `text` as OmegaConf would (above). Errors name file:line.
core::Result<YAML::Node> load_omegaconf_yaml(const std::string& text, const PlanBuilder& builder);

}  // namespace planck::import
