// planck verify PLAN|CONFIG... [--framework F] [--nodes N --gpus-per-node G] [--observed FILE]...
//               [--format text|json|sarif|junit] [-o FILE] [--strict]

#include <unistd.h>

#include <set>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/verify_config.h"
#include "cli/verify_registry.h"
#include "io/observed_io.h"
#include "core/mesh/plan_mesh.h"
#include "core/plan/plan_load.h"
#include "core/check/report.h"

namespace planck::cli {
namespace {

struct VerifyOptions {
  std::vector<std::string> inputs;  // plans and framework configs
  std::string framework;            // "" = detect each input's from its content
  std::int64_t nodes = 0, gpus_per_node = 0;
  std::vector<std::string> observed;
  std::string format = "text";
  std::string output = "-";
  bool strict = false;
  std::string color = "auto";
};

// Rules that mean "could not run" (README.md): exit 2 even though the report is printed.
bool is_cannot_run(const std::string& rule) {
  return rule == "plan-syntax" || rule == "plan-schema" || rule == "rank-program-invalid" ||
         rule == "observed-unreadable";
}

std::string join_inputs(const std::vector<std::string>& inputs) {
  std::string out;
  for (const std::string& i : inputs) out += (out.empty() ? "" : " ") + i;
  return out;
}

int run_verify(const VerifyOptions& o) {
  core::ReportFormat fmt = core::ReportFormat::kText;
  if (o.format == "json") fmt = core::ReportFormat::kJson;
  else if (o.format == "sarif") fmt = core::ReportFormat::kSarif;
  else if (o.format == "junit") fmt = core::ReportFormat::kJunit;

  core::CheckRegistry registry = verify_registry();
  core::VerifyReport report;
  report.plan_path = o.inputs.size() == 1 ? o.inputs.front() : join_inputs(o.inputs);
  report.rules_ran = registry.rules();
  report.rules_ran.insert(report.rules_ran.begin(),
                          {{"plan-syntax", core::Severity::kError, "not valid JSON"},
                           {"plan-schema", core::Severity::kError, "missing field, wrong type, unknown key or preset"}});

  std::vector<core::Observed> observed;
  for (const auto& path : o.observed) {
    auto obs = io::read_observed_file(path);
    if (!obs) {
      core::Diagnostic d;
      d.rule = "observed-unreadable";
      d.severity = core::Severity::kError;
      d.message = obs.message();
      d.file = path;
      d.hint = "pass a planck-observed JSON, an NCCL_DEBUG=INFO log or a PyTorch flight-recorder dump";
      report.diagnostics.add(std::move(d));
      continue;
    }
    observed.push_back(std::move(*obs));
  }
  auto check = [&](const core::Plan& plan) {
    std::optional<core::Mesh> mesh = core::plan_mesh(plan, nullptr);
    core::CheckContext ctx{plan, mesh ? &*mesh : nullptr, &observed};
    return core::run_checks(registry, ctx);
  };
  ConfigOptions config;
  config.framework = o.framework;
  if (o.nodes > 0) config.nodes = o.nodes;
  if (o.gpus_per_node > 0) config.gpus_per_node = o.gpus_per_node;
  for (const std::string& input : o.inputs) {
    auto framework = config_framework(input, config);
    if (!framework) {
      print_error(framework.message());
      return kExitCannotRun;
    }
    if (*framework != "plan") {
      auto found = verify_config(input, *framework, config, check);
      if (!found) {
        print_error(found.message());
        return kExitCannotRun;
      }
      report.diagnostics.append(std::move(*found));
      continue;
    }
    core::LoadedPlan loaded = core::load_plan_file(input);
    core::Diagnostics found = loaded.plan ? check(*loaded.plan) : loaded.diagnostics;
    for (core::Diagnostic& d : found.items()) {
      if (d.file.empty() && o.inputs.size() > 1) d.file = input;
    }
    report.diagnostics.append(std::move(found));
  }

  int code = kExitOk;
  for (const auto& d : report.diagnostics.items()) {
    if (is_cannot_run(d.rule)) code = kExitCannotRun;
  }
  if (code == kExitOk) {
    if (report.diagnostics.has_errors()) code = kExitFindings;
    else if (o.strict && report.diagnostics.count(core::Severity::kWarning) > 0) code = kExitFindings;
  }
  report.ok = code == kExitOk;
  bool color = o.color == "always" ||
               (o.color == "auto" && fmt == core::ReportFormat::kText && (o.output == "-" || o.output.empty()) &&
                ::isatty(1));
  if (!write_output(o.output, core::render_report(report, fmt, color))) return kExitCannotRun;
  return code;
}

void setup_verify(CLI::App& app, Action& action) {
  auto o = std::make_shared<VerifyOptions>();
  app.description(
      "Run every check on a plan: mesh and world size, declared and observed communicators, HSDP shape, "
      "placement, rank arithmetic, batch/heads/layers/sequence/expert divisibility, memory and gradient sync.\n"
      "Exit 0: no error (warnings allowed unless --strict); 1: the plan breaks a rule; 2: could not run "
      "(unreadable file, plan-syntax, plan-schema, rank-program-invalid, a config that cannot be imported or "
      "does not state its cluster size without --nodes/--gpus-per-node, bad usage).");
  app.add_option("inputs", o->inputs,
                 "plan files (planck/1 JSON; see plans/) or framework configs, detected from their content: "
                 "torchtitan TOML or config_registry.py[:FUNCTION] (every function when none is named), Lingua "
                 "YAML, Megatron launch script, DeepSpeed JSON. A config is imported in memory (as `planck "
                 "import`) and each finding is located at the line of the setting in the config")
      ->required();
  app.add_option("--framework", o->framework, "read every CONFIG as this framework's instead of detecting it")
      ->check(CLI::IsMember({"torchtitan", "lingua", "megatron", "deepspeed"}));
  app.add_option("--nodes", o->nodes, "nodes of the cluster, for a config that does not state it")
      ->check(CLI::PositiveNumber);
  app.add_option("--gpus-per-node", o->gpus_per_node, "GPUs per node, for a config that does not state it")
      ->check(CLI::PositiveNumber);
  app.add_option("--observed", o->observed,
                 "what a real run created: planck-observed JSON, NCCL_DEBUG=INFO log or PyTorch flight-recorder "
                 "dump (auto-detected; repeat for several files)");
  app.add_option("--format", o->format, "output format")
      ->check(CLI::IsMember({"text", "json", "sarif", "junit"}))
      ->default_str("text");
  app.add_option("-o,--output", o->output, "write the report here ('-' = stdout), atomically")->default_str("-");
  app.add_flag("--strict", o->strict, "warnings fail too (exit 1)");
  app.add_option("--color", o->color, "colour text output: auto (on a terminal), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->default_str("auto");
  action = [o] { return run_verify(*o); };
}

}  // namespace

PLANCK_COMMAND(verify, "check a plan against every rule (text, json, sarif, junit)", setup_verify);

}  // namespace planck::cli
