// One test per core rule on the smallest plan that breaks exactly that rule: rule name,
// severity, pointer, and a message naming the offending rank/dim and values.

#include <doctest/doctest.h>

#include "check_util.h"

using namespace planck;
using planck::test::check_text;
using planck::test::plan;

namespace {

// The diagnostics' rule names, to assert nothing else fired.
std::vector<std::string> rules(const test::Checked& c) {
  std::vector<std::string> out;
  for (const auto& d : c.loaded.diagnostics.items()) out.push_back(d.rule);
  for (const auto& d : c.diags.items()) out.push_back(d.rule);
  return out;
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("core_rule clean plans fire nothing") {
  CHECK(rules(check_text(plan(2, 8, R"(["dp_replicate","dp_shard"])", "[2,8]"))).empty());
  CHECK(rules(check_text(plan(1, 8, R"(["dp"])", "[-1]"))).empty());
}

TEST_CASE("core_rule mesh-world-mismatch: product != nodes x gpus_per_node, and -1 that does not divide") {
  auto c = check_text(plan(2, 8, R"(["dp_replicate","dp_shard"])", "[2,4]"));
  CHECK(rules(c) == std::vector<std::string>{"mesh-world-mismatch"});
  const auto* d = c.find("mesh-world-mismatch");
  CHECK(d->severity == core::Severity::kError);
  CHECK(d->pointer == "/mesh/shape");
  CHECK(has(d->message, "dp_replicate(2) x dp_shard(4) = 8 ranks, but the cluster has 16"));

  auto m = check_text(plan(2, 8, R"(["tp","dp_shard"])", "[3,-1]"));
  CHECK(rules(m) == std::vector<std::string>{"mesh-world-mismatch"});
  CHECK(m.find("mesh-world-mismatch")->pointer == "/mesh/shape/1");
  CHECK(has(m.find("mesh-world-mismatch")->message, "not divisible by the other dims' product 3"));
}

TEST_CASE("core_rule mesh-invalid-dim: zero, negative, two -1, unknown, duplicate, dp with dp_shard, overflow") {
  struct Case {
    std::string dims, shape, pointer, words;
  };
  const Case cases[] = {
      {R"(["dp","tp"])", "[0,8]", "/mesh/shape/0", "dim 'dp' has size 0"},
      {R"(["dp","tp"])", "[-4,2]", "/mesh/shape/0", "dim 'dp' has size -4"},
      {R"(["dp","tp"])", "[-1,-1]", "/mesh/shape/1", "another dim already uses -1"},
      {R"(["dp","tpx"])", "[4,2]", "/mesh/dims/1", "did you mean 'tp'"},
      {R"(["dp","dp"])", "[4,2]", "/mesh/dims/1", "appears twice"},
      {R"(["dp","dp_shard"])", "[4,2]", "/mesh/dims/0", "'dp' together with dp_replicate/dp_shard"},
      {R"(["dp","tp"])", "[4294967296,4294967296]", "/mesh/shape/0", "exceeds 2^31 - 1"},
      {R"(["dp","tp"])", "[9223372036854775807,2]", "/mesh/shape/0", "exceeds 2^31 - 1"},
  };
  for (const auto& k : cases) {
    CAPTURE(k.dims);
    CAPTURE(k.shape);
    auto c = check_text(plan(1, 8, k.dims, k.shape));
    REQUIRE(c.find("mesh-invalid-dim"));
    for (const auto& r : rules(c)) CHECK(r == "mesh-invalid-dim");
    const auto* d = c.find("mesh-invalid-dim");
    CHECK(d->pointer == k.pointer);
    CHECK(has(d->message, k.words));
    CHECK(d->line == 1);
  }
  // A world past 2^31 - 1 from the cluster itself.
  auto w = check_text(plan(65536, 65536, R"(["dp"])", "[-1]"));
  CHECK(rules(w) == std::vector<std::string>{"mesh-invalid-dim"});
}

TEST_CASE("core_rule group-overlap names the rank and both groups") {
  auto c = check_text(plan(1, 4, R"(["tp"])", "[4]", R"(, "groups": {"tp": [[0,1,2,3],[3,0,1,2]]})"));
  CHECK(rules(c) == std::vector<std::string>{"group-overlap"});
  const auto* d = c.find("group-overlap");
  CHECK(d->pointer == "/groups/tp/1/0");
  CHECK(has(d->message, "rank 3 (tp=3) is in 'tp' groups 0 and 1"));
  CHECK(d->witness->ranks == std::vector<std::int64_t>{3});
}

TEST_CASE("core_rule group-coverage names the first missing rank and how many") {
  auto c = check_text(plan(1, 4, R"(["dp","tp"])", "[2,2]", R"(, "groups": {"tp": [[0,1]]})"));
  CHECK(rules(c) == std::vector<std::string>{"group-coverage"});
  const auto* d = c.find("group-coverage");
  CHECK(d->pointer == "/groups/tp");
  CHECK(has(d->message, "rank 2 (dp=1, tp=0) is in no 'tp' group (2 of 4 ranks are missing)"));
  auto out = check_text(plan(1, 2, R"(["tp"])", "[2]", R"(, "groups": {"tp": [[0,5]]})"));
  CHECK(has(out.find("group-coverage")->message, "rank 5 in 'tp' group 0 is outside the world [0, 2)"));
}

TEST_CASE("core_rule group-size names the group, its size and the expected size") {
  auto c = check_text(plan(1, 4, R"(["dp","tp"])", "[2,2]", R"(, "groups": {"tp": [[0],[1,2,3]]})"));
  CHECK(rules(c) == std::vector<std::string>{"group-size"});
  const auto* d = c.find("group-size");
  CHECK(d->pointer == "/groups/tp/0");
  CHECK(has(d->message, "'tp' group 0 [0] has 1 ranks; the mesh's tp groups have 2"));
}

TEST_CASE("core_rule groups-mismatch names the group and where its rank belongs") {
  auto c = check_text(plan(1, 4, R"(["dp","tp"])", "[2,2]", R"(, "groups": {"tp": [[0,2],[1,3]]})"));
  CHECK(rules(c) == std::vector<std::string>{"groups-mismatch"});
  const auto* d = c.find("groups-mismatch");
  CHECK(d->pointer == "/groups/tp/0");
  CHECK(has(d->message, "rank 0 belongs with [0,1]"));
  // Keyed by dims, and a role the strategy does not have.
  auto k = check_text(plan(1, 4, R"(["dp","tp"])", "[2,2]", R"(, "groups": {"dp,tp": [[0,1,2,3]]})"));
  CHECK(rules(k).empty());
  auto r = check_text(plan(1, 4, R"(["dp","tp"])", "[2,2]", R"(, "groups": {"replicate": [[0,1,2,3]]})"));
  CHECK(rules(r) == std::vector<std::string>{"groups-mismatch"});
}

TEST_CASE("core_rule hsdp-flattened from fsdp_dims names the 16-rank group and the two 8-rank groups") {
  auto c = check_text(plan(2, 8, R"(["dp_replicate","dp_shard"])", "[2,8]",
                           R"(, "parallelism": {"data_parallel": "hsdp", "fsdp_dims": ["dp_replicate","dp_shard"]})"));
  CHECK(rules(c) == std::vector<std::string>{"hsdp-flattened"});
  const auto* d = c.find("hsdp-flattened");
  CHECK(d->severity == core::Severity::kError);
  CHECK(d->pointer == "/parallelism/fsdp_dims");
  CHECK(has(d->message, "1 group of 16: [0..15]"));
  CHECK(has(d->message, "runs as FSDP over 16 ranks"));
  CHECK(has(d->message, "2 groups of 8: [0..7], [8..15]"));
  CHECK(has(d->message, "8 groups of 2: [0,8], [1,9], [2,10], ..."));
}

TEST_CASE("core_rule hsdp-flattened from declared fsdp groups replaces group-size and groups-mismatch") {
  auto c = check_text(plan(2, 8, R"(["dp_replicate","dp_shard"])", "[2,8]",
                           R"(, "parallelism": {"data_parallel": "hsdp"}, "groups": {"fsdp": [[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]]})"));
  CHECK(rules(c) == std::vector<std::string>{"hsdp-flattened"});
  CHECK(c.find("hsdp-flattened")->pointer == "/groups/fsdp");
  auto ok = check_text(plan(2, 8, R"(["dp_replicate","dp_shard"])", "[2,8]",
                            R"(, "parallelism": {"data_parallel": "hsdp"}, "groups": {"fsdp": [[0,1,2,3,4,5,6,7],[8,9,10,11,12,13,14,15]], "replicate": [[0,8],[1,9],[2,10],[3,11],[4,12],[5,13],[6,14],[7,15]]})"));
  CHECK(rules(ok).empty());
}

TEST_CASE("core_rule hsdp-degenerate warns for replicate size 1 and shard size 1") {
  auto c = check_text(plan(1, 8, R"(["dp_replicate","dp_shard"])", "[1,8]", R"(, "parallelism": {"data_parallel": "hsdp"})"));
  CHECK(rules(c) == std::vector<std::string>{"hsdp-degenerate"});
  CHECK(c.find("hsdp-degenerate")->severity == core::Severity::kWarning);
  CHECK(has(c.find("hsdp-degenerate")->message, "replicate size 1"));
  auto s = check_text(plan(1, 8, R"(["dp_replicate","dp_shard"])", "[8,1]", R"(, "parallelism": {"data_parallel": "hsdp"})"));
  CHECK(has(s.find("hsdp-degenerate")->message, "shard size 1"));
}

TEST_CASE("core_rule shard-crosses-node when a node-sized fsdp group straddles nodes") {
  // HSDP with dp_shard outside dp_replicate on 4-GPU nodes: shard group [0,2,4,6] covers nodes 0
  // and 1 although [dp_replicate, dp_shard] would keep each group of 4 in one node.
  const std::string hsdp = R"(, "parallelism": {"data_parallel": "hsdp"})";
  auto c = check_text(plan(2, 4, R"(["dp_shard","dp_replicate"])", "[4,2]", hsdp));
  CHECK(rules(c) == std::vector<std::string>{"shard-crosses-node"});
  const auto* d = c.find("shard-crosses-node");
  CHECK(d->severity == core::Severity::kWarning);
  CHECK(has(d->message, "fsdp group [0,2,4,6]"));
  CHECK(has(d->message, "spans 2 nodes"));
  CHECK(has(d->hint, "order mesh.dims as [dp_replicate, dp_shard]"));
  // The proposed order breaks nothing else.
  CHECK(rules(check_text(plan(2, 4, R"(["dp_replicate","dp_shard"])", "[2,4]", hsdp))).empty());
  // A group larger than a node must span nodes: no warning.
  CHECK(rules(check_text(plan(2, 4, R"(["dp_shard"])", "[8]"))).empty());
}

TEST_CASE("core_rule shard-crosses-node stays quiet when tp/cp/ep fill the node (framework dim order)") {
  const std::string fsdp = R"(, "parallelism": {"data_parallel": "fsdp"})";
  // torchtitan llama3_70b: tp 8 innermost, FSDP over 8 nodes of 8 GPUs. No order keeps both
  // groups in a node; tp has priority, so the fsdp group crossing nodes is expected.
  CHECK(rules(check_text(plan(8, 8, R"(["dp_shard","tp"])", "[8,8]", fsdp))).empty());
  // tp 2 beside dp_shard 4 on 4-GPU nodes: 2 x 4 = 8 ranks cannot share a node of 4.
  CHECK(rules(check_text(plan(2, 4, R"(["dp_shard","tp"])", "[4,2]", fsdp))).empty());
  // cp 2 x tp 2 inside, dp_shard 2 on 8-GPU nodes: 2 x 2 x 2 = 8 fits, and [dp_shard, cp, tp] keeps it.
  CHECK(rules(check_text(plan(2, 8, R"(["dp_shard","cp","tp"])", "[4,2,2]", fsdp))).empty());
  // HSDP 2 x 2 with tp 2 on 4-GPU nodes, dp_shard outermost: tp 2 x dp_shard 2 = 4 fit in a node,
  // so the shard group [0,4] crossing nodes is avoidable; the proposed order is clean.
  const std::string hsdp = R"(, "parallelism": {"data_parallel": "hsdp"})";
  auto c = check_text(plan(2, 4, R"(["dp_shard","dp_replicate","tp"])", "[2,2,2]", hsdp));
  CHECK(rules(c) == std::vector<std::string>{"shard-crosses-node"});
  CHECK(has(c.find("shard-crosses-node")->message, "fsdp group [0,4]"));
  CHECK(has(c.find("shard-crosses-node")->hint, "order mesh.dims as [dp_replicate, dp_shard, tp]"));
  CHECK(rules(check_text(plan(2, 4, R"(["dp_replicate","dp_shard","tp"])", "[2,2,2]", hsdp))).empty());
}

TEST_CASE("core_rule tp-crosses-node") {
  auto c = check_text(plan(2, 4, R"(["tp","dp"])", "[2,4]"));
  CHECK(rules(c) == std::vector<std::string>{"tp-crosses-node"});
  const auto* d = c.find("tp-crosses-node");
  CHECK(d->pointer == "/mesh/dims/0");
  CHECK(has(d->message, "tp group [0,4] (tp=2) spans 2 nodes"));
  CHECK(has(d->hint, "order mesh.dims as [dp, tp]"));
  CHECK(rules(check_text(plan(2, 4, R"(["dp","tp"])", "[4,2]"))).empty());
  // tp 8 first and FSDP second on 8-GPU nodes: tp crosses; the proposed [dp_shard, tp] is clean
  // although the fsdp group then spans nodes (tp fills the node).
  const std::string fsdp = R"(, "parallelism": {"data_parallel": "fsdp"})";
  auto t = check_text(plan(8, 8, R"(["tp","dp_shard"])", "[8,8]", fsdp));
  CHECK(rules(t) == std::vector<std::string>{"tp-crosses-node"});
  CHECK(has(t.find("tp-crosses-node")->hint, "order mesh.dims as [dp_shard, tp]"));
}

TEST_CASE("core_rule checks-skipped names each absent input and the rules it held back") {
  auto c = check_text(plan(1, 8, R"(["dp"])", "[8]"));
  CHECK(rules(c).empty());
  std::vector<std::string> inputs;
  for (const auto& d : c.skipped.items()) {
    CHECK(d.severity == core::Severity::kNote);
    CHECK_FALSE(d.skipped_rules.empty());
    inputs.push_back(d.message.substr(0, d.message.find(',')));
  }
  CHECK(inputs == std::vector<std::string>{"the plan has no model", "the plan has no training.global_batch",
                                           "the plan has no training.seq_len"});
  const auto& model = c.skipped.items()[0];
  CHECK(model.skipped_rules ==
        std::vector<std::string>{"heads-indivisible", "kv-heads-indivisible", "layers-indivisible", "experts-indivisible",
                                 "ep-crosses-nodes", "expert-capacity"});  // the MoE rules read the model's experts
  CHECK(has(model.message, "6 rules did not run: heads-indivisible, kv-heads-indivisible"));
  // With every input present, nothing is skipped.
  auto full = check_text(plan(1, 8, R"(["dp"])", "[8]",
                              R"(, "model": "llama3-8b", "training": {"global_batch": 64, "seq_len": 8192})"));
  CHECK(full.skipped.items().empty());
}

TEST_CASE("core_rule batch-indivisible with and without grad_accumulation") {
  auto c = check_text(plan(1, 8, R"(["dp"])", "[8]", R"(, "training": {"global_batch": 60, "micro_batch": 2, "grad_accumulation": 4})"));
  CHECK(rules(c) == std::vector<std::string>{"batch-indivisible"});
  CHECK(c.find("batch-indivisible")->pointer == "/training/global_batch");
  CHECK(has(c.find("batch-indivisible")->message, "global_batch 60 != micro_batch 2 x grad_accumulation 4 x dp_degree 8 (= 64)"));
  auto d = check_text(plan(1, 8, R"(["dp"])", "[8]", R"(, "training": {"global_batch": 20})"));
  CHECK(has(d.find("batch-indivisible")->message, "not a multiple of micro_batch 1 x dp_degree 8 = 8"));
  CHECK(rules(check_text(plan(1, 8, R"(["dp"])", "[8]", R"(, "training": {"global_batch": 64})"))).empty());
  // Products past 2^63 do not wrap.
  auto big = check_text(plan(1, 8, R"(["dp"])", "[8]",
                             R"(, "training": {"global_batch": 64, "micro_batch": 1099511627776, "grad_accumulation": 1099511627776})"));
  CHECK(has(big.find("batch-indivisible")->message, "more than 2^63"));
}

TEST_CASE("core_rule heads-indivisible and kv-heads-indivisible") {
  auto model = [](int heads, int kv) {
    return R"(, "model": {"layers": 4, "hidden": 1024, "ffn_hidden": 4096, "heads": )" + std::to_string(heads) +
           R"(, "kv_heads": )" + std::to_string(kv) + R"(, "vocab": 1000})";
  };
  auto c = check_text(plan(1, 8, R"(["tp"])", "[8]", model(12, 3)));
  CHECK(rules(c) == std::vector<std::string>{"heads-indivisible", "kv-heads-indivisible"});
  CHECK(has(c.find("heads-indivisible")->message, "heads 12"));
  CHECK(has(c.find("heads-indivisible")->message, "tp 8"));
  // kv 4 with tp 8: tp is a multiple of kv_heads (KV heads replicated): fine.
  CHECK(rules(check_text(plan(1, 8, R"(["tp"])", "[8]", model(16, 4)))).empty());
  auto kv = check_text(plan(1, 4, R"(["tp"])", "[4]", model(16, 6)));
  CHECK(rules(kv) == std::vector<std::string>{"kv-heads-indivisible"});
}

TEST_CASE("core_rule layers-indivisible: error below one layer per stage, warning naming the largest stage") {
  auto model = R"(, "model": {"layers": 10, "hidden": 1024, "ffn_hidden": 4096, "heads": 8, "kv_heads": 8, "vocab": 1000})";
  auto c = check_text(plan(1, 4, R"(["pp"])", "[4]", model));
  CHECK(rules(c) == std::vector<std::string>{"layers-indivisible"});
  CHECK(c.find("layers-indivisible")->severity == core::Severity::kWarning);
  CHECK(c.find("layers-indivisible")->pointer == "/model/layers");
  CHECK(has(c.find("layers-indivisible")->message, "the largest stage has 3 layers"));
  auto e = check_text(plan(1, 4, R"(["pp"])", "[4]",
                           std::string(R"(, "parallelism": {"virtual_stages": 3})") + model));
  CHECK(e.find("layers-indivisible")->severity == core::Severity::kError);
  CHECK(has(e.find("layers-indivisible")->message, "10 layers, fewer than pp 4 x virtual_stages 3 = 12"));
}

TEST_CASE("core_rule seq-indivisible for context parallel and sequence parallel") {
  auto c = check_text(plan(1, 4, R"(["cp"])", "[4]", R"(, "training": {"seq_len": 4100})"));
  CHECK(rules(c) == std::vector<std::string>{"seq-indivisible"});
  CHECK(has(c.find("seq-indivisible")->message, "2 x cp = 8"));
  auto s = check_text(plan(1, 4, R"(["tp"])", "[4]", R"(, "parallelism": {"sequence_parallel": true}, "training": {"seq_len": 4098})"));
  CHECK(rules(s) == std::vector<std::string>{"seq-indivisible"});
  CHECK(has(s.find("seq-indivisible")->message, "tp 4"));
}

TEST_CASE("core_rule experts-indivisible") {
  auto c = check_text(plan(1, 8, R"(["dp_shard","ep"])", "[1,8]",
                           R"(, "model": {"preset": "mixtral-8x7b", "experts": 6})"));
  CHECK(rules(c) == std::vector<std::string>{"experts-indivisible"});
  CHECK(has(c.find("experts-indivisible")->message, "experts 6"));
  CHECK(has(c.find("experts-indivisible")->message, "ep 8"));
}

TEST_CASE("core_rule unknown groups key and unknown fsdp_dims are plan-schema") {
  auto c = check_text(plan(1, 4, R"(["tp"])", "[4]", R"(, "groups": {"fsdpp": [[0,1,2,3]]})"));
  CHECK(rules(c) == std::vector<std::string>{"plan-schema"});
  CHECK(has(c.find("plan-schema")->message, "did you mean 'fsdp'"));
  auto f = check_text(plan(1, 4, R"(["dp_shard"])", "[4]", R"(, "parallelism": {"fsdp_dims": ["dp_shrad"]})"));
  CHECK(f.find("plan-schema"));
}

TEST_CASE("core_rule mesh-invalid-dim lists at most 16 bad dims, then one line counting the rest") {
  std::string dims = "[", shape = "[";
  for (int i = 0; i < 40; ++i) {
    dims += std::string(i ? "," : "") + "\"x" + std::to_string(i) + "\"";
    shape += std::string(i ? "," : "") + "1";
  }
  auto c = check_text(plan(1, 1, dims + "]", shape + "]"));
  CHECK(c.count("mesh-invalid-dim") == 17);
  CHECK(has(c.diags.items().back().message, "24 more unknown or repeated mesh dims (of 40) are not listed"));
}
