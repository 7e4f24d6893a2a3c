// planck verify on a framework config (cli/verify_config.h).

#include "cli/verify_config.h"

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
  auto text = core::read_input(file);
  if (!text) return std::string("plan");  // the plan loader reports a missing file or a directory
  std::string fw = import::detect_framework(spec, *text);
  if (fw.empty()) {
    return core::Status::error(file +
                               ": neither a planck plan nor a config planck recognises (torchtitan TOML or "
                               "config_registry.py, Lingua YAML, Megatron script, DeepSpeed JSON); pass "
                               "--framework torchtitan|lingua|megatron|megatron-bridge|deepspeed");
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
    if (r.world_assumed) {
      return core::Status::error(r.source_path + (n.name.empty() ? "" : ":" + n.name) +
                                 ": the config does not state the cluster size; pass --nodes N --gpus-per-node G "
                                 "for the cluster it will run on");
    }
    const std::string prefix = n.name.empty() ? "" : "[" + n.name + "] ";
    if (!r.unfollowed.empty()) {  // not checked: the plan would rest on defaults planck assumed
      for (const import::Unfollowed& u : r.unfollowed) out.add(config_unfollowed(u, prefix));
      continue;
    }
    core::LoadedPlan loaded = core::load_plan_text(r.plan.dump(2), r.source_path);
    core::Diagnostics found = loaded.plan ? check(*loaded.plan) : loaded.diagnostics;
    for (core::Diagnostic d : found.items()) {
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
