#include "cli/plan_input.h"
#include "cli/command.h"

#include <algorithm>
#include <cstdio>

#include "core/base/json_scan.h"
#include "core/mesh/plan_mesh.h"
#include "core/base/input_file.h"
#include "import/importer.h"
#include "core/plan/hf_config.h"
#include "io/observed_io.h"
#include "core/plan/plan_load.h"
#include "core/plan/presets.h"
#include "core/check/report.h"

namespace planck::cli {

void print_load_failure(const std::string& path, const core::Diagnostics& diags) {
  core::VerifyReport r;
  r.plan_path = path;
  r.diagnostics = diags;
  r.ok = false;
  const std::string text = core::render_report(r, core::ReportFormat::kText);
  std::fwrite(text.data(), 1, text.size(), stderr);
}

std::optional<PlanInput> load_plan_input(const std::string& path) {
  return plan_input_of(core::load_plan_file(path), path);
}

std::optional<PlanInput> plan_input_of(core::LoadedPlan loaded, const std::string& path) {
  if (!loaded.plan) {
    print_load_failure(path, loaded.diagnostics);
    return std::nullopt;
  }
  core::Diagnostics mesh_diags;
  auto mesh = core::plan_mesh(*loaded.plan, &mesh_diags);
  if (!mesh) {
    print_load_failure(path, mesh_diags);
    return std::nullopt;
  }
  return PlanInput{std::move(*loaded.plan), std::move(*mesh)};
}

namespace {

// The 1-based line of the first `"key"` in a JSON text (0 when absent): where a Hugging Face
// config declares the layers a finding is about.
int key_line(const std::string& text, const std::string& key) {
  const std::size_t at = text.find("\"" + key + "\"");
  if (at == std::string::npos) return 0;
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

}  // namespace

core::Result<ModelOption> read_model_option(const std::string& flag, const std::string& value) {
  if (core::model_preset(value)) return ModelOption{nlohmann::json(value), {}};
  auto text = core::read_input(value);
  if (!text) {
    std::string known;
    for (const auto& n : core::model_preset_names()) known += (known.empty() ? "" : ", ") + n;
    return core::Status::error(flag + " " + value + ": neither a preset (" + known + ") nor a readable file: " +
                               text.message());
  }
  if (auto st = core::check_json_nesting(*text, value); !st) return core::Status::error(flag + " " + st.message());
  // Hugging Face's config.json is written by Python's json module, which may write Infinity.
  nlohmann::json j = core::parse_python_json(*text);
  if (j.is_discarded()) {
    return core::Status::error(flag + " " + value +
                               ": not valid JSON (a planck model object or a Hugging Face config.json)");
  }
  if (!core::is_hf_config(j)) return ModelOption{j, {}};
  auto m = core::read_hf_config(j);
  if (!m) return core::Status::error(flag + " " + value + ": " + m.message());
  ModelOption out{std::move(m->model), {}};
  for (const core::HfUnmodelled& u : m->unmodelled)
    out.findings.push_back({"model-unmodelled-layers", u.message, value, key_line(*text, u.key), ""});
  return out;
}

std::optional<nlohmann::json> model_value(const std::string& flag, const std::string& value) {
  auto m = read_model_option(flag, value);
  if (!m) {
    print_error(m.message());
    return std::nullopt;
  }
  for (const import::ImportFinding& f : m->findings)
    print_error("warning: " + f.file + ":" + std::to_string(f.line) + ": " + f.rule + ": " + f.message);
  return std::move(m->model);
}

void apply_model_option(import::ImportResult& r, const std::string& value, const ModelOption& model) {
  const bool had = r.plan.contains("model");
  r.plan["model"] = nlohmann::ordered_json::parse(model.model.dump());
  const std::string note = std::string("model from --model ") + value + (had ? " (replaces the config's)" : "");
  r.notes.push_back(note);
  const bool plan_notes = r.plan.contains("notes") && r.plan["notes"].is_array();
  if (plan_notes) r.plan["notes"].push_back(note);
  std::erase_if(r.warnings, [](const std::string& w) {
    return w.find("model left out") != std::string::npos || w.find("do not describe the model") != std::string::npos;
  });
  for (const import::ImportFinding& f : model.findings) {
    const std::string warning = f.file + ":" + std::to_string(f.line) + ": " + f.rule + ": " + f.message;
    r.warnings.push_back(warning);
    r.notes.push_back("warning: " + warning);
    if (plan_notes) r.plan["notes"].push_back("warning: " + warning);
    r.findings.push_back(f);
  }
}

std::optional<std::vector<core::Observed>> read_observed_files(const std::vector<std::string>& paths) {
  std::vector<core::Observed> out;
  for (const auto& path : paths) {
    auto obs = io::read_observed_file(path);
    if (!obs) {
      std::fprintf(stderr, "planck: %s\n", obs.message().c_str());
      return std::nullopt;
    }
    out.push_back(std::move(*obs));
  }
  return out;
}

}  // namespace planck::cli
