// planck verify PLAN|CONFIG... [--framework F] [--nodes N --gpus-per-node G] [--observed FILE]...
//               [--format text|json|sarif|junit] [-o FILE] [--strict]

#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/config_input.h"
#include "cli/number_flags.h"
#include "cli/verify_config.h"
#include "cli/verify_registry.h"
#include "core/check/report.h"
#include "core/mesh/plan_mesh.h"
#include "core/plan/plan_load.h"
#include "io/observed_io.h"

namespace planck::cli {
namespace {

struct VerifyOptions {
  std::vector<std::string> inputs;  // plans and framework configs
  ConfigOptions config;             // --framework ("" = detect each input's), cluster, model, run facts
  std::vector<std::string> observed;
  std::string format = "text";
  std::string output = "-";
  bool strict = false;
  std::vector<std::string> ignore;  // --ignore RULE[,RULE...]: left out of the verdict, and said
  std::string color = "auto";
};

// The --observed files, read once and checked against every input.
struct Observations {
  std::vector<core::Observed> runs;
  std::vector<core::Diagnostic> problems;  // observed-unreadable, one per file that could not be read
};

Observations read_observed(const std::vector<std::string>& paths) {
  Observations out;
  for (const auto& path : paths) {
    auto obs = io::read_observed_file(path);
    if (!obs) {
      core::Diagnostic d;
      d.rule = "observed-unreadable";
      d.severity = core::Severity::kError;
      d.message = obs.message();
      d.file = path;
      d.hint = "pass a planck-observed JSON, an NCCL_DEBUG=INFO log or a PyTorch flight-recorder dump";
      out.problems.push_back(std::move(d));
      continue;
    }
    out.runs.push_back(std::move(*obs));
  }
  return out;
}

// Exit code of one input: 2 when it could not be checked, 1 on errors (and with --strict on
// warnings or on checks that could not run), else 0.
int exit_code(const core::Diagnostics& diags, bool strict) {
  for (const auto& d : diags.items()) {
    if (core::is_cannot_run_rule(d.rule)) return kExitCannotRun;
  }
  if (diags.has_errors()) return kExitFindings;
  if (strict) {
    if (diags.count(core::Severity::kWarning) > 0 || diags.has_rule("checks-skipped")) return kExitFindings;
  }
  return kExitOk;
}

// When and where verify ran (JUnit requires both on every suite).
void stamp(core::VerifyReport& report) {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0 && host[0] != '\0') report.hostname = host;
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  char buf[32];
  if (::gmtime_r(&now, &utc) && std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &utc) > 0) report.timestamp = buf;
}

// One input of verify, a planck/1 plan (a file or '-') or a framework config imported in memory
// (cli/verify_config.h), checked into one report. A config that cannot be imported is one
// config-unreadable diagnostic (exit 2), also said on stderr as `planck import` says it.
core::VerifyReport verify_one(const std::string& arg, const VerifyOptions& o, const Observations& obs,
                              const core::CheckRegistry& registry, int& code) {
  core::VerifyReport report;
  report.plan_path = arg;
  stamp(report);
  report.rules_ran = registry.rules();
  report.rules_ran.insert(report.rules_ran.begin(),
                          {{"plan-syntax", core::Severity::kError, "not valid JSON, or the file cannot be read"},
                           {"plan-schema", core::Severity::kError,
                            "missing field, wrong type, duplicate or unknown key, unknown preset"}});
  auto check = [&](const core::Plan& plan) {
    std::optional<core::Mesh> mesh = core::plan_mesh(plan, nullptr);
    core::CheckContext ctx{plan, mesh ? &*mesh : nullptr, &obs.runs};
    return core::run_checks(registry, ctx);
  };
  const ConfigOptions& config = o.config;
  core::Result<std::string> framework = config_framework(arg, config);
  if (framework && *framework == "plan") {
    if (const std::string e = config_flags_on_plan(arg, config); !e.empty()) framework = core::Status::error(e);
  }
  if (framework && *framework == "plan") {
    core::LoadedPlan loaded = core::load_plan_file(arg);
    if (loaded.plan) {
      for (const auto& d : obs.problems) report.diagnostics.add(core::Diagnostic(d));
      report.diagnostics.append(check(*loaded.plan));
    } else {
      report.loaded = false;
      report.diagnostics = loaded.diagnostics;
    }
  } else {
    report.rules_ran.insert(report.rules_ran.begin(), {config_unreadable_rule(), config_unfollowed_rule()});
    for (const core::RuleInfo& rule : import_rules()) report.rules_ran.push_back(rule);
    core::Result<core::Diagnostics> found =
        framework ? verify_config(arg, *framework, config, check) : core::Result<core::Diagnostics>(framework.status());
    if (found) {
      for (const auto& d : obs.problems) report.diagnostics.add(core::Diagnostic(d));
      report.diagnostics.append(std::move(*found));
    } else {
      print_error(found.message());
      report.loaded = false;
      report.diagnostics.add(config_unreadable(arg, found.message()));
    }
  }
  for (const std::string& rule : o.ignore) report.ignored[rule] = 0;
  std::erase_if(report.diagnostics.items(), [&](const core::Diagnostic& d) {
    auto it = report.ignored.find(d.rule);
    if (it == report.ignored.end()) return false;
    ++it->second;
    return true;
  });
  code = exit_code(report.diagnostics, o.strict);
  report.ok = code == kExitOk;
  return report;
}

int run_verify(const VerifyOptions& o) {
  core::ReportFormat fmt = core::ReportFormat::kText;
  if (o.format == "json") fmt = core::ReportFormat::kJson;
  else if (o.format == "sarif") fmt = core::ReportFormat::kSarif;
  else if (o.format == "junit") fmt = core::ReportFormat::kJunit;

  const core::CheckRegistry registry = verify_registry();
  for (const std::string& rule : o.ignore) {
    bool known = rule == "checks-skipped";
    for (const core::RuleInfo& ri : registry.rules()) known = known || ri.id == rule;
    for (const core::RuleInfo& ri : import_rules()) known = known || ri.id == rule;
    if (core::is_cannot_run_rule(rule)) {
      print_error("--ignore " + rule + ": the input could not be checked; that cannot be ignored");
      return kExitCannotRun;
    }
    if (!known) {
      print_error("--ignore " + rule + ": not a rule of planck verify (docs/verify.md#rules)");
      return kExitCannotRun;
    }
  }
  const Observations obs = read_observed(o.observed);
  std::vector<core::VerifyReport> reports;
  int code = kExitOk;
  for (const auto& arg : o.inputs) {
    int one = kExitOk;
    reports.push_back(verify_one(arg, o, obs, registry, one));
    code = std::max(code, one);
  }
  bool color = o.color == "always" ||
               (o.color == "auto" && fmt == core::ReportFormat::kText && (o.output == "-" || o.output.empty()) &&
                ::isatty(1));
  if (!write_output(o.output, core::render_reports(reports, fmt, color))) return kExitCannotRun;
  return code;
}

void setup_verify(CLI::App& app, Action& action) {
  auto o = std::make_shared<VerifyOptions>();
  app.description(
      "Run every check on each input, a planck plan or a framework's own config: mesh and world size, "
      "declared and observed communicators, HSDP shape, placement, rank arithmetic, "
      "batch/heads/layers/sequence/expert divisibility, pipeline bubble, memory and gradient sync. A rule "
      "whose input (model, training.global_batch, training.seq_len, rank_program) is absent is reported by a "
      "checks-skipped note, never passed.\n"
      "Exit (the highest over the inputs) 0: no error (warnings and notes allowed unless --strict); "
      "1: a plan breaks a rule; 2: could not run (unreadable file, plan-syntax, plan-schema, "
      "rank-program-invalid, observed-unreadable, a config that cannot be imported or does not state its "
      "cluster size without --nodes/--gpus-per-node, bad usage). Rules and formats: docs/verify.md.");
  app.add_option("inputs", o->inputs,
                 "plan files (planck/1 JSON; see plans/; '-' reads one from stdin) or framework configs, "
                 "detected from their content: torchtitan TOML or config_registry.py[:FUNCTION] (every function "
                 "when none is named), Lingua YAML, Megatron launch script, Megatron-Bridge recipe "
                 "(RECIPE.py[:FUNCTION]) or launch script running run_recipe.py with a.b=c overrides (every "
                 "launch, or SCRIPT:N), DeepSpeed JSON, LLaMA-Factory training YAML, accelerate config, NeMo 1.x "
                 "YAML, GPT-NeoX YAML (its run's other files with --with), axolotl training YAML. A config is "
                 "imported in memory (as `planck import`) and each finding is located at the line of the setting "
                 "in the config")
      ->required();
  add_config_options(app, o->config);
  app.add_option("--observed", o->observed,
                 "what a real run created: planck-observed JSON, NCCL_DEBUG=INFO log or PyTorch flight-recorder "
                 "dump (auto-detected; repeat for several files; checked against every input)");
  app.add_option("--format", o->format,
                 "output format; several inputs give one document: planck-verify-set/1 JSON, one SARIF run "
                 "or JUnit suite per input")
      ->check(CLI::IsMember({"text", "json", "sarif", "junit"}))
      ->default_str("text");
  app.add_option("-o,--output", o->output, "write the report here ('-' = stdout), atomically")->default_str("-");
  app.add_flag("--strict", o->strict, "warnings and checks-skipped notes fail too (exit 1)");
  app.add_option("--ignore", o->ignore,
                 "RULE[,RULE...]: leave these rules out of the verdict (repeatable); every format reports them as "
                 "ignored, with the number of diagnostics left out")
      ->delimiter(',');
  app.add_option("--color", o->color, "colour text output: auto (on a terminal), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->default_str("auto");
  action = [o] { return run_verify(*o); };
}

}  // namespace

PLANCK_COMMAND(verify, "check plans or framework configs against every rule (text, json, sarif, junit)", setup_verify);

}  // namespace planck::cli
