#include "core/check/checks.h"

#include <algorithm>
#include <set>

namespace planck::core {

const RuleInfo& checks_skipped_rule() {
  static const RuleInfo rule{"checks-skipped", Severity::kNote,
                             "an input some rules need is absent from the plan, so those rules did not run"};
  return rule;
}

std::vector<RuleInfo> CheckRegistry::rules() const {
  std::vector<RuleInfo> out;
  std::set<std::string> seen;
  bool needs_inputs = false;
  for (const auto& c : checks_) {
    for (const auto& r : c.rules) {
      if (seen.insert(r.id).second) out.push_back(r);
      needs_inputs = needs_inputs || !r.needs.empty();
    }
  }
  if (needs_inputs) out.push_back(checks_skipped_rule());
  return out;
}

namespace {

struct Input {
  const char* name;
  const char* pointer;  // where it would go
  const char* hint;
};

constexpr Input kInputs[] = {
    {kInputModel, "/model",
     "add \"model\": a preset name (e.g. \"llama3-8b\") or an object with layers, hidden, ffn_hidden, heads, "
     "kv_heads, vocab (docs/plan-format.md#model); for a framework config, pass --model PRESET|FILE to verify or "
     "import (a preset, a model JSON or a Hugging Face config.json)"},
    {kInputGlobalBatch, "/training/global_batch",
     "add training.global_batch (sequences per optimizer step) (docs/plan-format.md#training)"},
    {kInputSeqLen, "/training/seq_len", "add training.seq_len (tokens per sequence) (docs/plan-format.md#training)"},
    {kInputRankProgram, "/rank_program",
     "add a rank_program with the data-parallel rank arithmetic of the training script "
     "(docs/rank-programs.md)"},
};

bool has_input(const Plan& plan, const std::string& name) {
  if (name == kInputModel) return plan.model.has_value();
  if (name == kInputGlobalBatch) return plan.training && plan.training->global_batch;
  if (name == kInputSeqLen) return plan.training && plan.training->seq_len;
  if (name == kInputRankProgram) return plan.rank_program.has_value();
  return true;
}

// One note per absent input, listing the rules of the checks that ran which could not.
void note_skipped(const CheckRegistry& registry, const CheckContext& ctx, Diagnostics& out) {
  for (const Input& in : kInputs) {
    if (has_input(ctx.plan, in.name)) continue;
    std::vector<std::string> rules;
    for (const auto& c : registry.checks()) {
      if (c.needs_mesh && !ctx.mesh) continue;
      for (const auto& r : c.rules) {
        if (std::find(r.needs.begin(), r.needs.end(), in.name) != r.needs.end() &&
            std::find(rules.begin(), rules.end(), r.id) == rules.end()) {
          rules.push_back(r.id);
        }
      }
    }
    if (rules.empty()) continue;
    std::string list;
    for (const auto& r : rules) list += (list.empty() ? "" : ", ") + r;
    Diagnostic& d = out.add(checks_skipped_rule().id, Severity::kNote,
                            std::string("the plan has no ") + in.name + ", so " + std::to_string(rules.size()) +
                                (rules.size() == 1 ? " rule did not run: " : " rules did not run: ") + list,
                            "", in.hint);
    d.skipped_rules = std::move(rules);
  }
}

// docs/verify.md#one-rule-per-role: per role only the most specific rule is reported. hsdp-flattened replaces
// groups-mismatch and group-size; group-overlap / group-coverage / group-size replace
// groups-mismatch.
void keep_most_specific(Diagnostics& diags) {
  std::set<std::string> flattened, structural;
  for (const auto& d : diags.items()) {
    if (d.role.empty()) continue;
    if (d.rule == "hsdp-flattened") flattened.insert(d.role);
    if (d.rule == "group-overlap" || d.rule == "group-coverage" || d.rule == "group-size") structural.insert(d.role);
  }
  auto& items = diags.items();
  std::vector<Diagnostic> kept;
  kept.reserve(items.size());
  for (auto& d : items) {
    bool drop = false;
    if (!d.role.empty()) {
      if (flattened.count(d.role) && (d.rule == "groups-mismatch" || d.rule == "group-size")) drop = true;
      if (structural.count(d.role) && d.rule == "groups-mismatch") drop = true;
    }
    if (!drop) kept.push_back(std::move(d));
  }
  items = std::move(kept);
}

}  // namespace

Diagnostics run_checks(const CheckRegistry& registry, const CheckContext& ctx) {
  Diagnostics out;
  for (const auto& c : registry.checks()) {
    if (c.needs_mesh && !ctx.mesh) continue;
    c.run(ctx, out);
  }
  keep_most_specific(out);
  note_skipped(registry, ctx, out);
  for (auto& d : out.items()) {
    if (d.line == 0 && d.file.empty()) {
      SourcePos pos = ctx.plan.position(d.pointer);
      d.line = pos.line;
      d.column = pos.column;
    }
  }
  return out;
}

}  // namespace planck::core
