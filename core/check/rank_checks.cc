#include "core/check/rank_checks.h"

#include <algorithm>

#include "core/mesh/mesh.h"
#include "core/rank/rank_analysis.h"
#include "core/rank/rank_latent.h"
#include "core/rank/rank_program.h"
#include "core/rank/rank_text.h"
#include "core/mesh/roles.h"

namespace planck::core {
namespace {

std::string step_pointer(int statement) {
  return statement < 0 ? "/rank_program" : "/rank_program/steps/" + std::to_string(statement);
}

// Column of byte `offset` of step `i`: the string's position, +1 for the opening quote. A
// string holding characters JSON must escape may be written with escapes, which would shift
// the offset, so it falls back to the string's start.
Diagnostic& invalid(Diagnostics& out, const Plan& plan, int statement, int offset, std::string message,
                    std::string hint) {
  Diagnostic& d = out.add("rank-program-invalid", Severity::kError, std::move(message), step_pointer(statement),
                          std::move(hint));
  const SourcePos pos = plan.position(d.pointer);
  d.line = pos.line;
  d.column = pos.column;
  const auto& steps = plan.rank_program->steps;
  if (pos.line > 0 && statement >= 0 && statement < static_cast<int>(steps.size())) {
    const std::string& s = steps[statement];
    const bool plain = std::none_of(s.begin(), s.end(), [](char c) {
      const auto b = static_cast<unsigned char>(c);
      return b < 0x20 || b >= 0x7f || c == '"' || c == '\\';
    });
    if (plain) d.column = pos.column + 1 + offset;
  }
  return d;
}

struct Output {
  std::string prefix;
  std::vector<std::string> dims;
  std::string pointer;
};

// The outputs to check, or false after reporting a malformed `outputs` entry.
bool resolve_outputs(const Plan& plan, const Mesh& mesh, const RankProgram& program, Diagnostics& out,
                     std::vector<Output>& outputs) {
  const auto& spec = *plan.rank_program;
  if (!spec.has_outputs) {
    outputs.push_back(Output{"dp", data_rank_dims(mesh), "/rank_program"});
    return true;
  }
  for (const auto& [prefix, dims] : spec.outputs) {
    const std::string ptr = "/rank_program/outputs/" + json_pointer_escape(prefix);
    for (std::size_t i = 0; i < dims.size(); ++i) {
      if (is_known_dim(dims[i]) && std::count(dims.begin(), dims.end(), dims[i]) == 1) continue;
      std::string msg = is_known_dim(dims[i]) ? "dim '" + dims[i] + "' is listed twice for output '" + prefix + "'"
                                              : "unknown dim '" + dims[i] + "' in outputs of '" + prefix + "'";
      out.add("rank-program-invalid", Severity::kError, msg, ptr + "/" + std::to_string(i),
              "known dims: pp, dp_replicate, dp_shard, dp, cp, tp, ep");
      return false;
    }
    if (program.last_assignment(prefix + "_rank") < 0) {
      out.add("rank-program-invalid", Severity::kError,
              "outputs names '" + prefix + "' but no step assigns " + prefix + "_rank", ptr,
              "add a step '" + prefix + "_rank = ...' or remove the entry");
      return false;
    }
    outputs.push_back(Output{prefix, dims, ptr});
  }
  return true;
}

void check_output(const CheckContext& ctx, const RankProgram& program, const RankSpace& space,
                  const std::vector<NodeFacts>& facts, const RankDeps& deps, const Output& o, Diagnostics& out) {
  const RankText text{space, o.prefix, o.dims};
  const int rank_stmt = program.last_assignment(o.prefix + "_rank");
  const int degree_stmt = program.last_assignment(o.prefix + "_degree");
  const int rank_node = program.final_node(o.prefix + "_rank");
  const int degree_node = program.final_node(o.prefix + "_degree");
  if (rank_node < 0 && degree_node < 0) return;
  std::vector<int> dims;
  for (const auto& name : o.dims)
    if (const int d = space.index_of(name); d >= 0) dims.push_back(d);
  std::sort(dims.begin(), dims.end());
  const OutputVerdict v = analyze_output(program, space, facts, deps, rank_node, degree_node, dims);
  text.report(v, step_pointer(rank_stmt), step_pointer(degree_stmt), out);
  if (has_failure(v) || v.undecided || rank_node < 0) return;

  const SweepResult sweep = check_every_size(program, space, rank_node, degree_node, o.dims);
  if (sweep.failing_space) {
    text.report_latent(sweep, step_pointer(rank_stmt), out);
  } else if (sweep.undecided) {
    out.add("rank-undecided", Severity::kWarning,
            o.prefix + "_rank is right on this mesh, but whether it is right for other sizes is undecided: " +
                *sweep.undecided,
            step_pointer(rank_stmt), text.fix_hint());
  } else if (!sweep.proved) {
    out.add("rank-bounded", Severity::kNote,
            o.prefix + "_rank is right for every mesh with " + text.dim_list(sweep.swept) + " each from 1 to " +
                std::to_string(kSweepMaxSize) + " (" + std::to_string(sweep.meshes + 1) +
                " meshes, checked exactly); beyond that bound it is not proved: the symbolic proof covers "
                "arithmetic affine in the coordinates with the sizes as symbols, and this program leaves it "
                "(//, %, min, max, node or local)",
            step_pointer(rank_stmt), text.fix_hint());
  }
  (void)ctx;
}

void run(const CheckContext& ctx, Diagnostics& out) {
  if (!ctx.plan.rank_program) return;
  const auto& spec = *ctx.plan.rank_program;
  const RankParseResult parsed = parse_rank_program(spec.steps);
  if (parsed.error) {
    invalid(out, ctx.plan, parsed.error->statement, parsed.error->offset,
            "step " + std::to_string(parsed.error->statement) + " '" + spec.steps[parsed.error->statement] +
                "': " + parsed.error->message,
            "steps are 'name = expr' over integers, earlier names, <dim>.rank, <dim>.size, world.rank, "
            "world.size, node.rank, local.rank, local.size, + - * / // % ( ), min(a, b), max(a, b)");
    return;
  }
  if (!ctx.mesh) return;  // parse errors are reported even when the mesh is invalid; the rest needs it
  const RankProgram& program = *parsed.program;
  const Mesh& mesh = *ctx.mesh;
  const auto space = RankSpace::make(mesh.dims(), mesh.sizes(), ctx.plan.cluster.gpus_per_node);
  if (!space) return;  // an invalid mesh is reported by the mesh check
  std::vector<Output> outputs;
  if (!resolve_outputs(ctx.plan, mesh, program, out, outputs)) return;

  const auto facts = node_facts(program, *space);
  const auto deps = rank_deps(program, *space);
  std::vector<int> all(program.nodes.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  const ValidityResult valid = check_validity(program, *space, facts, deps, all);
  if (valid.fault) {
    const RankNode& n = program.nodes[valid.fault->node];
    const bool div0 = valid.fault->kind == EvalFault::kDivByZero;
    Diagnostic& d = invalid(out, ctx.plan, n.statement, n.offset,
                            "step " + std::to_string(n.statement) + " '" + spec.steps[n.statement] + "' " +
                                (div0 ? "divides by zero" : "overflows 64-bit integers") + " at rank " +
                                std::to_string(valid.fault->rank) + " (" + space->describe(valid.fault->rank) + ")",
                            div0 ? "guard the divisor (e.g. max(x, 1)) or divide by a size, never a rank"
                                 : "the values are too large for 64-bit integers; check the arithmetic");
    d.witness = RankText{*space, "", {}}.witness({valid.fault->rank}, {});
    return;
  }
  if (valid.undecided) {
    out.add("rank-undecided", Severity::kWarning,
            "could not decide whether the rank program divides by zero or overflows: " + *valid.undecided,
            "/rank_program", "");
  }
  for (const auto& o : outputs) check_output(ctx, program, *space, facts, deps, o, out);
}

}  // namespace

void add_rank_checks(CheckRegistry& registry) {
  Check c;
  c.name = "rank-program";
  c.needs_mesh = false;  // runs the parser without a mesh, the rules only with one
  c.rules = {
      {"rank-program-invalid", Severity::kError, "the rank program does not parse, names something undefined, divides by zero or overflows"},
      {"rank-out-of-range", Severity::kError, "some rank gets <prefix>_rank outside [0, <prefix>_degree)", {kInputRankProgram}},
      {"rank-collision", Severity::kError, "two data-parallel coordinates get the same <prefix>_rank (duplicated data)", {kInputRankProgram}},
      {"rank-gap", Severity::kError, "some <prefix>_rank in [0, <prefix>_degree) is given to no rank (skipped data)", {kInputRankProgram}},
      {"rank-depends-on-nondp", Severity::kError, "<prefix>_rank differs between ranks of one group of a dim outside the output (tp, cp, pp, ep)", {kInputRankProgram}},
      {"rank-degree-mismatch", Severity::kError, "<prefix>_degree differs from the product of the output's dims", {kInputRankProgram}},
      {"rank-latent", Severity::kWarning, "right for this mesh only by coincidence: wrong for other sizes", {kInputRankProgram}},
      {"rank-undecided", Severity::kWarning, "a question the exact analysis could not answer within its budget", {kInputRankProgram}},
      {"rank-bounded", Severity::kNote, "right for every mesh with the involved dims in 1..16, not proved beyond", {kInputRankProgram}},
  };
  c.run = run;
  registry.add(std::move(c));
}

}  // namespace planck::core
