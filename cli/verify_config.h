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
#include "import/importer.h"

namespace planck::cli {

// The run's facts given on the command line (cli/config_input.h): they win over the config and
// are noted in the plan ("from the command line").
struct RunFacts {
  std::optional<std::int64_t> seq_len, micro_batch, global_batch;  // --seq-len, --micro-batch, --global-batch
  std::string gpu;                                                 // --gpu PRESET
  std::string checkpointing;  // --activation-checkpointing none|selective|selective_attention|full
  std::vector<std::string> sets;                                   // --set NAME=VALUE, in order
  std::string script_args;                                         // --script-args "A B": $1, $2 of a launch script
  std::vector<std::string> with_files;  // --with FILE: a GPT-NeoX run's further YAMLs, merged in order
  bool empty() const {
    return !seq_len && !micro_batch && !global_batch && gpu.empty() && checkpointing.empty() && sets.empty() &&
           script_args.empty() && with_files.empty();
  }
};

struct ConfigOptions {
  std::string framework;  // "" = detect from the content
  std::optional<std::int64_t> nodes, gpus_per_node, nvlink_domain;
  std::string model;  // --model: a preset, a planck model JSON or a Hugging Face config.json; "" = the config's
  std::vector<std::string> python_path;  // --python-path: where a Python config's imports are looked for
  RunFacts facts;
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
// config-unfollowed: a construct of the config that may set what planck checks and that it could
// not follow (import::Unfollowed; exit 2, a JUnit <error>); the plan is then not checked.
core::RuleInfo config_unfollowed_rule();
core::Diagnostic config_unfollowed(const import::Unfollowed& u, const std::string& prefix);
// The fix said with every config-unfollowed (verify's hint, import's error).
std::string unfollowed_fix();
core::Diagnostic config_unreadable(const std::string& spec, const std::string& message);
// The importers' own warning rules (import/importer.h ImportFinding): setting-unmodelled,
// unknown-key, model-unmodelled-layers.
std::vector<core::RuleInfo> import_rules();

core::Result<core::Diagnostics> verify_config(const std::string& spec, const std::string& framework,
                                              const ConfigOptions& options,
                                              const std::function<core::Diagnostics(const core::Plan&)>& check);

}  // namespace planck::cli
