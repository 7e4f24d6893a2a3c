// planck verify on a framework config (cli/verify_config.h).

#include "cli/verify_config.h"

#include <algorithm>
#include <string_view>

#include "cli/config_input.h"
#include "cli/plan_input.h"

#include "core/base/input_file.h"
#include "core/plan/plan_load.h"
#include "import/importer.h"

namespace planck::cli {

namespace {

// The config line of `pointer`: its own, else its closest located parent's, else the line of
// the config as a whole ("" = the registry function), else 0; `file` becomes the file it is in.
int line_for(const import::ImportResult& r, std::string pointer, std::string& file) {
  while (true) {
    auto it = r.positions.find(pointer);
    if (it != r.positions.end()) {
      auto f = r.position_files.find(pointer);
      if (f != r.position_files.end()) file = f->second;
      return it->second;
    }
    if (pointer.empty()) return 0;
    const std::size_t slash = pointer.rfind('/');
    pointer = slash == std::string::npos ? std::string() : pointer.substr(0, slash);
  }
}

}  // namespace

core::Result<std::string> config_framework(const std::string& spec, const ConfigOptions& options) {
  if (!options.framework.empty()) return options.framework;
  if (spec == "-") return std::string("plan");
  const std::string file = import::spec_file(spec);
  const bool python = file.size() > 3 && file.compare(file.size() - 3, 3, ".py") == 0;
  auto text = core::read_input(file);
  // An unreadable .py goes to the registry reader, whose input gate names what it is (a
  // directory, a FIFO, a symlink loop); other unreadable inputs to the plan loader.
  if (!text) return std::string(python ? "torchtitan" : "plan");
  std::string fw = import::detect_framework(spec, *text);
  if (fw.empty()) {
    return core::Status::error(file +
                               ": neither a planck plan nor a config planck recognises (torchtitan TOML or "
                               "config_registry.py, Lingua YAML, Megatron-LM launch script, Megatron-Bridge recipe, "
                               "DeepSpeed JSON, LLaMA-Factory YAML, accelerate config, NeMo 1.x YAML, GPT-NeoX YAML, "
                               "axolotl YAML); pass --framework torchtitan|lingua|megatron|megatron-bridge|deepspeed|"
                               "llama-factory|accelerate|nemo|neox|axolotl");
  }
  return fw;
}

core::RuleInfo config_unfollowed_rule() {
  return {"config-unfollowed", core::Severity::kError,
          "a statement, call or value of the config that sets (or may set) the mesh, model, batch, parallelism, "
          "precision or recompute could not be followed; planck does not assume the framework's defaults for it"};
}

core::Diagnostic config_unfollowed(const import::Unfollowed& u, const std::string& prefix) {
  core::Diagnostic d;
  d.rule = config_unfollowed_rule().id;
  d.severity = core::Severity::kError;
  d.file = u.file;
  d.line = u.line;
  d.column = u.line > 0 ? 1 : 0;
  d.message = prefix + "`" + u.construct + "` could not be followed (" + u.why + "), and it may set " + u.settings;
  d.hint = unfollowed_fix();
  return d;
}

std::string unfollowed_fix() {
  return "planck reads the config without running it: write the setting as a literal keyword argument or field "
         "edit (config.parallelism.tensor_parallel_degree = 8), pass --python-path DIR for a package it did not "
         "find, or --framework when the file is another framework's; `planck import --explain` lists what was "
         "read";
}

core::RuleInfo config_unreadable_rule() {
  return {"config-unreadable", core::Severity::kError,
          "the framework config cannot be recognised or imported, or does not state the cluster size"};
}

std::vector<core::RuleInfo> import_rules() {
  return {{"setting-unmodelled", core::Severity::kWarning,
           "a config setting that changes memory, time, traffic or the mesh which planck does not price; the "
           "message says what it assumed instead"},
          {"unknown-key", core::Severity::kWarning, "a key the framework itself does not know; the message says whether the framework ignores it or "
           "refuses to start (Megatron-LM's argparse, torchtitan's TOML check since 2025-08-28)"},
          {"model-unmodelled-layers", core::Severity::kWarning,
           "layers of the model (linear attention, state-space) priced as ordinary attention"},
          {"import-warning", core::Severity::kWarning,
           "what the importer noticed that no other rule states (a value it could not use as written, a setting "
           "the framework ignores in this combination, a sourced file that is not there), in its words"}};
}

namespace {

// An importer warning another diagnostic already states: its rule's finding, the checks-skipped
// note of a model left out, or a value written so that a rule reports it.
bool said_by_a_rule(const import::ImportResult& r, const std::string& w) {
  for (const import::ImportFinding& f : r.findings) {
    if (w.find(f.message) != std::string::npos) return true;
  }
  for (const char* covered : {"model left out", "has no planck preset", "do not describe the model",
                              "`planck verify` reports it", "so `planck verify` reports"}) {
    if (w.find(covered) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

core::Diagnostic config_unreadable(const std::string& spec, const std::string& message) {
  core::Diagnostic d;
  d.rule = config_unreadable_rule().id;
  d.severity = core::Severity::kError;
  d.file = import::spec_file(spec);
  // The report names the file already; the importer's message starts with it too.
  const std::string lead = d.file + ": ";
  d.message = message.compare(0, lead.size(), lead) == 0 ? message.substr(lead.size()) : message;
  d.hint = "pass --framework when the content is not recognised, --nodes/--gpus-per-node when the cluster size "
           "is not in the config; `planck import --explain` shows what the importer read (docs/import.md)";
  return d;
}

core::Result<core::Diagnostics> verify_config(const std::string& spec, const std::string& framework,
                                              const ConfigOptions& options,
                                              const std::function<core::Diagnostics(const core::Plan&)>& check) {
  auto imported = import_config(spec, framework, options);
  if (!imported) return imported.status();
  core::Diagnostics out;
  for (const import::NamedImport& n : *imported) {
    const import::ImportResult& r = n.result;
    if (!r.failed.empty()) {  // one function of several: said at its place, the others checked
      core::Diagnostic d = config_unreadable(spec, r.failed);
      // "FILE:LINE: why" (the importer's form): located there.
      const std::size_t sep = r.failed.find(": ");
      const std::size_t colon = sep == std::string::npos ? std::string::npos : r.failed.rfind(':', sep - 1);
      if (colon != std::string::npos && colon + 1 < sep &&
          r.failed.find_first_not_of("0123456789", colon + 1) == sep) {
        d.file = r.failed.substr(0, colon);
        d.line = std::stoi(r.failed.substr(colon + 1, sep - colon - 1));
        d.column = 1;
        d.message = r.failed.substr(sep + 2);
      }
      if (!n.name.empty()) d.message = "[" + n.name + "] " + d.message;
      d.hint = "this function cannot be imported as written (the message says why and where); the file's other "
               "functions are checked; `planck import --explain FILE:FUNCTION` shows what was read";
      out.add(std::move(d));
      continue;
    }
    if (r.world_assumed) {
      return core::Status::error(r.source_path + (n.name.empty() ? "" : ":" + n.name) +
                                 ": the config does not state the cluster size; pass --nodes N --gpus-per-node G "
                                 "for the cluster it will run on");
    }
    const std::string prefix = n.name.empty() ? "" : "[" + n.name + "] ";
    for (const import::ImportFinding& f : r.findings) {
      core::Diagnostic d;
      d.rule = f.rule;
      d.severity = core::Severity::kWarning;
      d.file = f.file;
      d.line = f.line;
      d.column = f.line > 0 ? 1 : 0;
      d.message = prefix + f.message;
      d.hint = f.rule == "unknown-key" ? "check the spelling against the framework's config reference"
                                       : "docs/import.md lists what planck reads, prices and warns about";
      out.add(std::move(d));
    }
    // Nothing the importer warned about stays in --explain alone (docs/verify.md "Nothing passes
    // silently"): a warning no rule states is import-warning.
    for (const std::string& w : r.warnings) {
      if (said_by_a_rule(r, w)) continue;
      core::Diagnostic d;
      d.rule = "import-warning";
      d.severity = core::Severity::kWarning;
      d.file = r.source_path;
      d.message = prefix + w;
      d.hint = "docs/import.md lists what planck reads, prices and warns about; `planck import --explain` shows "
               "what was read";
      out.add(std::move(d));
    }
    if (!r.unfollowed.empty()) {  // not checked: the plan would rest on defaults planck assumed
      for (const import::Unfollowed& u : r.unfollowed) out.add(config_unfollowed(u, prefix));
      continue;
    }
    core::LoadedPlan loaded = core::load_plan_text(r.plan.dump(2), r.source_path);
    core::Diagnostics found = loaded.plan ? check(*loaded.plan) : loaded.diagnostics;
    // Why the plan has no model, as the importer said it (a flavour without a preset, a missing
    // size): the checks-skipped note carries it, so verify says what import says.
    std::string no_model;
    for (const std::string& w : r.warnings) {
      const bool left_out = w.find("model left out") != std::string::npos ||
                            w.find("has no planck preset; give --model") != std::string::npos;
      if (left_out) no_model = w;
    }
    // Memory the config saves and the price keeps (activations on the host, partitioned, chunked):
    // the predicted peak is an upper bound, so a memory-exceeds is a warning naming them.
    std::string savings;
    for (const import::ImportFinding& f : r.findings) {
      if (f.memory_saving.empty()) continue;
      savings += (savings.empty() ? "" : ", ") + f.memory_saving +
                 (f.line > 0 ? " at line " + std::to_string(f.line) : "");
    }
    for (core::Diagnostic d : found.items()) {
      if (d.rule == "checks-skipped" && !no_model.empty() && d.message.find("has no model") != std::string::npos) {
        d.message += " (the importer: " + no_model + ")";
      }
      if (d.rule == "memory-exceeds" && !savings.empty()) {
        d.severity = core::Severity::kWarning;
        d.message += "; but the config saves memory planck does not price (" + savings +
                     "), so this peak is an upper bound and the run may fit: a warning, not an error";
      }
      if (d.file.empty()) {  // about the plan, not an --observed file: point into the config
        d.file = r.source_path;
        d.line = line_for(r, d.pointer, d.file);
        d.column = d.line > 0 ? 1 : 0;
      }
      d.message = prefix + d.message;
      out.add(std::move(d));
    }
  }
  return out;
}

}  // namespace planck::cli
