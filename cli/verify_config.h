#pragma once
// `planck verify CONFIG`: a framework's own config (torchtitan TOML or Python registry, Lingua
// YAML, Megatron script, DeepSpeed JSON) imported in memory and checked like a plan, with every
// diagnostic placed at the file:line of the setting it is about (import/importer.h positions).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/base/diagnostics.h"
#include "core/base/status.h"
#include "core/check/checks.h"
#include "core/plan/plan.h"

namespace planck::cli {

struct ConfigOptions {
  std::string framework;  // "" = detect from the content
  std::optional<std::int64_t> nodes, gpus_per_node;
  std::string model;  // --model: a preset, a planck model JSON or a Hugging Face config.json; "" = the config's
};

// The framework of `spec` ("plan" for a planck plan), from --framework or the content; an error
// naming the file and --framework when nothing identifies it.
core::Result<std::string> config_framework(const std::string& spec, const ConfigOptions& options);

// Imports `spec` with `framework` and runs `check` on each plan it defines; the diagnostics come
// back located in the config (plan pointer -> the line of its longest located prefix), each
// message prefixed with the registry function it is about. A config that cannot be imported, or
// that does not state the cluster size when --nodes/--gpus-per-node are missing, is an error.
// config-unreadable: a config that cannot be recognised or imported, or that does not state the
// cluster size (exit 2, a JUnit <error>); `message` is the importer's, naming file and line.
core::RuleInfo config_unreadable_rule();
core::Diagnostic config_unreadable(const std::string& spec, const std::string& message);
// The importers' own warning rules (import/importer.h ImportFinding): setting-unmodelled,
// unknown-key, model-unmodelled-layers.
std::vector<core::RuleInfo> import_rules();

core::Result<core::Diagnostics> verify_config(const std::string& spec, const std::string& framework,
                                              const ConfigOptions& options,
                                              const std::function<core::Diagnostics(const core::Plan&)>& check);

}  // namespace planck::cli
