// The observed rules (docs/verify.md): groups-mismatch, hsdp-flattened, placement-mismatch,
// observed-partial, each on the smallest observation that fires exactly it.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/mesh/plan_mesh.h"
#include "core/check/checks.h"
#include "io/nccl_log.h"
#include "io/observed_io.h"
#include "core/check/observed_checks.h"
#include "core/plan/plan_load.h"
#include "core/plan/presets.h"

using namespace planck::core;
using planck::io::parse_observed_json;
using planck::io::read_observed_file;

namespace {

std::string data(const std::string& rel) { return std::string(PLANCK_OBSERVED_DATA) + "/" + rel; }

std::string plan_text(int nodes, int gpn, const std::string& dims, const std::string& shape, const std::string& extra = "") {
  return R"({"format": "planck/1", "cluster": {"nodes": )" + std::to_string(nodes) + R"(, "gpus_per_node": )" +
         std::to_string(gpn) + R"(}, "mesh": {"dims": )" + dims + R"(, "shape": )" + shape + "}" + extra + "}";
}

const std::string kTitan = plan_text(2, 8, R"(["dp_replicate", "dp_shard"])", "[2, 8]",
                                     R"(, "parallelism": {"data_parallel": "hsdp"}, "model": "llama3-8b",
                                        "training": {"global_batch": 16, "micro_batch": 1, "seq_len": 8192})");
const std::string kSynth = plan_text(2, 4, R"(["dp_replicate", "dp_shard", "tp"])", "[2, 2, 2]",
                                     R"(, "parallelism": {"data_parallel": "hsdp"})");
const std::string kFr = plan_text(2, 4, R"(["dp_shard", "tp"])", "[4, 2]");

Diagnostics verify(const std::string& plan_json, const std::vector<Observed>& obs) {
  LoadedPlan lp = load_plan_text(plan_json, "plan.json");
  REQUIRE_MESSAGE(lp.plan.has_value(), plan_json);
  auto mesh = plan_mesh(*lp.plan, nullptr);
  REQUIRE(mesh.has_value());
  CheckRegistry reg;
  add_observed_checks(reg);
  CheckContext ctx{*lp.plan, &*mesh, &obs};
  return run_checks(reg, ctx);
}

Observed load(const std::string& path) {
  auto o = read_observed_file(path);
  REQUIRE_MESSAGE(o.is_ok(), (o.is_ok() ? "" : o.message()));
  return *o;
}

Observed json(const std::string& text) {
  auto o = parse_observed_json(text, "obs.json");
  REQUIRE_MESSAGE(o.is_ok(), (o.is_ok() ? "" : o.message()));
  return *o;
}

std::vector<std::string> rules(const Diagnostics& d) {
  std::vector<std::string> out;
  for (const auto& x : d.items()) out.push_back(x.rule);
  return out;
}

std::int64_t value(const Diagnostic& d, const std::string& name) {
  for (const auto& [k, v] : d.witness->values) {
    if (k == name) return v;
  }
  FAIL("no witness value " << name);
  return -1;
}

}  // namespace

TEST_CASE("observed_check_synth_logs_of_every_generation_are_clean") {
  for (const char* gen : {"2.8", "2.16", "2.18", "2.21", "2.23", "2.26", "2.30", "master"}) {
    CAPTURE(gen);
    auto d = verify(kSynth, {load(data(std::string("synth/nccl-") + gen + ".log"))});
    CHECK(rules(d).empty());
  }
}

TEST_CASE("observed_check_torchtitan_flattened_log_is_hsdp_flattened") {
  auto d = verify(kTitan, {load(data("torchtitan/hsdp_flattened.log"))});
  REQUIRE(rules(d) == std::vector<std::string>{"hsdp-flattened"});
  const Diagnostic& x = d.items()[0];
  CHECK(x.severity == Severity::kError);
  CHECK(x.role == "fsdp");
  CHECK(x.file == data("torchtitan/hsdp_flattened.log"));
  CHECK(x.line > 0);
  CHECK(x.message.find("FSDP over 16 ranks") != std::string::npos);
  CHECK(x.message.find("spanning 2 nodes") != std::string::npos);
  // Per step (1 micro-batch: 16 / (1 x 16)), ring over n = 16, each rank sending (n-1)/n of each
  // buffer, rounded up per call: every transformer block all-gathers its bf16 parameters in
  // forward and again in backward (reshard_after_forward) and reduce-scatters its fp32
  // gradients once; the root module (embedding, head, final norm) is gathered in forward only:
  // FSDP2 never reshards the root after forward (torch/distributed/fsdp/_fully_shard/
  // _fsdp_state.py, _lazy_init). Flattened FSDP runs no replicate all-reduce. Planned: dp_shard
  // stays inside a node; only the replicate all-reduce (2 ranks: 2(2-1)/2 = 1 x the buffer) of
  // each unit's fp32 gradient shard, ceil(4 P_unit / 8) bytes, crosses.
  const ModelSpec m = *model_preset("llama3-8b");
  const ParamCounts c = param_counts(m);
  const std::int64_t block = std::llround(c.per_layer_dense), root = std::llround(c.total) - m.layers * block;
  auto ring = [](std::int64_t n, std::int64_t bytes) { return (bytes * (n - 1) + n - 1) / n; };
  auto shard = [](std::int64_t bytes, std::int64_t n) { return (bytes + n - 1) / n; };
  const std::int64_t flattened =
      m.layers * (2 * ring(16, 2 * block) + ring(16, 4 * block)) + ring(16, 2 * root) + ring(16, 4 * root);
  const std::int64_t planned = m.layers * shard(4 * block, 8) + shard(4 * root, 8);
  CHECK(value(x, "cross_node_bytes_per_step") == flattened);
  CHECK(value(x, "planned_cross_node_bytes_per_step") == planned);
  CHECK(value(x, "extra_cross_node_bytes_per_step") == flattened - planned);
  CHECK(value(x, "fsdp_group_size") == 16);
}

TEST_CASE("observed_check_torchtitan_fixed_log_is_clean") {
  CHECK(rules(verify(kTitan, {load(data("torchtitan/hsdp_fixed.log"))})).empty());
}

TEST_CASE("observed_check_partial_logs") {
  // Only node 0's processes: the flattened communicator is still seen (8 of its 16 ranks).
  auto flat = verify(kTitan, {load(data("torchtitan/hsdp_flattened_node0.log"))});
  CHECK(rules(flat) == std::vector<std::string>{"observed-partial", "hsdp-flattened"});
  CHECK(flat.items()[0].message.find("covers 8 of 16 ranks") != std::string::npos);
  // The fixed run seen from node 0 only: replicate partners unseen, never a false error.
  auto fixed = verify(kTitan, {load(data("torchtitan/hsdp_fixed_node0.log"))});
  CHECK(rules(fixed) == std::vector<std::string>{"observed-partial"});
  CHECK(fixed.items()[0].severity == Severity::kNote);
}

TEST_CASE("observed_check_hsdp_flattened_sweep") {
  // mesh [dp_replicate=2, dp_shard=n] on 2 nodes x n GPUs: world + the flattened group (a second
  // world-sized communicator) fires for n > 1; adding the shard groups makes it clean; n = 1 is
  // hsdp-degenerate, never flattened.
  for (int n : {1, 2, 3, 7, 8, 16}) {
    CAPTURE(n);
    const std::string plan = plan_text(2, n, R"(["dp_replicate", "dp_shard"])", "[2, " + std::to_string(n) + "]",
                                       R"(, "parallelism": {"data_parallel": "hsdp"})");
    std::string all;
    for (int r = 0; r < 2 * n; ++r) all.append(r ? "," : "").append(std::to_string(r));  // not "," + s: GCC 12 -Wrestrict
    std::string groups = R"({"ranks": [)" + all + R"(], "name": "world"}, {"ranks": [)" + all + R"(], "id": "flat"})";
    auto d = verify(plan, {json(R"({"format": "planck-observed/1", "world": )" + std::to_string(2 * n) +
                                R"(, "ranks_seen": [)" + all + R"(], "groups": [)" + groups + "]}")});
    CHECK(rules(d) == (n > 1 ? std::vector<std::string>{"hsdp-flattened"} : std::vector<std::string>{}));
    for (int s = 0; s < 2; ++s) {
      std::string shard;
      for (int r = s * n; r < (s + 1) * n; ++r) shard.append(r > s * n ? "," : "").append(std::to_string(r));
      groups += R"(, {"ranks": [)" + shard + "]}";
    }
    d = verify(plan, {json(R"({"format": "planck-observed/1", "world": )" + std::to_string(2 * n) +
                           R"(, "ranks_seen": [)" + all + R"(], "groups": [)" + groups + "]}")});
    CHECK(rules(d).empty());
  }
}

TEST_CASE("observed_check_groups_mismatch_names_the_closest_role") {
  // [0,1,2,3,8,9] is no group of mesh[dp_replicate=2,dp_shard=8]. Jaccard: dp_shard [0..7] 4/10,
  // dp [0..15] 6/16, replicate [0,8] 2/6: closest is fsdp.
  auto d = verify(kTitan, {json(R"({"format": "planck-observed/1", "world": 16,
      "ranks_seen": [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15],
      "groups": [{"ranks": [0, 1, 2, 3, 8, 9], "id": "0xbad", "source": "run.log", "line": 77}]})")});
  REQUIRE(rules(d) == std::vector<std::string>{"groups-mismatch"});
  const auto& x = d.items()[0];
  CHECK(x.role == "fsdp");
  CHECK(x.file == "run.log");
  CHECK(x.line == 77);
  CHECK(x.message.find("[0..3,8,9]") != std::string::npos);
  CHECK(x.message.find("closest expected: fsdp (dims dp_shard) group [0..7], sharing 4") != std::string::npos);
}

TEST_CASE("observed_check_point_to_point_pairs") {
  // mesh [pp=4, dp=2]: ranks 0 and 2 are adjacent pipeline stages (pp stride 2), a send/recv pair
  // torch gives its own 2-rank communicator; 0 and 3 differ in pp and dp: no such pair.
  const std::string plan = plan_text(1, 8, R"(["pp", "dp"])", "[4, 2]");
  const std::string head = R"({"format": "planck-observed/1", "world": 8, "ranks_seen": [0,1,2,3,4,5,6,7], "groups": [)";
  CHECK(rules(verify(plan, {json(head + R"({"ranks": [0, 2]}]})")})).empty());
  CHECK(rules(verify(plan, {json(head + R"({"ranks": [0, 3]}]})")})) == std::vector<std::string>{"groups-mismatch"});
}

TEST_CASE("observed_check_partial_group_only_errs_when_impossible") {
  const std::string head = R"({"format": "planck-observed/1", "world": 16, "ranks_seen": [0, 3, 9], "groups": [)";
  // 0 and 3 may share an 8-rank dp_shard group: fine. 0 and 9 cannot: a true mismatch.
  CHECK(rules(verify(kTitan, {json(head + R"({"ranks": [0, 3], "size": 8}]})")}))
            == std::vector<std::string>{"observed-partial"});
  CHECK(rules(verify(kTitan, {json(head + R"({"ranks": [0, 9], "size": 8}]})")}))
            == std::vector<std::string>{"observed-partial", "groups-mismatch"});
}

TEST_CASE("observed_check_flight_recorder_dumps") {
  std::vector<Observed> all;
  for (int r = 0; r < 8; ++r) all.push_back(load(data("fr/pickle/rank_" + std::to_string(r))));
  CHECK(rules(verify(kFr, all)).empty());
  auto one = verify(kFr, {all[0]});
  REQUIRE(rules(one) == std::vector<std::string>{"observed-partial"});
  CHECK(one.items()[0].message.find("covers 1 of 8 ranks [0]") != std::string::npos);
  // tp groups built from the wrong dim order: 'mesh_tp' = [0,4] is a dp_shard-like group, legal
  // as a communicator, but not the plan's tp group.
  auto wrong = verify(kFr, {load(data("fr/wrong_tp_rank_0.json"))});
  REQUIRE(rules(wrong) == std::vector<std::string>{"observed-partial", "groups-mismatch"});
  CHECK(wrong.items()[1].role == "tp");
  CHECK(wrong.items()[1].message.find("'mesh_tp'") != std::string::npos);
  CHECK(wrong.items()[1].line > 0);
}

TEST_CASE("observed_check_placement") {
  const std::string head = R"({"format": "planck-observed/1", "world": 8, "ranks_seen": [0,1,2,3,4,5,6,7], "hosts": )";
  const std::string tail = R"(, "groups": [{"ranks": [0,1,2,3,4,5,6,7], "name": "world", "source": "run.log", "line": 3}]})";
  CHECK(rules(verify(kFr, {json(head + R"({"0":"a","1":"a","2":"a","3":"a","4":"b","5":"b","6":"b","7":"b"})" + tail)})).empty());
  // Round-robin launch: ranks alternate hosts, so plan node 0 (ranks 0-3) ran on two hosts.
  auto d = verify(kFr, {json(head + R"({"0":"a","1":"b","2":"a","3":"b","4":"a","5":"b","6":"a","7":"b"})" + tail)});
  REQUIRE(rules(d) == std::vector<std::string>{"placement-mismatch"});
  CHECK(d.items()[0].severity == Severity::kWarning);
  CHECK(d.items()[0].message.find("ranks 0 and 1 share plan node 0 but ran on hosts a and b") != std::string::npos);
  CHECK(d.items()[0].line == 3);
}

TEST_CASE("observed_check_world_size_differences") {
  // Bigger than the plan: error. Smaller (the 8-rank world of issue 1646 against 16): the world
  // communicator is not in the file, nothing can be placed: a note, no error.
  auto big = verify(kFr, {json(R"({"format": "planck-observed/1", "world": 16, "groups": [{"ranks": [0, 15], "size": 16}]})")});
  CHECK(rules(big) == std::vector<std::string>{"groups-mismatch"});
  auto small = verify(kTitan, {load(data("nccl-logs/nccl-issue-1646_v2.25.1_initrankconfig_complete_timings.log"))});
  CHECK(rules(small) == std::vector<std::string>{"observed-partial"});
  auto unplaced = verify(kTitan, {load(data("nccl-logs/torchtitan-issue-1570_rank-prefixed_nranks_nnodes.log"))});
  CHECK(rules(unplaced) == std::vector<std::string>{"observed-partial"});
  auto outside = verify(kFr, {json(R"({"format": "planck-observed/1", "groups": [{"ranks": [3, 9], "size": 2}]})")});
  CHECK(rules(outside) == std::vector<std::string>{"groups-mismatch"});
}

TEST_CASE("observed_check_real_legacy_log_against_its_cluster") {
  // Issue 629: 16 ranks on 2 hosts of 8 GPUs; ranks 2,4,5 on one host, 8-15 on the other.
  const std::string plan = plan_text(2, 8, R"(["dp"])", "[16]");
  auto d = verify(plan, {load(data("nccl-logs/nccl-issue-629_legacy_pre2.16_init_complete.log"))});
  CHECK(rules(d) == std::vector<std::string>{"observed-partial"});
  CHECK(d.items()[0].message.find("covers 8 of 16 ranks") != std::string::npos);
}

TEST_CASE("observed_check_stray_communicator_is_suspicious_not_the_world") {
  // issue 22: one stray init line claiming 2^31 - 1 ranks, pasted into the fixed torchtitan log
  // of 16 processes. Every process joins its world, so a communicator seen from 1 process cannot
  // be the world of a log where the 16-rank one is seen from all 16: it is noted, not adopted,
  // and the run is still checked (clean, as without the line).
  std::ifstream in(data("torchtitan/hsdp_fixed.log"), std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const int stray_line = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  text += "node-z:9999:9999 [0] NCCL INFO comm 0x77 rank 0 nranks 2147483647 cudaDev 0 busId 1a000 commId 0x99 - Init COMPLETE\n";
  auto o = planck::io::parse_nccl_log_text(text, "stray.log");
  REQUIRE(o.is_ok());
  CHECK(o->world == 16);
  for (const auto& g : o->groups) CHECK(g.size <= 16);
  REQUIRE(o->notes.size() == 1);
  CHECK(o->notes[0].line == stray_line);
  CHECK(o->notes[0].message.find("2147483647 ranks is seen from 1 of 17 processes") != std::string::npos);
  auto d = verify(kTitan, {*o});
  CHECK(rules(d) == std::vector<std::string>{"observed-suspicious"});
  CHECK(d.items()[0].severity == Severity::kNote);
  CHECK(d.items()[0].line == stray_line);
  // Written and read back as planck-observed/1, the note survives and the JSON stays readable.
  auto back = planck::io::parse_observed_json(planck::io::observed_to_json(*o), "stray.json");
  REQUIRE(back.is_ok());
  REQUIRE(back->notes.size() == 1);
  CHECK(back->notes[0].line == stray_line);
  CHECK(back->notes[0].source == "stray.log");
}
