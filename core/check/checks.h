#pragma once
// The rule registry: every check declares the rules it may fire and runs over a CheckContext.
// Later rules (rank programs, memory, observed groups) plug in with CheckRegistry::add, without
// touching the others; cli/ decides which checks a command runs.

#include <functional>
#include <string>
#include <vector>

#include "core/base/diagnostics.h"
#include "core/mesh/mesh.h"
#include "core/observed/observed.h"
#include "core/plan/plan.h"

namespace planck::core {

struct RuleInfo {
  std::string id;            // "group-overlap"
  Severity severity;         // default severity
  std::string summary;       // one line for SARIF / junit / --help
  // Optional plan inputs the rule reads (kInputModel, ...): when one is absent the rule cannot
  // run, and run_checks says so with a checks-skipped note instead of passing it silently.
  std::vector<std::string> needs = {};
};

// The optional inputs of a plan that rules may need, as named in checks-skipped messages.
inline constexpr const char* kInputModel = "model";
inline constexpr const char* kInputGlobalBatch = "training.global_batch";
inline constexpr const char* kInputSeqLen = "training.seq_len";
inline constexpr const char* kInputRankProgram = "rank_program";

struct CheckContext {
  const Plan& plan;
  const Mesh* mesh = nullptr;                   // null when the mesh is invalid
  const std::vector<Observed>* observed = nullptr;  // --observed files, may be empty
};

struct Check {
  std::string name;              // "mesh", "groups", "divisibility", ...
  std::vector<RuleInfo> rules;   // every rule it can fire
  bool needs_mesh = true;        // skipped when the mesh is invalid
  std::function<void(const CheckContext&, Diagnostics&)> run;
};

class CheckRegistry {
 public:
  void add(Check c) { checks_.push_back(std::move(c)); }
  const std::vector<Check>& checks() const { return checks_; }
  std::vector<RuleInfo> rules() const;  // of every check, in registration order, deduplicated

 private:
  std::vector<Check> checks_;
};

// Built-in rules of core: mesh, groups, HSDP, placement and divisibility checks.
void add_core_checks(CheckRegistry& registry);

// Runs every check (those needing a mesh only when `ctx.mesh`), keeps only the most specific
// rule per role (docs/verify.md#one-rule-per-role), adds one checks-skipped note per absent input
// that some rule needs, and fills line/column from each diagnostic's pointer.
Diagnostics run_checks(const CheckRegistry& registry, const CheckContext& ctx);

}  // namespace planck::core
