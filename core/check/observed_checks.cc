#include "core/check/observed_checks.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/base/format.h"
#include "core/mesh/group_text.h"
#include "core/mesh/placement.h"
#include "core/observed/group_match.h"
#include "core/observed/observed_files.h"
#include "core/mesh/roles.h"
#include "core/schedule/step_bytes.h"

namespace planck::core {
namespace {

using observed::is_group_of;

std::string file_of(const Observed& o) { return o.sources.empty() ? "(observed)" : o.sources.front(); }
std::string where(const ObservedGroup& g) { return g.source + (g.line > 0 ? ":" + std::to_string(g.line) : ""); }

Diagnostic observed_diag(const char* rule, Severity sev, const std::string& file, int line, std::string message) {
  Diagnostic d;
  d.rule = rule;
  d.severity = sev;
  d.file = file;
  d.line = line;
  d.column = line > 0 ? 1 : 0;  // the evidence is a whole log line
  d.message = std::move(message);
  return d;
}

Witness ranks_witness(const std::vector<std::int64_t>& ranks) {
  Witness w;
  w.ranks.assign(ranks.begin(), ranks.begin() + static_cast<long>(std::min<std::size_t>(ranks.size(), 64)));
  return w;
}

// Where file-level findings point: the world communicator's line, in the file that holds it.
std::string file_of(const observed::ObservedFile& f) { return f.world ? f.world->source : file_of(*f.obs); }
int line_of(const observed::ObservedFile& f) { return f.world ? f.world->line : 0; }

// Files whose global ranks can be trusted against this mesh; the others get one diagnostic each.
std::vector<observed::ObservedFile> usable_files(const CheckContext& ctx, const Mesh& mesh, Diagnostics& out) {
  using observed::FileProblem;
  const std::int64_t W = mesh.world();
  std::vector<observed::ObservedFile> ok;
  for (const Observed& o : *ctx.observed) {
    const observed::ObservedFile f = observed::read_file_against(o, mesh);
    const int line = f.world ? f.world->line : 0;
    switch (f.problem) {
      case FileProblem::kNone: ok.push_back(f); break;
      case FileProblem::kWorldLarger: {
        Diagnostic d = observed_diag("groups-mismatch", Severity::kError, file_of(o), line,
                                     "the run's world communicator has " + std::to_string(*o.world) + " ranks but the plan's " +
                                         mesh.to_string() + " has " + std::to_string(W));
        d.pointer = "/mesh";
        d.hint = "observe the run this plan describes, or fix cluster.nodes, cluster.gpus_per_node and mesh.shape";
        out.add(std::move(d));
        break;
      }
      case FileProblem::kWorldSmaller:
        out.add(observed_diag("observed-partial", Severity::kNote, file_of(o), line,
                              "the largest communicator in " + file_of(o) + " has " + std::to_string(*o.world) +
                                  " ranks but the plan's world has " + std::to_string(W) +
                                  ": the world communicator's init lines are not in it, so global ranks are unknown and its " +
                                  std::to_string(o.groups.size()) + " communicators were not checked"));
        break;
      case FileProblem::kRankOutside: {
        const ObservedGroup& at = *f.outside_group;
        Diagnostic d = observed_diag("groups-mismatch", Severity::kError, at.source, at.line,
                                     "observed rank " + std::to_string(f.outside_rank) + " is outside the plan's " +
                                         std::to_string(W) + " ranks (" + mesh.to_string() + ")");
        d.pointer = "/mesh";
        d.witness = ranks_witness({f.outside_rank});
        out.add(std::move(d));
        break;
      }
      case FileProblem::kNoGlobalRanks:
        out.add(observed_diag("observed-partial", Severity::kNote, file_of(o), o.groups.empty() ? 0 : o.groups.front().line,
                              file_of(o) + " shows " + std::to_string(o.groups.size()) +
                                  " communicators but no global rank: the world communicator's init line of its processes is "
                                  "not in it, so nothing in it was checked"));
        break;
    }
  }
  return ok;
}

// What a reader did not take as evidence (a stray line, an implausible size) is said, never dropped silently.
void check_notes(const CheckContext& ctx, Diagnostics& out) {
  for (const Observed& o : *ctx.observed) {
    for (const ObservedNote& n : o.notes) {
      Diagnostic d = observed_diag("observed-suspicious", Severity::kNote, n.source, n.line, n.message);
      d.hint = "check that every observed file comes from the run this plan describes";
      out.add(std::move(d));
    }
  }
}

void check_partial(const std::vector<observed::ObservedFile>& files, const Mesh& mesh, Diagnostics& out) {
  std::set<std::int64_t> all;
  for (const auto& f : files) all.insert(f.obs->ranks_seen.begin(), f.obs->ranks_seen.end());
  const std::int64_t W = mesh.world();
  if (static_cast<std::int64_t>(all.size()) >= W) return;
  for (const auto& f : files) {
    const Observed& o = *f.obs;
    std::string msg = file_of(o) + " covers " + std::to_string(o.ranks_seen.size()) + " of " + std::to_string(W) +
                      " ranks " + rank_list_text(o.ranks_seen) + "; communicators were checked on the ranks seen only";
    if (files.size() > 1) msg += " (all observed files together: " + std::to_string(all.size()) + " of " + std::to_string(W) + ")";
    Diagnostic d = observed_diag("observed-partial", Severity::kNote, file_of(f), line_of(f), msg);
    d.witness = ranks_witness(o.ranks_seen);
    d.witness->values.emplace_back("ranks_seen", static_cast<std::int64_t>(o.ranks_seen.size()));
    d.witness->values.emplace_back("world", W);
    out.add(std::move(d));
  }
}

std::string group_text(const ObservedGroup& g) {
  std::string s = "observed communicator " + (g.name.empty() ? std::string() : "'" + g.name + "' ") + "of " +
                  std::to_string(g.size) + " ranks " + rank_list_text(g.ranks);
  if (!g.complete) s += " (" + std::to_string(g.ranks.size()) + " of " + std::to_string(g.size) + " members' global ranks known)";
  if (!g.id.empty() && g.id != g.name) s += " (id " + g.id + ")";
  return s + " at " + where(g);
}

// Each distinct group once, however many files (one flight-recorder dump per rank) repeat it.
std::vector<const ObservedGroup*> distinct_groups(const std::vector<observed::ObservedFile>& files) {
  std::set<std::string> keys;
  std::vector<const ObservedGroup*> out;
  for (const auto& f : files) {
    for (const auto& g : f.obs->groups) {
      if (g.ranks.empty()) continue;
      std::string k = g.name + "#" + std::to_string(g.size) + ":";
      for (auto r : g.ranks) k += std::to_string(r) + ",";
      if (keys.insert(k).second) out.push_back(&g);
    }
  }
  return out;
}

// ProcessGroupNCCL opens a 2-rank communicator per send/recv peer pair (pipeline stages, ring
// attention): two ranks that differ along one mesh dim only are such a pair, not a mismatch.
bool point_to_point(const Mesh& mesh, const ObservedGroup& g) {
  if (!g.complete || g.size != 2 || g.ranks.size() != 2) return false;
  int differ = 0;
  for (int d = 0; d < mesh.ndims(); ++d) differ += mesh.coord(g.ranks[0], d) != mesh.coord(g.ranks[1], d) ? 1 : 0;
  return differ == 1;
}

void check_groups(const CheckContext& ctx, const Mesh& mesh, const std::vector<observed::ObservedFile>& files, Diagnostics& out) {
  for (const ObservedGroup* g : distinct_groups(files)) {
    const auto named = observed::dims_from_name(mesh, g->name);
    if (!named.empty()) {
      if (is_group_of(mesh, *g, named)) continue;
      const GroupSet expected = mesh.groups(observed::nontrivial(mesh, named));
      const std::string key = expected.key().empty() ? "(no dims)" : expected.key();
      Diagnostic d = observed_diag("groups-mismatch", Severity::kError, g->source, g->line,
                                   group_text(*g) + " is named for dims " + key + ", whose groups in the plan are " +
                                       group_set_text(expected));
      d.role = observed::role_of_dims(ctx.plan, mesh, named);
      d.pointer = "/mesh";
      d.witness = ranks_witness(g->ranks);
      d.hint = "the run built its " + key + " groups from another mesh shape or dim order; compare init_device_mesh's "
               "mesh_shape/mesh_dim_names with the plan's mesh";
      out.add(std::move(d));
      continue;
    }
    if (!observed::matching_dims(mesh, *g).empty() || point_to_point(mesh, *g)) continue;
    const observed::Closest near = observed::closest_expected(ctx.plan, mesh, *g);
    std::string msg = group_text(*g) + " is not a group of any set of dims of the plan's " + mesh.to_string();
    if (!near.label.empty()) {
      msg += "; closest expected: " + near.label + " group " + rank_list_text(near.members) + ", sharing " +
             std::to_string(near.shared) + " of its ranks";
    }
    Diagnostic d = observed_diag("groups-mismatch", Severity::kError, g->source, g->line, msg);
    d.role = near.role;
    d.pointer = "/mesh";
    d.witness = ranks_witness(g->ranks);
    d.hint = "check the mesh shape and dim order the job used, or the rank lists it passed to new_group, against the plan";
    out.add(std::move(d));
  }
}

// Cross-node bytes per rank per step of the plan as intended and as the run did it: FSDP over
// `flat` (fsdp_dims = the flattened replicate x shard dims), both from the one lowering.
struct FlattenedCost {
  std::int64_t flattened_cross = 0, planned_cross = 0, micro_batches = 1;
  std::int64_t extra() const { return flattened_cross - planned_cross; }
};

Result<FlattenedCost> flattened_cost(const Plan& plan, const Mesh& mesh, const std::vector<std::string>& flat) {
  Plan as_run = plan;
  as_run.parallelism.data_parallel = DataParallel::kHsdp;
  as_run.parallelism.fsdp_dims = flat;
  auto planned = lower(plan, mesh);
  if (!planned) return planned.status();
  auto flattened = lower(as_run, mesh);
  if (!flattened) return flattened.status();
  const std::int64_t gpn = plan.cluster.gpus_per_node;
  FlattenedCost c;
  c.planned_cross = step_bytes(*planned, mesh, gpn).cross_node;
  c.flattened_cross = step_bytes(*flattened, mesh, gpn).cross_node;
  c.micro_batches = planned->micro_batches;
  return c;
}

void check_hsdp(const CheckContext& ctx, const Mesh& mesh, const std::vector<observed::ObservedFile>& files, Diagnostics& out) {
  if (effective_data_parallel(ctx.plan, mesh) != DataParallel::kHsdp) return;
  const auto shard_dims = role_dims(ctx.plan, mesh, "fsdp");
  const auto repl_dims = role_dims(ctx.plan, mesh, "replicate");
  if (!shard_dims || !repl_dims) return;
  const auto verdict = observed::flattened_hsdp(mesh, *shard_dims, *repl_dims, files);
  if (!verdict) return;
  const ObservedGroup* flattened = verdict->flattened;
  const auto& flat = verdict->flat;
  const auto& shard = verdict->shard;
  const auto& repl = verdict->replicate;
  const GroupSet fs = mesh.groups(flat), ss = mesh.groups(shard), rs = mesh.groups(repl);
  const std::int64_t n = fs.group_size(), gpn = ctx.plan.cluster.gpus_per_node;
  const std::int64_t nodes = placement_of(fs, gpn).nodes_spanned;
  std::string msg = "HSDP planned (replicate over " + rs.key() + " = " + std::to_string(rs.group_size()) + ", shard over " +
                    ss.key() + " = " + std::to_string(ss.group_size()) + "), but " + where(*flattened) +
                    " shows the flattened " + fs.key() + " communicator of " + std::to_string(n) + " ranks and no " +
                    ss.key() + " group of " + std::to_string(ss.group_size()) + " was observed: the run is FSDP over " +
                    std::to_string(n) + " ranks" + (nodes > 1 ? " spanning " + std::to_string(nodes) + " nodes" : "");
  Diagnostic d = observed_diag("hsdp-flattened", Severity::kError, flattened->source, flattened->line, "");
  d.witness = ranks_witness(flattened->ranks);
  d.witness->values.emplace_back("fsdp_group_size", n);
  d.witness->values.emplace_back("planned_shard_size", ss.group_size());
  if (const auto cost = flattened_cost(ctx.plan, mesh, flat)) {
    msg += ". Each optimizer step every rank now sends " + format_bytes(cost->flattened_cross) +
           " through collectives that cross nodes, against " + format_bytes(cost->planned_cross) +
           " with the planned groups (" + format_bytes(cost->extra()) + " more; the lowering of both layouts, " +
           std::to_string(cost->micro_batches) + (cost->micro_batches == 1 ? " micro-batch" : " micro-batches") + ")";
    d.witness->values.emplace_back("cross_node_bytes_per_step", cost->flattened_cross);
    d.witness->values.emplace_back("planned_cross_node_bytes_per_step", cost->planned_cross);
    d.witness->values.emplace_back("extra_cross_node_bytes_per_step", cost->extra());
  } else {
    msg += " (" + cost.message() + ", to see how many bytes per step now cross nodes)";
  }
  d.message = msg;
  d.role = "fsdp";
  d.pointer = ctx.plan.parallelism.present ? "/parallelism" : "/mesh";
  d.hint = "shard over the 2-D (" + rs.key() + ", " + ss.key() + ") mesh (torchtitan: fully_shard(model, mesh=world_mesh[(\"" +
           rs.key() + "\", \"" + ss.key() + "\")])), not over the flattened one";
  out.add(std::move(d));
}

void check_placement(const CheckContext& ctx, const std::vector<observed::ObservedFile>& files, Diagnostics& out) {
  const std::int64_t gpn = ctx.plan.cluster.gpus_per_node;
  if (gpn <= 0) return;
  for (const auto& f : files) {
    const Observed& o = *f.obs;
    std::map<std::string, std::int64_t> host_node, host_rank;  // first plan node / rank seen per host
    std::map<std::int64_t, std::pair<std::string, std::int64_t>> node_host;  // plan node -> (host, rank)
    std::string msg;
    std::vector<std::int64_t> pair;
    int conflicts = 0;
    for (const auto& [r, h] : o.hosts) {
      const std::int64_t node = r / gpn;
      auto [hn, fresh_h] = host_node.emplace(h, node);
      if (fresh_h) host_rank[h] = r;
      auto [nh, fresh_n] = node_host.emplace(node, std::make_pair(h, r));
      std::string this_one;
      if (!fresh_h && hn->second != node) {
        this_one = "ranks " + std::to_string(host_rank[h]) + " and " + std::to_string(r) + " ran on the same host " + h +
                   " but the plan puts them on nodes " + std::to_string(hn->second) + " and " + std::to_string(node);
        if (pair.empty()) pair = {host_rank[h], r};
      } else if (!fresh_n && nh->second.first != h) {
        this_one = "ranks " + std::to_string(nh->second.second) + " and " + std::to_string(r) + " share plan node " +
                   std::to_string(node) + " but ran on hosts " + nh->second.first + " and " + h;
        if (pair.empty()) pair = {nh->second.second, r};
      }
      if (!this_one.empty() && conflicts++ == 0) msg = this_one;
    }
    if (conflicts == 0) continue;
    Diagnostic d = observed_diag("placement-mismatch", Severity::kWarning, file_of(f), line_of(f),
                                 file_of(o) + ": " + msg + " (" + std::to_string(gpn) + " GPUs per node, ranks in blocks)" +
                                     (conflicts > 1 ? "; " + std::to_string(conflicts - 1) + " more ranks disagree" : ""));
    d.pointer = "/cluster";
    d.witness = ranks_witness(pair);
    d.hint = "launch ranks node by node (torchrun --node_rank, srun --distribution=block) or set cluster.gpus_per_node to "
             "what each host really ran";
    out.add(std::move(d));
  }
}

void run_observed(const CheckContext& ctx, Diagnostics& out) {
  if (!ctx.observed || ctx.observed->empty() || !ctx.mesh) return;
  const Mesh& mesh = *ctx.mesh;
  check_notes(ctx, out);
  const std::vector<observed::ObservedFile> files = usable_files(ctx, mesh, out);
  if (files.empty()) return;
  check_partial(files, mesh, out);
  check_groups(ctx, mesh, files, out);
  check_hsdp(ctx, mesh, files, out);
  check_placement(ctx, files, out);
}

}  // namespace

void add_observed_checks(CheckRegistry& registry) {
  Check c;
  c.name = "observed";
  c.rules = {
      {"groups-mismatch", Severity::kError, "observed communicators differ from the mesh's groups"},
      {"hsdp-flattened", Severity::kError, "HSDP planned, but the run sharded over the flattened replicate x shard group"},
      {"placement-mismatch", Severity::kWarning, "observed hosts place ranks differently from the plan's nodes"},
      {"observed-partial", Severity::kNote, "an observed file covers only some ranks"},
      {"observed-suspicious", Severity::kNote, "an observed line was not taken as evidence (implausible against the rest)"},
  };
  c.needs_mesh = true;
  c.run = run_observed;
  registry.add(std::move(c));
}

}  // namespace planck::core
