// Lingua importer: debug.yaml and the data-rank formula before/after commit d1fd421.
// Expected values follow Lingua's train.py / distributed.py (docs/sources/mesh.md §4).

#include <doctest/doctest.h>

#include <string>

#include "tests/import/import_test_util.h"

namespace planck::import::test {
namespace {

std::string dist(const std::string& keys) {
  return "name: t\ngrad_acc_steps: 2\ndata:\n  batch_size: 4\n  seq_len: 1024\nmodel:\n  dim: 512\n  n_layers: 4\n"
         "  n_heads: 8\ndistributed:\n  fsdp_type: full_shard\n" +
         keys;
}

ImportOptions with_formula(std::int64_t nodes, std::int64_t gpn, LinguaFormula f) {
  ImportOptions o = world(nodes, gpn);
  o.lingua_formula = f;
  return o;
}

TEST_CASE("import_lingua_debug_yaml_is_fsdp_over_the_1d_dp_replicate_mesh") {
  const std::string text = read_data("lingua/debug.yaml");
  for (std::int64_t w : {1, 2, 3, 7, 8, 16}) {
    CAPTURE(w);
    ImportResult r = import_ok(&import_lingua, text, world(1, w));
    // dp_shard, dp_replicate absent: dp_replicate = world // dp_shard 1 // tp_size 1.
    CHECK(dims_of(r) == Dims{"dp_replicate", "dp_shard", "tp"});
    CHECK(shape_of(r) == Shape{w, 1, 1});
    CHECK(r.plan["parallelism"]["data_parallel"] == "fsdp");
    CHECK(r.plan["parallelism"]["fsdp_dims"] == nlohmann::ordered_json{"dp_replicate"});
    // data.batch_size 32 per GPU, grad_acc_steps default 1.
    CHECK(r.plan["training"]["micro_batch"] == 32);
    CHECK(r.plan["training"]["grad_accumulation"] == 1);
    CHECK(r.plan["training"]["global_batch"] == 32 * w);
    CHECK(r.plan["training"]["seq_len"] == 2048);
    core::Diagnostics d = verify(r);
    CHECK_MESSAGE(!d.has_errors(), error_rules(d));
  }
  ImportResult r = import_ok(&import_lingua, text, world(1, 8));
  // Model: dim 1024, 8 layers, 8 heads; ffn = 256 * ceil(int(2 * 4 * 1024 / 3) / 256); bytes vocab 258.
  const std::int64_t ffn = 256 * ((2 * 4 * 1024 / 3 + 255) / 256);
  CHECK(r.plan["model"]["hidden"] == 1024);
  CHECK(r.plan["model"]["layers"] == 8);
  CHECK(r.plan["model"]["heads"] == 8);
  CHECK(r.plan["model"]["kv_heads"] == 8);
  CHECK(r.plan["model"]["ffn_hidden"] == ffn);
  CHECK(r.plan["model"]["vocab"] == 258);
  CHECK(r.plan["rank_program"]["steps"].size() == 4);
  // dp_replicate 8 == 8 x dp_shard 1: the old formula r * |dp_replicate| + s is right here only
  // because dp_shard is 1; at any other size it breaks (rank-latent), the fixed one does not.
  core::Diagnostics after = verify(r);
  CHECK(!after.has_rule("rank-latent"));
  ImportResult before = import_ok(&import_lingua, text, with_formula(1, 8, LinguaFormula::kBeforeFix));
  core::Diagnostics d = verify(before);
  CHECK(d.has_rule("rank-latent"));
  CHECK_MESSAGE(!d.has_errors(), error_rules(d));
}

TEST_CASE("import_lingua_issue_58_before_fix_goes_out_of_range_after_fix_is_clean") {
  // 8 nodes x 4 GPUs, dp_shard 4 -> dp_replicate 8; before the fix dp_rank = r * 8 + s reaches 59.
  const std::string text = dist("  dp_shard: 4\n");
  ImportResult before = import_ok(&import_lingua, text, with_formula(8, 4, LinguaFormula::kBeforeFix));
  CHECK(shape_of(before) == Shape{8, 4, 1});
  CHECK(before.plan["parallelism"]["data_parallel"] == "hsdp");
  CHECK(before.plan["training"]["grad_sync"] == "every_microbatch");
  CHECK(verify(before).has_rule("rank-out-of-range"));
  ImportResult after = import_ok(&import_lingua, text, with_formula(8, 4, LinguaFormula::kAfterFix));
  CHECK(after.plan["training"]["grad_sync"] == "last_microbatch");
  core::Diagnostics d = verify(after);
  CHECK_MESSAGE(!d.has_errors(), error_rules(d));
}

TEST_CASE("import_lingua_before_fix_duplicates_when_replicate_is_smaller") {
  // R = 2 < S = 8: r * 2 + s maps (0, 2) and (1, 0) both to 2 -> collision, in range.
  ImportResult r = import_ok(&import_lingua, dist("  dp_shard: 8\n"), with_formula(2, 8, LinguaFormula::kBeforeFix));
  CHECK(shape_of(r) == Shape{2, 8, 1});
  CHECK(verify(r).has_rule("rank-collision"));
}

TEST_CASE("import_lingua_dp_shard_without_replicate_is_fsdp_over_dp_shard") {
  ImportResult r = import_ok(&import_lingua, dist("  dp_shard: 8\n  dp_replicate: 1\n"), world(1, 8));
  CHECK(shape_of(r) == Shape{1, 8, 1});
  CHECK(r.plan["parallelism"]["data_parallel"] == "fsdp");
  CHECK(r.plan["parallelism"]["fsdp_dims"] == nlohmann::ordered_json{"dp_shard"});
  CHECK(r.plan["training"]["global_batch"] == 4 * 2 * 8);
}

TEST_CASE("import_lingua_no_shard_is_ddp_and_its_assertions_refuse") {
  ImportResult r = import_ok(&import_lingua, "distributed:\n  fsdp_type: no_shard\n", world(1, 4));
  CHECK(r.plan["parallelism"]["data_parallel"] == "ddp");
  CHECK(shape_of(r) == Shape{4, 1, 1});
  const std::string e =
      import_error(&import_lingua, "distributed:\n  fsdp_type: no_shard\n  dp_shard: 2\n", world(1, 4));
  CHECK(e.find("no_shard") != std::string::npos);
  CHECK(e.find("dp_shard 2") != std::string::npos);
}

TEST_CASE("import_lingua_world_not_divisible_by_dp_shard_names_the_numbers") {
  const std::string e = import_error(&import_lingua, dist("  dp_shard: 3\n"), world(1, 8));
  CHECK(e.find("config:12") != std::string::npos);
  CHECK(e.find("world 8, dp_shard 3") != std::string::npos);
}

TEST_CASE("import_lingua_tp_needs_full_shard_and_sets_sequence_parallel") {
  ImportResult r = import_ok(&import_lingua, dist("  tp_size: 2\n"), world(1, 8));
  CHECK(shape_of(r) == Shape{4, 1, 2});
  CHECK(r.plan["parallelism"]["sequence_parallel"] == true);
  CHECK(import_error(&import_lingua, "distributed:\n  fsdp_type: full_shard\n  tp_size: 2\n  compile: true\n",
                     world(1, 8))
            .find("compile") != std::string::npos);
}

TEST_CASE("import_lingua_unknown_keys_warn_and_garbage_refuses") {
  ImportResult r = import_ok(&import_lingua, dist("  dp_shrad: 2\n"), world(1, 8));
  CHECK(any_contains(r.warnings, "config:12: unknown-key: distributed.dp_shrad is not a key the framework knows"));
  CHECK(import_error(&import_lingua, "distributed: [unclosed\n", world(1, 8)).find("not valid YAML") !=
        std::string::npos);
  CHECK(import_error(&import_lingua, "- a list\n- not a mapping\n", world(1, 8)).find("mapping") != std::string::npos);
  CHECK(import_error(&import_lingua, dist("  dp_shard: 99999999999999999999\n"), world(1, 8)).find("64-bit") !=
        std::string::npos);
  CHECK(import_error(&import_lingua, dist("  dp_shard: four\n"), world(1, 8)).find("integer") != std::string::npos);
  std::string deep(5000, '[');
  CHECK(!import_lingua(deep, "config", world(1, 8)).is_ok());
}

}  // namespace
// planck prices apps/main's LMTransformer (lingua/transformer.py + apps/main/transformer.py
// LMTransformerArgs). Another app's model keys (facebookresearch/sparse-delta-memory's sdm_at /
// swa_at, blt's patch_size ...) and sliding_window change the model, so each is said.
TEST_CASE("import_lingua_model_keys_outside_lmtransformer_are_said") {
  ImportResult plain = import_ok(&import_lingua, dist(""), world(1, 8));
  CHECK(plain.findings.empty());
  ImportResult r = import_ok(&import_lingua,
                             "name: t\nmodel:\n  dim: 512\n  n_layers: 4\n  n_heads: 8\n  sdm_at: [1, 3]\n"
                             "  swa_window: 1024\n  sliding_window: 512\n",
                             world(1, 8));
  REQUIRE(r.findings.size() == 2);
  CHECK(r.findings[0].message.find("model.sliding_window") != std::string::npos);
  CHECK(r.findings[0].line == 8);
  CHECK(r.findings[1].message.find("model.{sdm_at, swa_window}") != std::string::npos);
  CHECK(r.findings[1].line == 6);
}

}  // namespace planck::import::test
