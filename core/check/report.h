#pragma once
// Rendering verify results: text (compiler style), json (planck-verify/1, or planck-verify-set/1
// for several inputs), sarif (2.1.0, one run per input), junit (one suite per input).
// The shapes are documented in docs/verify.md.

#include <map>
#include <string>
#include <vector>

#include "core/check/checks.h"
#include "core/base/diagnostics.h"

namespace planck::core {

enum class ReportFormat { kText, kJson, kSarif, kJunit };

struct VerifyReport {
  std::string plan_path;
  Diagnostics diagnostics;
  std::vector<RuleInfo> rules_ran;
  bool ok = true;       // exit code 0
  bool loaded = true;   // the input was read and parsed; false: only its load diagnostics
  // Rules left out of the verdict by `verify --ignore`, each with the number of diagnostics it
  // would have given; every format says so (never silently).
  std::map<std::string, int> ignored;
  // When and where it ran, for JUnit's required testsuite attributes (cli/ fills them; the
  // defaults keep library output deterministic).
  std::string timestamp = "1970-01-01T00:00:00";  // UTC, ISO 8601 without zone
  std::string hostname = "localhost";
};

// Rules meaning "could not run" (exit 2 even though a report is printed); JUnit reports them
// as <error>, not <failure>.
bool is_cannot_run_rule(const std::string& rule);

std::string render_report(const VerifyReport& report, ReportFormat format, bool color = false);
// One input renders exactly as render_report; several as one document per format.
std::string render_reports(const std::vector<VerifyReport>& reports, ReportFormat format, bool color = false);

// Helpers shared by the format writers (report_*.cc).
namespace report_detail {
// "path:line:column" (or "path" when the line is unknown) of a diagnostic.
std::string location(const VerifyReport& r, const Diagnostic& d);
// Anchor of the rule's entry in docs/verify.md, e.g. "docs/verify.md#rule-group-overlap".
std::string rule_doc(const std::string& rule);
std::string render_sarif(const std::vector<VerifyReport>& reports);
std::string render_junit(const std::vector<VerifyReport>& reports);
}  // namespace report_detail

}  // namespace planck::core
