// DeepSpeed importer: the shipped ZeRO/AutoTP/MiCS configs, "auto" values and batch arithmetic.
// Expected values follow runtime/config.py, zero/config.py, mics_utils.py (docs/sources/mesh.md §5).

#include <doctest/doctest.h>

#include <string>

#include "tests/import/import_test_util.h"

namespace planck::import::test {
namespace {

using Groups = std::vector<std::vector<std::int64_t>>;

TEST_CASE("import_deepspeed_autotp_zero2_hf_config_with_auto_values") {
  ImportResult r = import_ok(&import_deepspeed, read_data("deepspeed/ds_config_autotp_zero2.json"), world(1, 8));
  // autotp_size 4 on 8 ranks: dp = 8 / 4 = 2, mesh (dp, tp) with tp contiguous.
  CHECK(dims_of(r) == Dims{"dp", "tp"});
  CHECK(shape_of(r) == Shape{2, 4});
  CHECK(groups(r, {"tp"}) == Groups{{0, 1, 2, 3}, {4, 5, 6, 7}});
  CHECK(r.plan["parallelism"]["data_parallel"] == "zero2");
  // "auto": micro 8 (HF per_device_train_batch_size), accumulation 1, global 8 * 1 * dp 2.
  CHECK(r.plan["training"]["micro_batch"] == 8);
  CHECK(r.plan["training"]["grad_accumulation"] == 1);
  CHECK(r.plan["training"]["global_batch"] == 8 * 1 * 2);
  CHECK(r.plan["training"]["param_dtype"] == "bf16");
  CHECK(r.plan["training"]["grad_sync"] == "every_microbatch");
  CHECK(any_contains(r.warnings, "setting-unmodelled: train_micro_batch_size_per_gpu \"auto\""));
  CHECK(any_contains(r.warnings, "setting-unmodelled: bf16.enabled \"auto\""));
  core::Diagnostics d = verify(r);
  CHECK_MESSAGE(!d.has_errors(), error_rules(d));
}

TEST_CASE("import_deepspeed_zero3_qwen_config") {
  for (std::int64_t w : {1, 2, 3, 7, 8, 16}) {
    CAPTURE(w);
    ImportResult r = import_ok(&import_deepspeed, read_data("deepspeed/ds_zero3_leaf_qwen3_5.json"), world(1, w));
    CHECK(shape_of(r) == Shape{w, 1});
    CHECK(r.plan["parallelism"]["data_parallel"] == "zero3");
    CHECK(r.plan["training"]["micro_batch"] == 2);
    CHECK(r.plan["training"]["global_batch"] == 2 * 1 * w);
    CHECK(r.warnings.size() == 1);  // only "no model"; every key is a DeepSpeed key
    core::Diagnostics d = verify(r);
    CHECK_MESSAGE(!d.has_errors(), error_rules(d));
  }
}

TEST_CASE("import_deepspeed_mics_is_hsdp_with_shard_groups_of_mics_shard_size") {
  const std::string text = read_data("deepspeed/mics_shard8_from_docs.json");
  ImportResult r = import_ok(&import_deepspeed, text, world(2, 8));
  CHECK(dims_of(r) == Dims{"dp_replicate", "dp_shard"});
  CHECK(shape_of(r) == Shape{16 / 8, 8});
  CHECK(r.plan["parallelism"]["data_parallel"] == "hsdp");
  CHECK(groups(r, {"dp_shard"}) == Groups{{0, 1, 2, 3, 4, 5, 6, 7}, {8, 9, 10, 11, 12, 13, 14, 15}});
  CHECK(groups(r, {"dp_replicate"}).front() == std::vector<std::int64_t>{0, 8});
  CHECK(r.plan["training"]["global_batch"] == 1 * 8 * 16);
  core::Diagnostics d = verify(r);
  CHECK_MESSAGE(!d.has_errors(), error_rules(d));
  // 12 ranks cannot hold shard groups of 8: DeepSpeed asserts; the -1 reaches verify.
  ImportResult bad = import_ok(&import_deepspeed, text, world(1, 12));
  CHECK(shape_of(bad) == Shape{-1, 8});
  CHECK(verify(bad).has_rule("mesh-world-mismatch"));
}

TEST_CASE("import_deepspeed_hpz_is_zero3_and_must_divide_the_world") {
  const std::string text =
      "{\"train_micro_batch_size_per_gpu\": 1, \"zero_optimization\": {\"stage\": 3, \"zero_hpz_partition_size\": 8}}";
  ImportResult r = import_ok(&import_deepspeed, text, world(2, 8));
  CHECK(r.plan["parallelism"]["data_parallel"] == "zero3");
  CHECK(any_contains(r.notes, "hpZ"));
  CHECK(import_error(&import_deepspeed, text, world(1, 12)).find("world 12, zero_hpz_partition_size 8") !=
        std::string::npos);
}

TEST_CASE("import_deepspeed_batch_arithmetic") {
  auto cfg = [](const std::string& fields) { return "{" + fields + ", \"zero_optimization\": {\"stage\": 1}}"; };
  // train_batch_size only: accumulation 1, micro = 64 / dp 8.
  ImportResult only = import_ok(&import_deepspeed, cfg("\"train_batch_size\": 64"), world(1, 8));
  CHECK(only.plan["training"]["micro_batch"] == 64 / 8);
  CHECK(only.plan["training"]["grad_accumulation"] == 1);
  // train + micro: accumulation = 64 / 2 / 8.
  ImportResult two =
      import_ok(&import_deepspeed, cfg("\"train_batch_size\": 64, \"train_micro_batch_size_per_gpu\": 2"), world(1, 8));
  CHECK(two.plan["training"]["grad_accumulation"] == 64 / 2 / 8);
  // All three given and inconsistent (2 * 3 * 8 = 48 != 100): DeepSpeed asserts; verify reports it.
  ImportResult bad = import_ok(&import_deepspeed,
                               cfg("\"train_batch_size\": 100, \"train_micro_batch_size_per_gpu\": 2, "
                                   "\"gradient_accumulation_steps\": 3"),
                               world(1, 8));
  CHECK(any_contains(bad.warnings, "train_batch_size 100 != micro 2 x accumulation 3 x dp 8"));
  CHECK(verify(bad).has_rule("batch-indivisible"));
}

TEST_CASE("import_deepspeed_refusals_and_warnings_name_the_place") {
  const std::string broken =
      import_error(&import_deepspeed, "{\n  \"zero_optimization\": {\"stage\": 3,,}\n}", world(1, 8));
  CHECK(broken.find("config:2:") != std::string::npos);
  CHECK(broken.find("not valid JSON") != std::string::npos);
  CHECK(import_error(&import_deepspeed, "{\"zero_optimization\": {\"stage\": 1}}", world(1, 8))
            .find("train_batch_size") != std::string::npos);
  CHECK(import_error(&import_deepspeed, "{\"train_batch_size\": 8, \"zero_optimization\": {\"stage\": 5}}", world(1, 8))
            .find("stage 5") != std::string::npos);
  CHECK(import_error(&import_deepspeed, "{\"train_batch_size\": \"lots\"}", world(1, 8)).find("/train_batch_size") !=
        std::string::npos);
  CHECK(import_error(&import_deepspeed, "[1, 2]", world(1, 8)).find("JSON object") != std::string::npos);
  CHECK(import_error(&import_deepspeed, "{\"train_batch_size\": 1e300}", world(1, 8)).find("integer") !=
        std::string::npos);
  ImportResult r = import_ok(&import_deepspeed, "{\"train_batch_size\": 8,\n \"zero_optimisation\": {}}", world(1, 8));
  CHECK(any_contains(r.warnings, "config:2: unknown-key: /zero_optimisation is not a key the framework knows (ignored); did you mean 'zero_optimization'?"));
  // A misspelt key given by --set is checked as the file's are (DeepSpeed's pydantic zero config
  // forbids extra keys: runtime/config_utils.py extra="forbid"); not applied silently.
  ImportOptions o = world(1, 8);
  o.sets = {{"zero_optimization.offload_optimzer.device", "cpu"}, {"zero_optimization.stage", "2"}};
  ImportResult s = import_ok(&import_deepspeed, "{\"train_batch_size\": 8}", o);
  CHECK(any_contains(s.warnings, "--set /zero_optimization/offload_optimzer is not a key the framework knows"));
  CHECK(any_contains(s.warnings, "did you mean 'offload_optimizer'?"));
  CHECK_FALSE(any_contains(s.warnings, "/zero_optimization/stage is not"));
  // Below a section built as a DeepSpeedConfigModel the key is refused at deepspeed.initialize, not
  // ignored: DeepSpeedZeroConfig since v0.7.0 (#2004), CompileConfig since v0.16.6 (#7154). axolotl's
  // zero1_torch_compile.json writes "compile": {"disable": false, "backend": "inductor"}; `disable`
  // is no CompileConfig field (compile/config.py@edaa722).
  CHECK(any_contains(s.warnings, "DeepSpeed refuses it at start-up: the section's config model forbids unknown keys "
                                 "since v0.7.0"));
  ImportResult c = import_ok(&import_deepspeed,
                             "{\"train_batch_size\": 8,\n \"compile\": {\"disable\": false, \"backend\": \"inductor\"}}",
                             world(1, 8));
  CHECK(any_contains(c.warnings, "config:2: unknown-key: /compile/disable is not a key the framework knows (DeepSpeed "
                                 "refuses it at start-up: the section's config model forbids unknown keys since v0.16.6"));
  CHECK_FALSE(any_contains(c.warnings, "/compile/backend is not"));
  std::string deep(100000, '[');
  CHECK(!import_deepspeed(deep, "config", world(1, 8)).is_ok());
}

}  // namespace
}  // namespace planck::import::test
