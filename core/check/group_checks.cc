// Declared communicators (plan.groups) against the mesh, the HSDP shape, and placement.

#include <algorithm>

#include "core/base/str_cat.h"
#include "core/base/format.h"
#include "core/check/checks.h"
#include "core/mesh/group_text.h"
#include "core/mesh/placement.h"
#include "core/plan/plan_load.h"
#include "core/mesh/roles.h"

namespace planck::core {
namespace {

std::string dims_text(const std::vector<std::string>& dims) { return dims.empty() ? "(no dims)" : join(dims, " x "); }

Diagnostic make(const char* rule, Severity sev, std::string message, std::string pointer, std::string role,
                std::string hint = {}) {
  Diagnostic d;
  d.rule = rule;
  d.severity = sev;
  d.message = std::move(message);
  d.pointer = std::move(pointer);
  d.role = std::move(role);
  d.hint = std::move(hint);
  return d;
}

Witness witness_of(const Mesh& mesh, const std::vector<std::int64_t>& ranks) {
  Witness w;
  for (std::int64_t r : ranks) {
    w.ranks.push_back(r);
    Coord c;
    for (int d = 0; d < mesh.ndims(); ++d) c.emplace_back(mesh.dims()[d], mesh.coord(r, d));
    w.coords.push_back(std::move(c));
  }
  return w;
}

// The dims a groups key stands for, and the role it is (role name, or the key itself).
struct KeyDims {
  std::vector<std::string> dims;
  std::string role;
  bool ok = false;
};

KeyDims resolve_key(const Plan& plan, const Mesh& mesh, const std::string& key, Diagnostics& out) {
  KeyDims k;
  const auto& roles = role_names();
  if (std::find(roles.begin(), roles.end(), key) != roles.end()) {
    auto dims = role_dims(plan, mesh, key);
    if (!dims) {
      out.add(make("groups-mismatch", Severity::kError,
                   "groups declared for role '" + key + "', but data_parallel " +
                       to_string(effective_data_parallel(plan, mesh)) + " on " + mesh.to_string() +
                       " has no such role",
                   "/groups/" + json_pointer_escape(key), key,
                   "declare groups only for roles the strategy has (docs/plan-format.md role table), or key them by dims "
                   "such as \"dp_shard,cp\""));
      return k;
    }
    k.dims = *dims;
    k.role = key;
    k.ok = true;
    return k;
  }
  auto dims = resolve_dim_spec(mesh, key);
  if (!dims) {
    std::string dym = did_you_mean(key, roles);
    Diagnostic d = make("plan-schema", Severity::kError,
                        "unknown groups key '" + key + "': " + dims.message() + (dym.empty() ? "" : "; " + dym),
                        "/groups/" + json_pointer_escape(key), "",
                        "key groups by role (fsdp, replicate, dp, tp, pp, cp, ep) or by dims (\"dp_shard,cp\")");
    SourcePos pos = plan.doc.key_position(d.pointer);
    d.line = pos.line;
    d.column = pos.column;
    out.add(std::move(d));
    return k;
  }
  k.dims = *dims;
  k.role = key;
  k.ok = true;
  return k;
}

// Whether every declared group is exactly one group of `expected` (sizes already equal).
bool same_partition(const std::vector<std::vector<std::int64_t>>& declared, const GroupSet& expected,
                    std::size_t* first_bad) {
  for (std::size_t i = 0; i < declared.size(); ++i) {
    const auto& g = declared[i];
    if (static_cast<std::int64_t>(g.size()) != expected.group_size()) {
      *first_bad = i;
      return false;
    }
    if (g.empty()) continue;
    std::int64_t grp = expected.group_of(g[0]);
    for (std::int64_t r : g) {
      if (expected.group_of(r) != grp) {
        *first_bad = i;
        return false;
      }
    }
  }
  return true;
}

void check_declared(const CheckContext& ctx, const DeclaredGroups& decl, Diagnostics& out) {
  const Mesh& mesh = *ctx.mesh;
  const Plan& plan = ctx.plan;
  KeyDims k = resolve_key(plan, mesh, decl.key, out);
  if (!k.ok) return;
  const std::string base = "/groups/" + json_pointer_escape(decl.key);
  const GroupSet expected = mesh.groups(k.dims);
  const std::int64_t world = mesh.world();
  const std::string what = "'" + decl.key + "' group";

  // Overlap and coverage in one pass over a rank -> group table.
  std::vector<std::int32_t> owner(static_cast<std::size_t>(world), -1);
  bool structural = false;
  for (std::size_t gi = 0; gi < decl.groups.size(); ++gi) {
    for (std::size_t k2 = 0; k2 < decl.groups[gi].size(); ++k2) {
      std::int64_t r = decl.groups[gi][k2];
      std::string ptr = base + "/" + std::to_string(gi) + "/" + std::to_string(k2);
      if (r >= world) {
        out.add(make("group-coverage", Severity::kError,
                     "rank " + std::to_string(r) + " in " + what + " " + std::to_string(gi) + " is outside the world [0, " +
                         std::to_string(world) + ")",
                     ptr, k.role, "ranks run from 0 to nodes x gpus_per_node - 1"));
        return;
      }
      auto& o = owner[static_cast<std::size_t>(r)];
      if (o >= 0) {
        Diagnostic d = make("group-overlap", Severity::kError,
                            "rank " + std::to_string(r) + " " + coord_text(mesh, r) + " is in " + what + "s " +
                                std::to_string(o) + " and " + std::to_string(gi) + " (" +
                                rank_list_text(decl.groups[static_cast<std::size_t>(o)]) + " and " +
                                rank_list_text(decl.groups[gi]) + ")",
                            ptr, k.role, "every rank belongs to exactly one group of a role");
        d.witness = witness_of(mesh, {r});
        out.add(std::move(d));
        structural = true;
        break;
      }
      o = static_cast<std::int32_t>(gi);
    }
    if (structural) break;
  }
  if (!structural) {
    std::int64_t missing = 0, first = -1;
    for (std::int64_t r = 0; r < world; ++r) {
      if (owner[static_cast<std::size_t>(r)] < 0) {
        if (first < 0) first = r;
        ++missing;
      }
    }
    if (first >= 0) {
      Diagnostic d = make("group-coverage", Severity::kError,
                          "rank " + std::to_string(first) + " " + coord_text(mesh, first) + " is in no " + what +
                              " (" + std::to_string(missing) + " of " + std::to_string(world) + " ranks are missing)",
                          base, k.role, "the groups of a role must cover every rank of the world");
      d.witness = witness_of(mesh, {first});
      out.add(std::move(d));
      structural = true;
    }
  }

  // HSDP whose sharding group is the flattened replicate x shard group: it runs as FSDP.
  const bool hsdp = effective_data_parallel(plan, mesh) == DataParallel::kHsdp;
  if (hsdp && k.role == "fsdp" && !structural) {
    auto dp_dims = role_dims(plan, mesh, "dp");
    auto repl = role_dims(plan, mesh, "replicate");
    auto shard = role_dims(plan, mesh, "fsdp");
    if (dp_dims && repl && shard) {
      const GroupSet flat = mesh.groups(*dp_dims);
      std::size_t bad = 0;
      if (mesh.groups(*repl).group_size() > 1 && flat.group_size() != expected.group_size() &&
          same_partition(decl.groups, flat, &bad)) {
        Diagnostic d = make("hsdp-flattened", Severity::kError,
                            "HSDP declared, but the declared fsdp groups are the flattened " + dims_text(*dp_dims) +
                                " groups (" + group_set_text(flat) + "): parameters are sharded over " +
                                std::to_string(flat.group_size()) + " ranks, so this runs as FSDP. Expected " +
                                group_set_text(expected) + " replicated across " + group_set_text(mesh.groups(*repl)),
                            base, "fsdp",
                            "hand fully_shard the 2-D (" + join(*repl, ", ") + ", " + join(*shard, ", ") +
                                ") mesh, not the flattened dp mesh (torchtitan #711, fixed in #713)");
        d.witness = witness_of(mesh, flat.members(0).size() > 64 ? std::vector<std::int64_t>{flat.member(0, 0)}
                                                                  : flat.members(0));
        out.add(std::move(d));
        return;
      }
    }
  }
  if (structural) return;

  for (std::size_t gi = 0; gi < decl.groups.size(); ++gi) {
    if (static_cast<std::int64_t>(decl.groups[gi].size()) != expected.group_size()) {
      Diagnostic d = make("group-size", Severity::kError,
                          what + " " + std::to_string(gi) + " " + rank_list_text(decl.groups[gi]) + " has " +
                              std::to_string(decl.groups[gi].size()) + " ranks; the mesh's " + dims_text(k.dims) +
                              " groups have " + std::to_string(expected.group_size()),
                          base + "/" + std::to_string(gi), k.role,
                          "expected " + group_set_text(expected));
      d.witness = witness_of(mesh, decl.groups[gi].size() > 64 ? std::vector<std::int64_t>{decl.groups[gi][0]}
                                                               : decl.groups[gi]);
      out.add(std::move(d));
      return;
    }
  }
  std::size_t bad = 0;
  if (!same_partition(decl.groups, expected, &bad)) {
    const auto& g = decl.groups[bad];
    std::int64_t want = expected.group_of(g[0]);
    Diagnostic d = make("groups-mismatch", Severity::kError,
                        what + " " + std::to_string(bad) + " " + rank_list_text(g) + " is not a " + dims_text(k.dims) +
                            " group of " + mesh.to_string() + ": rank " + std::to_string(g[0]) + " belongs with " +
                            rank_list_text(expected.members(want)),
                        base + "/" + std::to_string(bad), k.role, "expected " + group_set_text(expected));
    d.witness = witness_of(mesh, {g[0]});
    out.add(std::move(d));
  }
}

void check_hsdp_shape(const CheckContext& ctx, Diagnostics& out) {
  const Mesh& mesh = *ctx.mesh;
  const Plan& plan = ctx.plan;
  if (effective_data_parallel(plan, mesh) != DataParallel::kHsdp) return;
  auto repl = role_dims(plan, mesh, "replicate");
  auto shard = role_dims(plan, mesh, "fsdp");
  if (!repl || !shard) return;
  const GroupSet rg = mesh.groups(*repl), sg = mesh.groups(*shard);
  // fsdp_dims that include a replicate dim: the sharding mesh is flattened (torchtitan #711).
  std::vector<std::string> shared;
  for (const auto& d : *shard) {
    if (std::find(repl->begin(), repl->end(), d) != repl->end() && mesh.size(d) > 1) shared.push_back(d);
  }
  if (!shared.empty()) {
    std::vector<std::string> proper;
    for (const auto& d : *shard) {
      if (std::find(repl->begin(), repl->end(), d) == repl->end()) proper.push_back(d);
    }
    const GroupSet want = mesh.groups(proper);
    Diagnostic d = make("hsdp-flattened", Severity::kError,
                        "HSDP declared, but fsdp_dims [" + join(*shard, ", ") + "] include the replicate dim(s) [" +
                            join(shared, ", ") + "]: the sharding group is the flattened " + dims_text(*shard) + " group (" +
                            group_set_text(sg) + "), so this runs as FSDP over " + std::to_string(sg.group_size()) +
                            " ranks. Expected " + group_set_text(want) + " replicated across " + group_set_text(rg),
                        plan.parallelism.fsdp_dims ? "/parallelism/fsdp_dims" : "/parallelism", "fsdp",
                        "set fsdp_dims to [" + join(proper, ", ") + "] so fully_shard gets the 2-D (" + join(*repl, ", ") + ", " +
                            join(proper, ", ") + ") mesh (torchtitan #711, fixed in #713)");
    d.witness = witness_of(mesh, sg.group_size() > 64 ? std::vector<std::int64_t>{0} : sg.members(0));
    out.add(std::move(d));
    return;
  }
  if (rg.group_size() == 1 || sg.group_size() == 1) {
    const bool no_repl = rg.group_size() == 1;
    out.add(make("hsdp-degenerate", Severity::kWarning,
                 std::string("HSDP declared with ") + (no_repl ? "replicate" : "shard") + " size 1 (" +
                     dims_text(no_repl ? *repl : *shard) + " on " + mesh.to_string() + "): it behaves as " +
                     (no_repl ? "FSDP" : "DDP"),
                 plan.parallelism.data_parallel ? "/parallelism/data_parallel" : "/mesh/shape", "",
                 no_repl ? "use data_parallel \"fsdp\", or give dp_replicate a size > 1"
                         : "use data_parallel \"ddp\", or give dp_shard a size > 1"));
  }
}

// The plan's dims in that order (stable, outermost first): the order the hints propose, under
// which every group of a higher-priority dim stays inside a node whenever it can.
std::vector<std::string> proposed_order(const Mesh& mesh) {
  std::vector<std::string> dims = mesh.dims();
  std::stable_sort(dims.begin(), dims.end(), [](const std::string& a, const std::string& b) {
    return placement_priority(a) < placement_priority(b);
  });
  return dims;
}

std::string order_hint(const Mesh& mesh) {
  return str_cat("order mesh.dims as [", join(proposed_order(mesh), ", "),
                 "] (outermost first: tp innermost, then cp/ep, then the sharding dims, then dp_replicate and pp), "
                 "so each group stays in a node whenever the dims placed inside it leave room");
}

void check_placement(const CheckContext& ctx, Diagnostics& out) {
  const Mesh& mesh = *ctx.mesh;
  const Plan& plan = ctx.plan;
  const std::int64_t gpn = link_domain(plan.cluster);
  const std::string node = link_domain_word(plan.cluster);
  if (auto shard = role_dims(plan, mesh, "fsdp")) {
    const GroupSet sg = mesh.groups(*shard);
    const std::int64_t inner = ranks_placed_inside(mesh, *shard);
    if (crossing_avoidable(mesh, *shard, gpn) && sg.max_nodes_spanned(gpn) > 1) {
      std::int64_t g = 0;
      while (g < sg.num_groups() && sg.nodes_spanned(g, gpn) == 1) ++g;
      auto members = sg.members(g);
      std::string msg = str_cat("fsdp group ", rank_list_text(members), " (", dims_text(*shard), ", ",
                                std::to_string(sg.group_size()), " ranks) spans ",
                                std::to_string(sg.nodes_spanned(g, gpn)), " ", node, "s although it fits in one ", node, " of ",
                                std::to_string(gpn), " GPUs");
      if (inner > 1) msg += str_cat(" beside the ", std::to_string(inner), " ranks of the dims placed inside it");
      msg += ": parameter all-gathers cross the network";
      Diagnostic d = make("shard-crosses-node", Severity::kWarning, msg, "/mesh/dims", "fsdp", order_hint(mesh));
      d.witness = witness_of(mesh, members);
      out.add(std::move(d));
    }
  }
  if (mesh.size("tp") > 1) {
    const GroupSet tg = mesh.groups({"tp"});
    if (tg.max_nodes_spanned(gpn) > 1) {
      std::int64_t g = 0;
      while (g < tg.num_groups() && tg.nodes_spanned(g, gpn) == 1) ++g;
      auto members = tg.members(g);
      const std::string msg = str_cat("tp group ", rank_list_text(members), " (tp=", std::to_string(mesh.size("tp")),
                                      ") spans ", std::to_string(tg.nodes_spanned(g, gpn)), " ", node, "s of ",
                                      std::to_string(gpn),
                                      " GPUs: every layer's tensor-parallel collectives cross the network");
      Diagnostic d = make("tp-crosses-node", Severity::kWarning, msg,
                          "/mesh/dims/" + std::to_string(mesh.index_of("tp")), "tp",
                          tg.group_size() <= gpn && gpn % tg.group_size() == 0
                              ? order_hint(mesh)
                              : str_cat("use a tp dividing gpus_per_node (", std::to_string(gpn), ")"));
      d.witness = witness_of(mesh, members);
      out.add(std::move(d));
    }
  }
}

void check_dim_lists(const CheckContext& ctx, Diagnostics& out) {
  const Plan& plan = ctx.plan;
  auto check = [&](const std::optional<std::vector<std::string>>& dims, const std::string& ptr) {
    if (!dims) return;
    for (std::size_t i = 0; i < dims->size(); ++i) {
      const std::string& name = (*dims)[i];
      if (is_known_dim(name)) continue;
      std::string dym = did_you_mean(name, known_dims());
      Diagnostic d = make("plan-schema", Severity::kError,
                          "'" + ptr + "' names unknown dim '" + name + "'" + (dym.empty() ? "" : "; " + dym),
                          ptr + "/" + std::to_string(i), "", "known dims: pp, dp_replicate, dp_shard, dp, cp, tp, ep");
      out.add(std::move(d));
    }
  };
  check(plan.parallelism.fsdp_dims, "/parallelism/fsdp_dims");
  check(plan.parallelism.replicate_dims, "/parallelism/replicate_dims");
}

}  // namespace

void add_group_checks(CheckRegistry& registry) {
  Check c;
  c.name = "groups";
  c.rules = {
      {"group-overlap", Severity::kError, "a rank in two groups of one role"},
      {"group-coverage", Severity::kError, "a rank in no group of a declared role"},
      {"group-size", Severity::kError, "a group of a role has the wrong size"},
      {"groups-mismatch", Severity::kError, "declared/observed groups of a role differ from the mesh's"},
      {"hsdp-flattened", Severity::kError, "HSDP declared, but the sharding group is the flattened replicate x shard group"},
      {"hsdp-degenerate", Severity::kWarning, "HSDP declared with replicate size 1 or shard size 1"},
      {"shard-crosses-node", Severity::kWarning, "an fsdp group spans nodes although it fits in one"},
      {"tp-crosses-node", Severity::kWarning, "a TP group spans nodes"},
  };
  c.run = [](const CheckContext& ctx, Diagnostics& out) {
    check_dim_lists(ctx, out);
    check_hsdp_shape(ctx, out);
    for (const auto& decl : ctx.plan.groups) check_declared(ctx, decl, out);
    check_placement(ctx, out);
  };
  registry.add(std::move(c));
}

}  // namespace planck::core
