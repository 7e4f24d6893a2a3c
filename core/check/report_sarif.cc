// SARIF 2.1.0 (OASIS): one run per input. Rules carry short and full descriptions, help text and
// a helpUri into docs/verify.md; checks-skipped notes are tool execution notifications, not
// results, because they say what was not checked rather than point at a line.

#include <map>

#include <nlohmann/json.hpp>

#include "core/check/report.h"
#include "planck/config.h"

namespace planck::core::report_detail {
namespace {

const char* sarif_level(Severity s) {
  switch (s) {
    case Severity::kError: return "error";
    case Severity::kWarning: return "warning";
    case Severity::kNote: return "note";
  }
  return "warning";
}

// SARIF artifact URIs: the path as given; stdin has no file to annotate.
std::string artifact_uri(const std::string& path) { return path == "-" ? "stdin" : path; }

nlohmann::json rule_json(const RuleInfo& ri) {
  const std::string summary = ri.summary.empty() ? ri.id : ri.summary;
  std::string full = summary;
  full += ". Default severity: ";
  full += severity_name(ri.severity);
  if (is_cannot_run_rule(ri.id)) full += " (planck exits 2: the input could not be checked)";
  full += '.';
  if (!ri.needs.empty()) {
    full += " Runs only when the plan has ";
    for (std::size_t i = 0; i < ri.needs.size(); ++i) {
      if (i) full += " and ";
      full += ri.needs[i];
    }
    full += "; otherwise a checks-skipped note names it.";
  }
  const std::string uri = rule_doc(ri.id);
  std::string help = full;
  help += " An example and the fix: ";
  help += uri;
  std::string markdown = "**";
  markdown += ri.id;
  markdown += "**: ";
  markdown += full;
  markdown += " [Example and fix](";
  markdown += uri;
  markdown += ')';
  return {{"id", ri.id},
          {"name", ri.id},
          {"shortDescription", {{"text", summary}}},
          {"fullDescription", {{"text", full}}},
          {"help", {{"text", help}, {"markdown", markdown}}},
          {"helpUri", uri},
          {"defaultConfiguration", {{"level", sarif_level(ri.severity)}}}};
}

nlohmann::json run_json(const VerifyReport& r) {
  nlohmann::json rules = nlohmann::json::array();
  std::map<std::string, int> index;
  auto add_rule = [&](const RuleInfo& ri) {
    if (index.count(ri.id)) return;
    index[ri.id] = static_cast<int>(rules.size());
    rules.push_back(rule_json(ri));
  };
  for (const auto& ri : r.rules_ran) add_rule(ri);
  nlohmann::json results = nlohmann::json::array();
  nlohmann::json notifications = nlohmann::json::array();
  bool ran = r.loaded;
  for (const auto& d : r.diagnostics.items()) {
    add_rule({d.rule, d.severity, ""});
    if (is_cannot_run_rule(d.rule)) ran = false;
    std::string text = d.message;
    if (!d.hint.empty()) {
      text += " Hint: ";
      text += d.hint;
    }
    if (!d.skipped_rules.empty()) {
      notifications.push_back({{"associatedRule", {{"id", d.rule}, {"index", index[d.rule]}}},
                               {"level", sarif_level(d.severity)},
                               {"message", {{"text", text}}},
                               {"properties", {{"skippedRules", d.skipped_rules}}}});
      continue;
    }
    const std::string uri = artifact_uri(d.file.empty() ? r.plan_path : d.file);
    nlohmann::json region = {{"startLine", d.line > 0 ? d.line : 1}};
    if (d.column > 0) region["startColumn"] = d.column;
    nlohmann::json loc = {{"physicalLocation", {{"artifactLocation", {{"uri", uri}}}, {"region", region}}}};
    if (!d.pointer.empty()) loc["logicalLocations"] = {{{"fullyQualifiedName", d.pointer}, {"kind", "property"}}};
    results.push_back({{"ruleId", d.rule},
                       {"ruleIndex", index[d.rule]},
                       {"level", sarif_level(d.severity)},
                       {"message", {{"text", text}}},
                       {"locations", {loc}},
                       {"partialFingerprints", {{"planckJsonPointer/v1", d.rule + ":" + d.pointer}}}});
  }
  nlohmann::json invocation = {{"executionSuccessful", ran}};
  if (!r.ignored.empty()) {  // --ignore: the rule disabled for this run (SARIF 2.1.0 §3.20.5)
    nlohmann::json overrides = nlohmann::json::array();
    for (const auto& [rule, n] : r.ignored) {
      add_rule({rule, Severity::kError, ""});
      overrides.push_back({{"descriptor", {{"id", rule}, {"index", index[rule]}}},
                           {"configuration", {{"enabled", false}}},
                           {"properties", {{"ignoredDiagnostics", n}}}});
    }
    invocation["ruleConfigurationOverrides"] = std::move(overrides);
  }
  if (!notifications.empty()) invocation["toolExecutionNotifications"] = std::move(notifications);
  return {{"tool", {{"driver", {{"name", "planck"},
                                {"version", PLANCK_VERSION},
                                {"informationUri", std::string(PLANCK_DOCS_URL) + "verify.md"},
                                {"rules", rules}}}}},
          {"invocations", {invocation}},
          {"artifacts", {{{"location", {{"uri", artifact_uri(r.plan_path)}}}}}},
          {"results", results}};
}

}  // namespace

std::string render_sarif(const std::vector<VerifyReport>& reports) {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& r : reports) runs.push_back(run_json(r));
  nlohmann::json j = {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
                      {"version", "2.1.0"},
                      {"runs", std::move(runs)}};
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace planck::core::report_detail
