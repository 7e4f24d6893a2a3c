// planck verify INPUT... [--observed FILE]... [--format text|json|sarif|junit] [-o FILE] [--strict]

#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/verify_registry.h"
#include "core/check/report.h"
#include "core/mesh/plan_mesh.h"
#include "core/plan/plan_load.h"
#include "io/observed_io.h"

namespace planck::cli {
namespace {

struct VerifyOptions {
  std::vector<std::string> inputs;
  std::vector<std::string> observed;
  std::string format = "text";
  std::string output = "-";
  bool strict = false;
  std::string color = "auto";
};

// One input of verify: the plan it describes, or the diagnostics saying why there is none. Each
// input kind (a planck/1 plan file, stdin) turns a command-line argument into a LoadedPlan whose
// plan carries the positions diagnostics point at; another kind (a framework config) plugs in
// here by returning its plan and source positions the same way.
core::LoadedPlan load_verify_input(const std::string& arg) { return core::load_plan_file(arg); }

std::vector<core::Diagnostic> read_observed(const std::vector<std::string>& paths,
                                            std::vector<core::Observed>& observed) {
  std::vector<core::Diagnostic> problems;
  for (const auto& path : paths) {
    auto obs = io::read_observed_file(path);
    if (!obs) {
      core::Diagnostic d;
      d.rule = "observed-unreadable";
      d.severity = core::Severity::kError;
      d.message = obs.message();
      d.file = path;
      d.hint = "pass a planck-observed JSON, an NCCL_DEBUG=INFO log or a PyTorch flight-recorder dump";
      problems.push_back(std::move(d));
      continue;
    }
    observed.push_back(std::move(*obs));
  }
  return problems;
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

core::VerifyReport verify_one(const std::string& arg, const VerifyOptions& o, const core::CheckRegistry& registry,
                              int& code) {
  core::VerifyReport report;
  report.plan_path = arg;
  stamp(report);
  report.rules_ran = registry.rules();
  report.rules_ran.insert(report.rules_ran.begin(),
                          {{"plan-syntax", core::Severity::kError, "not valid JSON, or the file cannot be read"},
                           {"plan-schema", core::Severity::kError,
                            "missing field, wrong type, duplicate or unknown key, unknown preset"}});
  core::LoadedPlan loaded = load_verify_input(arg);
  if (loaded.plan) {
    std::vector<core::Observed> observed;
    for (auto& d : read_observed(o.observed, observed)) report.diagnostics.add(std::move(d));
    std::optional<core::Mesh> mesh = core::plan_mesh(*loaded.plan, nullptr);
    core::CheckContext ctx{*loaded.plan, mesh ? &*mesh : nullptr, &observed};
    report.diagnostics.append(core::run_checks(registry, ctx));
  } else {
    report.loaded = false;
    report.diagnostics = loaded.diagnostics;
  }
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
  std::vector<core::VerifyReport> reports;
  int code = kExitOk;
  for (const auto& arg : o.inputs) {
    int one = kExitOk;
    reports.push_back(verify_one(arg, o, registry, one));
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
      "Run every check on each input plan: mesh and world size, declared and observed communicators, HSDP "
      "shape, placement, rank arithmetic, batch/heads/layers/sequence/expert divisibility, pipeline bubble, "
      "memory and gradient sync. A rule whose input (model, training.global_batch, training.seq_len, "
      "rank_program) is absent is reported by a checks-skipped note, never passed.\n"
      "Exit (the highest over the inputs) 0: no error (warnings and notes allowed unless --strict); "
      "1: a plan breaks a rule; 2: could not run (unreadable file, plan-syntax, plan-schema, "
      "rank-program-invalid, observed-unreadable, bad usage). Rules and formats: docs/verify.md.");
  app.add_option("plans", o->inputs, "plan files (planck/1 JSON; see plans/); '-' reads one from stdin")
      ->required();
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
  app.add_option("--color", o->color, "colour text output: auto (on a terminal), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->default_str("auto");
  action = [o] { return run_verify(*o); };
}

}  // namespace

PLANCK_COMMAND(verify, "check plans against every rule (text, json, sarif, junit)", setup_verify);

}  // namespace planck::cli
