// JUnit XML: one <testsuite> per input, one <testcase> per rule. A rule that fired an error is a
// <failure>; a rule meaning the input could not be checked (plan-syntax, ...) is an <error>; a
// rule that could not run (named by a checks-skipped note, or every rule when the input did not
// load) is <skipped>. Warnings and notes go to the suite's <system-out>, one line each. The shape
// follows the Apache Ant JUnit XSD (tests/data/schemas/JUnit.xsd): a testcase holds at most one
// of skipped / error / failure, and a suite carries id, package, timestamp, hostname,
// <properties>, <system-out> and <system-err>.

#include <string>

#include "core/base/str_cat.h"
#include "core/base/utf8.h"
#include "core/check/report.h"

namespace planck::core::report_detail {
namespace {

// XML 1.0 character data: invalid UTF-8 bytes, control characters other than tab and newline,
// and the non-characters U+FFFE / U+FFFF (outside XML's Char production) become U+FFFD.
std::string xml_escape(const std::string& raw) {
  const std::string s = valid_utf8(raw);
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') {
          out += kReplacementChar;
        } else if (s.compare(i, 2, "\xEF\xBF") == 0 && i + 2 < s.size() &&
                   (s[i + 2] == '\xBE' || s[i + 2] == '\xBF')) {
          out += kReplacementChar;  // U+FFFE, U+FFFF
          i += 2;
        } else {
          out += c;
        }
    }
  }
  return out;
}

struct Counts {
  int tests = 0, failures = 0, errors = 0, skipped = 0;
};

std::string counts_attrs(const Counts& c) {
  return str_cat(" tests=\"", std::to_string(c.tests), "\" failures=\"", std::to_string(c.failures), "\" errors=\"",
                 std::to_string(c.errors), "\" skipped=\"", std::to_string(c.skipped), "\" time=\"0\"");
}

// Why a rule did not run, or "" when it ran.
std::string skip_reason(const VerifyReport& r, const std::string& rule, bool fired) {
  if (fired) return "";
  if (auto it = r.ignored.find(rule); it != r.ignored.end())
    return "ignored by --ignore (" + std::to_string(it->second) + " diagnostics left out)";
  if (!r.loaded) return "the input could not be loaded";
  for (const auto& d : r.diagnostics.items()) {
    for (const auto& s : d.skipped_rules) {
      if (s == rule) return d.message;
    }
  }
  return "";
}

// A path that is not UTF-8 is named with U+FFFD in the suite's name; its bytes stay readable
// (\xHH) in a "path" property.
std::string properties(const VerifyReport& r) {
  if (valid_utf8(r.plan_path) == r.plan_path) return "<properties/>";
  return str_cat("<properties>\n      <property name=\"path\" value=\"", xml_escape(escape_invalid_utf8(r.plan_path)),
                 "\"/>\n    </properties>");
}

std::string suite_xml(const VerifyReport& r, std::size_t id) {
  std::vector<RuleInfo> rules = r.rules_ran;
  for (const auto& d : r.diagnostics.items()) {
    bool known = false;
    for (const auto& ri : rules) known = known || ri.id == d.rule;
    if (!known) rules.push_back({d.rule, d.severity, ""});
  }
  Counts c;
  std::string cases, out_text;
  for (const auto& ri : rules) {
    std::string error_text;
    int errors = 0;
    bool fired = false;
    for (const auto& d : r.diagnostics.items()) {
      if (d.rule != ri.id) continue;
      fired = true;
      std::string line = location(r, d);
      line += ' ';
      line += d.pointer;
      line += ' ';
      line += severity_name(d.severity);
      line += ": ";
      line += d.message;
      line += '\n';
      if (d.severity == Severity::kError) {
        ++errors;
        error_text += line;
      } else {
        out_text += line;
      }
    }
    ++c.tests;
    cases += str_cat("    <testcase classname=\"planck.verify\" name=\"", xml_escape(ri.id), "\" time=\"0\">");
    const std::string skipped = skip_reason(r, ri.id, fired);
    std::string body;
    if (!skipped.empty()) {
      ++c.skipped;
      body += str_cat("\n      <skipped message=\"", xml_escape(skipped), "\"/>");
    } else if (errors) {
      const bool cannot_run = is_cannot_run_rule(ri.id);
      ++(cannot_run ? c.errors : c.failures);
      const char* tag = cannot_run ? "error" : "failure";
      body += str_cat("\n      <", tag, " type=\"", xml_escape(ri.id), "\" message=\"", std::to_string(errors),
                      errors == 1 ? " error" : " errors", "\">", xml_escape(error_text), "</", tag, ">");
    }
    cases += body;
    cases += body.empty() ? "</testcase>\n" : "\n    </testcase>\n";
  }
  return str_cat("  <testsuite name=\"", xml_escape(r.plan_path), "\" package=\"planck.verify\" id=\"",
                 std::to_string(id), "\" timestamp=\"", xml_escape(r.timestamp), "\" hostname=\"",
                 xml_escape(r.hostname), "\"", counts_attrs(c), ">\n    ", properties(r), "\n", cases,
                 "    <system-out>", xml_escape(out_text), "</system-out>\n    <system-err></system-err>\n",
                 "  </testsuite>\n");
}

}  // namespace

std::string render_junit(const std::vector<VerifyReport>& reports) {
  // The XSD's <testsuites> takes no attributes: the counts live on each suite.
  std::string suites;
  for (std::size_t i = 0; i < reports.size(); ++i) suites += suite_xml(reports[i], i);
  return str_cat("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n", suites, "</testsuites>\n");
}

}  // namespace planck::core::report_detail
