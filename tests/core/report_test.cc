#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "check_util.h"
#include "core/check/report.h"

using namespace planck;

namespace {

core::VerifyReport flattened_report() {
  auto c = test::check_text(test::plan(2, 8, R"(["dp_replicate","dp_shard"])", "[2,8]",
                                       ",\n \"parallelism\": {\"data_parallel\": \"hsdp\",\n   \"fsdp_dims\": [\"dp_replicate\", \"dp_shard\"]}"));
  core::VerifyReport r;
  r.plan_path = "plans/x.json";
  r.diagnostics = c.diags;
  r.ok = false;
  core::CheckRegistry reg;
  core::add_core_checks(reg);
  r.rules_ran = reg.rules();
  return r;
}

}  // namespace

TEST_CASE("core_report json follows planck-verify/1") {
  auto j = nlohmann::json::parse(core::render_report(flattened_report(), core::ReportFormat::kJson));
  CHECK(j["format"] == "planck-verify/1");
  CHECK(j["plan"] == "plans/x.json");
  CHECK(j["ok"] == false);
  CHECK(j["summary"]["errors"] == 1);
  CHECK(j["summary"]["warnings"] == 0);
  REQUIRE(j["diagnostics"].size() == 1);
  const auto& d = j["diagnostics"][0];
  CHECK(d["rule"] == "hsdp-flattened");
  CHECK(d["severity"] == "error");
  CHECK(d["pointer"] == "/parallelism/fsdp_dims");
  CHECK(d["line"] == 3);
  CHECK(d["column"] == 17);
  CHECK(d["witness"]["ranks"].size() == 16);
  CHECK(d["witness"]["coords"][9]["dp_replicate"] == 1);
  CHECK(d["witness"]["coords"][9]["dp_shard"] == 1);
  CHECK(d["hint"].get<std::string>().find("fsdp_dims") != std::string::npos);
}

TEST_CASE("core_report text is compiler style") {
  std::string t = core::render_report(flattened_report(), core::ReportFormat::kText);
  CHECK(t.rfind("plans/x.json:3:17: error[hsdp-flattened]: HSDP declared", 0) == 0);
  CHECK(t.find("FAILED (1 error, 0 warnings, 0 notes)") != std::string::npos);
  CHECK(t.find("\033[") == std::string::npos);
  CHECK(core::render_report(flattened_report(), core::ReportFormat::kText, true).find("\033[") != std::string::npos);
}

TEST_CASE("core_report sarif 2.1.0: every rule that ran, results with physicalLocation and startLine") {
  auto j = nlohmann::json::parse(core::render_report(flattened_report(), core::ReportFormat::kSarif));
  CHECK(j["version"] == "2.1.0");
  REQUIRE(j["runs"].size() == 1);
  const auto& run = j["runs"][0];
  CHECK(run["tool"]["driver"]["name"] == "planck");
  CHECK(run["tool"]["driver"]["rules"].size() == flattened_report().rules_ran.size());
  REQUIRE(run["results"].size() == 1);
  const auto& res = run["results"][0];
  CHECK(res["ruleId"] == "hsdp-flattened");
  CHECK(run["tool"]["driver"]["rules"][res["ruleIndex"].get<int>()]["id"] == "hsdp-flattened");
  CHECK(res["level"] == "error");
  CHECK(res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "plans/x.json");
  CHECK(res["locations"][0]["physicalLocation"]["region"]["startLine"] == 3);
}

TEST_CASE("core_report junit: one test case per rule that ran, failed where it fired an error") {
  auto r = flattened_report();
  std::string x = core::render_report(r, core::ReportFormat::kJunit);
  CHECK(x.find("tests=\"" + std::to_string(r.rules_ran.size()) + "\" failures=\"1\"") != std::string::npos);
  CHECK(x.find("<testcase classname=\"planck.verify\" name=\"hsdp-flattened\"") != std::string::npos);
  CHECK(x.find("<failure type=\"hsdp-flattened\"") != std::string::npos);
  CHECK(x.find("<testcase classname=\"planck.verify\" name=\"group-overlap\" time=\"0\"></testcase>") != std::string::npos);
}

TEST_CASE("core_report junit: an unloadable input is one <error>, every other rule <skipped>") {
  core::VerifyReport r = flattened_report();
  r.loaded = false;
  r.diagnostics = core::Diagnostics{};
  r.diagnostics.add("plan-syntax", core::Severity::kError, "cannot read plans/x.json: No such file or directory");
  r.rules_ran.insert(r.rules_ran.begin(), {"plan-syntax", core::Severity::kError, "not valid JSON"});
  const std::string x = core::render_report(r, core::ReportFormat::kJunit);
  const std::string n = std::to_string(r.rules_ran.size());
  CHECK(x.find("tests=\"" + n + "\" failures=\"0\" errors=\"1\" skipped=\"" + std::to_string(r.rules_ran.size() - 1) +
               "\"") != std::string::npos);
  CHECK(x.find("<error type=\"plan-syntax\"") != std::string::npos);
  CHECK(x.find("<skipped message=\"the input could not be loaded\"/>") != std::string::npos);
}

TEST_CASE("core_report several inputs: planck-verify-set/1, one SARIF run and one JUnit suite each") {
  const std::vector<core::VerifyReport> rs = {flattened_report(), flattened_report()};
  auto j = nlohmann::json::parse(core::render_reports(rs, core::ReportFormat::kJson));
  CHECK(j["format"] == "planck-verify-set/1");
  REQUIRE(j["results"].size() == 2);
  CHECK(j["results"][1]["format"] == "planck-verify/1");
  CHECK(nlohmann::json::parse(core::render_reports(rs, core::ReportFormat::kSarif))["runs"].size() == 2);
  const std::string x = core::render_reports(rs, core::ReportFormat::kJunit);
  CHECK(x.find("id=\"1\"") != std::string::npos);
  const std::string t = core::render_reports(rs, core::ReportFormat::kText);
  CHECK(t.find("FAILED (1 error, 0 warnings, 0 notes)\n\nplans/x.json:3:17") != std::string::npos);
}
