#include "core/check/report.h"

#include <string>

#include <nlohmann/json.hpp>

#include "planck/config.h"

namespace planck::core {
namespace {

nlohmann::json witness_json(const Witness& w) {
  nlohmann::json j = nlohmann::json::object();
  j["ranks"] = w.ranks;
  nlohmann::json coords = nlohmann::json::array();
  for (const auto& c : w.coords) {
    nlohmann::json o = nlohmann::json::object();
    for (const auto& [k, v] : c) o[k] = v;
    coords.push_back(std::move(o));
  }
  j["coords"] = std::move(coords);
  nlohmann::json values = nlohmann::json::object();
  for (const auto& [k, v] : w.values) values[k] = v;
  j["values"] = std::move(values);
  return j;
}

nlohmann::json diagnostic_json(const Diagnostic& d) {
  nlohmann::json j = nlohmann::json::object();
  j["rule"] = d.rule;
  j["severity"] = severity_name(d.severity);
  j["message"] = d.message;
  j["pointer"] = d.pointer;
  if (d.line > 0) {
    j["line"] = d.line;
    j["column"] = d.column;
  }
  if (!d.file.empty()) j["file"] = d.file;
  if (d.witness && !d.witness->empty()) j["witness"] = witness_json(*d.witness);
  if (!d.hint.empty()) j["hint"] = d.hint;
  if (!d.skipped_rules.empty()) j["skipped_rules"] = d.skipped_rules;
  return j;
}

nlohmann::json report_json(const VerifyReport& r) {
  nlohmann::json j;
  j["format"] = "planck-verify/1";
  j["plan"] = r.plan_path;
  j["ok"] = r.ok;
  j["summary"] = {{"errors", r.diagnostics.count(Severity::kError)},
                  {"warnings", r.diagnostics.count(Severity::kWarning)},
                  {"notes", r.diagnostics.count(Severity::kNote)}};
  nlohmann::json diags = nlohmann::json::array();
  for (const auto& d : r.diagnostics.items()) diags.push_back(diagnostic_json(d));
  j["diagnostics"] = std::move(diags);
  if (!r.ignored.empty()) {
    nlohmann::json ignored = nlohmann::json::array();
    for (const auto& [rule, n] : r.ignored) ignored.push_back({{"rule", rule}, {"diagnostics", n}});
    j["ignored"] = std::move(ignored);
  }
  return j;
}

std::string dump(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string plural(int n, const char* one, const char* many) {
  std::string out = std::to_string(n);
  out += ' ';
  out += n == 1 ? one : many;
  return out;
}

std::string render_text(const VerifyReport& r, bool color) {
  auto paint = [&](const char* code, const std::string& s) {
    if (!color) return s;
    std::string out = "\033[";
    out += code;
    out += 'm';
    out += s;
    out += "\033[0m";
    return out;
  };
  std::string out;
  for (const auto& d : r.diagnostics.items()) {
    const char* code = d.severity == Severity::kError ? "1;31" : d.severity == Severity::kWarning ? "1;35" : "1;36";
    std::string label = severity_name(d.severity);
    label += '[';
    label += d.rule;
    label += ']';
    out += paint("1", report_detail::location(r, d) + ":");
    out += ' ';
    out += paint(code, label);
    out += ": ";
    out += d.message;
    out += '\n';
    if (!d.pointer.empty()) {
      out += "  at ";
      out += d.pointer;
      out += '\n';
    }
    if (!d.hint.empty()) {
      out += "  hint: ";
      out += d.hint;
      out += '\n';
    }
  }
  if (!r.ignored.empty()) {
    out += r.plan_path;
    out += ": ignored (--ignore):";
    for (const auto& [rule, n] : r.ignored) out += " " + rule + " (" + plural(n, "diagnostic", "diagnostics") + ")";
    out += '\n';
  }
  out += r.plan_path;
  out += ": ";
  out += r.ok ? paint("1;32", "ok") : paint("1;31", "FAILED");
  out += " (";
  out += plural(r.diagnostics.count(Severity::kError), "error", "errors");
  out += ", ";
  out += plural(r.diagnostics.count(Severity::kWarning), "warning", "warnings");
  out += ", ";
  out += plural(r.diagnostics.count(Severity::kNote), "note", "notes");
  out += ")\n";
  return out;
}

}  // namespace

bool is_cannot_run_rule(const std::string& rule) {
  return rule == "plan-syntax" || rule == "plan-schema" || rule == "rank-program-invalid" ||
         rule == "observed-unreadable" || rule == "config-unreadable" || rule == "config-unfollowed";
}

namespace report_detail {

std::string location(const VerifyReport& r, const Diagnostic& d) {
  std::string loc = d.file.empty() ? r.plan_path : d.file;
  if (d.line > 0) {
    loc += ':';
    loc += std::to_string(d.line);
    loc += ':';
    loc += std::to_string(d.column);
  }
  return loc;
}

std::string rule_doc(const std::string& rule) {
  std::string uri = PLANCK_DOCS_URL;
  uri += "verify.md#rule-";
  uri += rule;
  return uri;
}

}  // namespace report_detail

std::string render_report(const VerifyReport& report, ReportFormat format, bool color) {
  return render_reports({report}, format, color);
}

std::string render_reports(const std::vector<VerifyReport>& reports, ReportFormat format, bool color) {
  switch (format) {
    case ReportFormat::kJson: {
      if (reports.size() == 1) return dump(report_json(reports[0]));
      nlohmann::json results = nlohmann::json::array();
      for (const auto& r : reports) results.push_back(report_json(r));
      return dump({{"format", "planck-verify-set/1"}, {"results", std::move(results)}});
    }
    case ReportFormat::kSarif: return report_detail::render_sarif(reports);
    case ReportFormat::kJunit: return report_detail::render_junit(reports);
    case ReportFormat::kText: break;
  }
  std::string out;
  for (const auto& r : reports) {
    if (!out.empty()) out += '\n';  // one block per input
    out += render_text(r, color);
  }
  return out;
}

}  // namespace planck::core
