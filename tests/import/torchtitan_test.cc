// torchtitan importer: the shipped llama3_8b configs and the edge cases of ParallelDims.
// Expected values follow torchtitan's semantics (docs/sources/mesh.md §2), written as formulas here.

#include <doctest/doctest.h>

#include <string>

#include "tests/import/import_test_util.h"

namespace planck::import::test {
namespace {

// A minimal modern config; degrees appended by the tests.
std::string config(const std::string& parallelism,
                   const std::string& training = "local_batch_size = 1\nseq_len = 8192\n") {
  return "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\n" + training + "[parallelism]\n" + parallelism;
}

TEST_CASE("import_torchtitan_llama3_8b_shipped_config_is_fsdp_over_the_inferred_dp_shard") {
  const std::string text = read_data("torchtitan/llama3_8b.toml");
  for (std::int64_t nodes : {1, 2, 8}) {
    const std::int64_t w = nodes * 8;
    ImportResult r = import_ok(&import_torchtitan, text, world(nodes, 8));
    // dp_shard = -1 -> world // (dp_replicate 1 * cp 1 * tp 1 * pp 1) = world.
    CHECK(dims_of(r) == Dims{"pp", "dp_replicate", "dp_shard", "cp", "tp"});
    CHECK(shape_of(r) == Shape{1, 1, w, 1, 1});
    CHECK(r.plan["parallelism"]["data_parallel"] == "fsdp");
    CHECK(r.plan["parallelism"]["fsdp_dims"] == nlohmann::ordered_json{"dp_shard"});
    CHECK(r.plan["model"] == "llama3-8b");
    // global = local_batch_size 1 x dp degree w (global_batch_size unset), accumulation 1.
    CHECK(r.plan["training"]["global_batch"] == w);
    CHECK(r.plan["training"]["micro_batch"] == 1);
    CHECK(r.plan["training"]["grad_accumulation"] == 1);
    CHECK(r.plan["training"]["seq_len"] == 8192);
    CHECK(r.plan["training"]["activation_checkpointing"] == "selective");
    CHECK(any_contains(r.notes, "-1 inferred as world " + std::to_string(w)));
    core::Diagnostics d = verify(r);
    CHECK_MESSAGE(!d.has_errors(), error_rules(d));
  }
}

TEST_CASE("import_torchtitan_legacy_2024_keys_under_training_and_issue_711_hsdp") {
  const std::string text = read_data("torchtitan/llama3_8b_legacy_2024-12.toml");
  ImportResult r = import_ok(&import_torchtitan, text, world(2, 8));
  CHECK(shape_of(r) == Shape{1, 1, 16, 1, 1});
  CHECK(any_contains(r.notes, "read from [training]"));
  CHECK(r.plan["training"]["micro_batch"] == 1);  // legacy batch_size
  // Issue #711's configuration: replicate 2, shard 8 on 2 x 8 GPUs must be HSDP (after #713).
  std::string hsdp = replace(text, "data_parallel_replicate_degree = 1", "data_parallel_replicate_degree = 2");
  hsdp = replace(hsdp, "data_parallel_shard_degree = -1", "data_parallel_shard_degree = 8");
  ImportResult h = import_ok(&import_torchtitan, hsdp, world(2, 8));
  CHECK(shape_of(h) == Shape{1, 2, 8, 1, 1});
  CHECK(h.plan["parallelism"]["data_parallel"] == "hsdp");
  CHECK(h.plan["parallelism"]["replicate_dims"] == nlohmann::ordered_json{"dp_replicate"});
  CHECK(groups(h, {"dp_shard"}) ==
        std::vector<std::vector<std::int64_t>>{{0, 1, 2, 3, 4, 5, 6, 7}, {8, 9, 10, 11, 12, 13, 14, 15}});
  CHECK(groups(h, {"dp_replicate"}).front() == std::vector<std::int64_t>{0, 8});
  core::Diagnostics d = verify(h);
  CHECK_MESSAGE(!d.has_errors(), error_rules(d));
  // [training] disable_loss_parallel (torchtitan/config_manager.py@38e7ee705, 2024-12 to 2025-03):
  // a key of that generation, known; under tp 2 it gives each rank the whole vocabulary's logits,
  // which the plan cannot state: warned at its line.
  std::string no_lp = replace(text, "tensor_parallel_degree = 1", "tensor_parallel_degree = 2");
  no_lp = replace(no_lp, "[training]\n", "[training]\ndisable_loss_parallel = true\n");
  ImportResult lp = import_ok(&import_torchtitan, no_lp, world(2, 8));
  CHECK(lp.findings.size() == 1);
  CHECK(any_contains(lp.warnings, "[training] disable_loss_parallel = true is not modelled by planck"));
}

TEST_CASE("import_torchtitan_minus_one_sweep_over_awkward_tp") {
  const std::int64_t w = 16;
  for (std::int64_t tp : {1, 2, 3, 7, 8, 16}) {
    CAPTURE(tp);
    ImportResult r = import_ok(
        &import_torchtitan,
        config("data_parallel_shard_degree = -1\ntensor_parallel_degree = " + std::to_string(tp) + "\n"), world(2, 8));
    core::Diagnostics d = verify(r);
    if (w % tp == 0) {
      CHECK(shape_of(r)[2] == w / tp);
      CHECK(r.plan["parallelism"]["sequence_parallel"] == (tp > 1));
    } else {
      // torchtitan: 16 // 3 = 5 and 5 * 3 != 16 -> "Invalid parallel dims"; the -1 stays.
      CHECK(shape_of(r)[2] == -1);
      CHECK(any_contains(r.warnings, "cannot be inferred"));
      CHECK(d.has_rule("mesh-world-mismatch"));
    }
  }
}

TEST_CASE("import_torchtitan_explicit_product_mismatch_is_written_as_configured") {
  ImportResult r = import_ok(&import_torchtitan, config("data_parallel_shard_degree = 3\n"), world(1, 8));
  CHECK(shape_of(r) == Shape{1, 1, 3, 1, 1});
  CHECK(any_contains(r.warnings, "dp_shard(3)"));
  CHECK(verify(r).has_rule("mesh-world-mismatch"));
}

TEST_CASE("import_torchtitan_integration_matrix_layouts") {
  struct Case {
    std::string keys;
    std::int64_t w;
    const char* dp;
    Shape shape;
  };
  // tests/integration_tests/features.py @238fa99 (docs/sources/mesh.md §2.5).
  const Case cases[] = {
      {"data_parallel_shard_degree = 1\ndata_parallel_replicate_degree = 4\n", 4, "ddp", {1, 4, 1, 1, 1}},
      {"data_parallel_shard_degree = 2\ndata_parallel_replicate_degree = 2\n", 4, "hsdp", {1, 2, 2, 1, 1}},
      {"data_parallel_shard_degree = 2\ndata_parallel_replicate_degree = 2\ntensor_parallel_degree = 2\n",
       8,
       "hsdp",
       {1, 2, 2, 1, 2}},
      {"data_parallel_shard_degree = 2\ncontext_parallel_degree = 2\n", 4, "fsdp", {1, 1, 2, 2, 1}},
      {"data_parallel_shard_degree = 1\ndata_parallel_replicate_degree = 2\ncontext_parallel_degree = 2\n",
       4,
       "hsdp",
       {1, 2, 1, 2, 1}},
      {"data_parallel_shard_degree = 2\ndata_parallel_replicate_degree = 2\ncontext_parallel_degree = 2\n",
       8,
       "hsdp",
       {1, 2, 2, 2, 1}},
      {"data_parallel_shard_degree = 2\ntensor_parallel_degree = 2\ncontext_parallel_degree = 2\n",
       8,
       "fsdp",
       {1, 1, 2, 2, 2}},
      {"context_parallel_degree = 4\n", 4, "fsdp", {1, 1, 1, 4, 1}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.keys);
    ImportResult r = import_ok(&import_torchtitan, config(c.keys), world(1, c.w));
    CHECK(shape_of(r) == c.shape);
    CHECK(r.plan["parallelism"]["data_parallel"] == c.dp);
    if (c.shape[3] > 1 && std::string(c.dp) != "ddp") {
      CHECK(r.plan["parallelism"]["fsdp_dims"] == nlohmann::ordered_json{"dp_shard", "cp"});
    }
    core::Diagnostics d = verify(r);
    CHECK_MESSAGE(!d.has_errors(), error_rules(d));
  }
}

TEST_CASE("import_torchtitan_pipeline_microbatches_and_reshard_default") {
  // pp 2 x dp_shard 4 on 8 GPUs; local batch 8 in micro-batches of 2 -> 4 pipeline micro-batches;
  // global 64 = 8 x dp 4 x 2 accumulation steps -> 8 micro-batches per step.
  ImportResult r = import_ok(&import_torchtitan,
                             config("pipeline_parallel_degree = 2\npipeline_parallel_schedule = \"Interleaved1F1B\"\n"
                                    "pipeline_parallel_microbatch_size = 2\n",
                                    "local_batch_size = 8\nglobal_batch_size = 64\nseq_len = 4096\n"),
                             world(1, 8));
  CHECK(shape_of(r) == Shape{2, 1, 4, 1, 1});
  CHECK(r.plan["parallelism"]["pipeline_schedule"] == "interleaved_1f1b");
  CHECK(r.plan["parallelism"]["virtual_stages"] == 2);
  CHECK(r.plan["parallelism"]["reshard_after_forward"] == false);
  CHECK(r.plan["training"]["micro_batch"] == 2);
  CHECK(r.plan["training"]["grad_accumulation"] == (64 / (8 * 4)) * (8 / 2));
  core::Diagnostics d = verify(r);
  CHECK_MESSAGE(!d.has_errors(), error_rules(d));
}

// Before #1073 (5e2033c, 2025-04-07) torchtitan had no micro-batch size: an unset
// pipeline_parallel_microbatches meant one micro-batch per pipeline stage, pp x stages per rank
// (torchtitan/parallelisms/pipelining_utils.py build_pipeline_schedule at 90567fc; pp at 2d5ff74).
// A file of the layout before #980 (degrees in [experimental]) is of that era.
TEST_CASE("import_torchtitan_pipeline_microbatches_default_follows_the_file_era") {
  // pytorch/torchtitan@2d5ff742 train_configs/llama3_70b_4D_exp.toml's shape: batch 16, pp 2.
  const std::string old_layout = "[model]\nname = \"llama3\"\nflavor = \"70B\"\n[training]\nbatch_size = 16\n"
                                 "seq_len = 8192\ntensor_parallel_degree = 8\n[experimental]\n"
                                 "pipeline_parallel_degree = 2\n";
  ImportResult r = import_ok(&import_torchtitan, old_layout, world(2, 8));
  CHECK(r.plan["training"]["micro_batch"] == 16 / 2);
  CHECK(r.plan["training"]["grad_accumulation"] == 2);
  // An interleaved schedule holds 2 stages per rank: 2 x 2 = 4 micro-batches of 4.
  ImportResult v = import_ok(
      &import_torchtitan, old_layout + "pipeline_parallel_schedule = \"Interleaved1F1B\"\n", world(2, 8));
  CHECK(v.plan["training"]["micro_batch"] == 16 / (2 * 2));
  CHECK(v.plan["training"]["grad_accumulation"] == 4);
  // The count given, in [experimental] or (between #980 and #1073) [parallelism], is the count.
  ImportResult given =
      import_ok(&import_torchtitan, old_layout + "pipeline_parallel_microbatches = 8\n", world(2, 8));
  CHECK(given.plan["training"]["micro_batch"] == 2);
  ImportResult mid = import_ok(&import_torchtitan,
                               config("pipeline_parallel_degree = 2\npipeline_parallel_microbatches = 4\n",
                                      "batch_size = 16\nseq_len = 8192\n"),
                               world(1, 8));
  CHECK(mid.plan["training"]["micro_batch"] == 4);
  CHECK(mid.warnings.empty());  // a key of torchtitan at 8b737fe (2025-04-07), not unknown
  // Today's layout without either key: micro-batches of 1 (pipeline_parallel_microbatch_size default).
  ImportResult now = import_ok(&import_torchtitan, config("pipeline_parallel_degree = 2\n", "local_batch_size = 16\n"),
                               world(1, 8));
  CHECK(now.plan["training"]["micro_batch"] == 1);
  CHECK(now.plan["training"]["grad_accumulation"] == 16);
}

// torchft (torchtitan/components/ft.py): replica groups joined over dp_replicate and, with a
// semi_sync_method, gradients synced every sync_steps; neither is in the plan, so each is said.
TEST_CASE("import_torchtitan_fault_tolerance_is_said_not_priced") {
  ImportResult r = import_ok(&import_torchtitan,
                             config("data_parallel_replicate_degree = 2\n") +
                                 "[fault_tolerance]\nenable = true\nsemi_sync_method = \"diloco\"\nsync_steps = 30\n",
                             world(1, 2));
  REQUIRE(r.findings.size() == 2);
  CHECK(r.findings[0].rule == "setting-unmodelled");
  CHECK(r.findings[0].line == 10);
  CHECK(r.findings[1].message.find("diloco") != std::string::npos);
  CHECK(r.findings[1].line == 11);
  // A section without enable is inert (FaultTolerance.enable defaults to false).
  ImportResult off =
      import_ok(&import_torchtitan,
                config("data_parallel_replicate_degree = 2\n") + "[fault_tolerance]\ngroup_size = 2\n", world(1, 2));
  CHECK(off.findings.empty());
}

// [activation_checkpoint] mode = "selective" with selective_ac_option a number N (torchtitan's
// default "2") wraps every N-th transformer block in full checkpointing (layer SAC,
// torchtitan/distributed/activation_checkpoint.py); "op" is the op-level policy.
TEST_CASE("import_torchtitan_layer_sac_is_full_recompute_of_every_nth_block") {
  // torchtitan's llama3 debug_model.toml at 7e4ab85: mode "selective", selective_ac_option '2'.
  ImportResult debug =
      import_ok(&import_torchtitan, read_data("../corpus/torchtitan/llama3_debug_model.toml"), world(1, 8));
  CHECK(debug.plan["training"]["activation_checkpointing"] == "full");
  CHECK(debug.plan["training"]["recompute_every"] == 2);
  CHECK(!verify(debug).has_errors());
  const std::string section = "[activation_checkpoint]\nmode = \"selective\"\n";
  ImportResult absent = import_ok(&import_torchtitan, config("") + section, world(1, 8));
  CHECK(absent.plan["training"]["recompute_every"] == 2);
  CHECK(any_contains(absent.notes, "torchtitan's default"));
  ImportResult every =
      import_ok(&import_torchtitan, config("") + section + "selective_ac_option = \"1\"\n", world(1, 8));
  CHECK(every.plan["training"]["activation_checkpointing"] == "full");
  CHECK_FALSE(every.plan["training"].contains("recompute_every"));
  ImportResult op = import_ok(&import_torchtitan, config("") + section + "selective_ac_option = \"op\"\n", world(1, 8));
  CHECK(op.plan["training"]["activation_checkpointing"] == "selective");
  ImportResult odd =
      import_ok(&import_torchtitan, config("") + section + "selective_ac_option = \"layer\"\n", world(1, 8));
  CHECK(any_contains(odd.warnings, "neither \"op\" nor a whole number"));
  // No mode, or no [activation_checkpoint] at all: torchtitan's default mode "selective" in every
  // TOML era (config_manager.py default="selective" at c22d1a8d1, 2024-04; job_config.py
  // ActivationCheckpoint.mode at f3e2a75e1, 2025-07) with selective_ac_option "2" -- not none.
  for (const std::string& text : {config(""), config("") + "[activation_checkpoint]\n"}) {
    ImportResult unsaid = import_ok(&import_torchtitan, text, world(1, 8));
    CHECK(unsaid.plan["training"]["activation_checkpointing"] == "full");
    CHECK(unsaid.plan["training"]["recompute_every"] == 2);
    CHECK(any_contains(unsaid.notes, "activation_checkpoint.mode not given"));
  }
}

TEST_CASE("import_torchtitan_full_bf16_training_and_optimizer_in_backward") {
  // [training] dtype = "bfloat16" (torchtitan #1646, e99e16c91): the model is built under
  // set_default_dtype(bfloat16), so parameters, gradients and optimizer states are bf16 with no fp32
  // master copy (LambdaLabsML/torchtitan's B200 / GB300 configs set it).
  ImportResult r = import_ok(&import_torchtitan,
                             config("", "local_batch_size = 1\nseq_len = 8192\ndtype = \"bfloat16\"\n") +
                                 "[optimizer]\nname = \"AdamW\"\nearly_step_in_backward = true\n",
                             world(1, 8));
  CHECK(r.plan["training"]["master_dtype"] == "none");
  CHECK(r.plan["training"]["optimizer_state_dtype"] == "bf16");
  CHECK(r.plan["training"]["param_dtype"] == "bf16");
  // early_step_in_backward frees each gradient in its hook (OptimizersInBackwardContainer): said.
  CHECK(any_contains(r.warnings, "early_step_in_backward"));
  ImportResult f32 = import_ok(&import_torchtitan, config("", "local_batch_size = 1\ndtype = \"float32\"\n"), world(1, 8));
  CHECK_FALSE(f32.plan["training"].contains("master_dtype"));
}

TEST_CASE("import_torchtitan_context_parallel_rotate_method_is_said") {
  // job_config.py context_parallel_rotate_method defaults to "allgather" (set_rotate_method in
  // distributed/utils.py); planck's ring of K/V chunks moves the same bytes: said, not dropped.
  ImportResult dflt = import_ok(&import_torchtitan, config("context_parallel_degree = 2\n"), world(1, 8));
  CHECK(any_contains(dflt.notes, "rotates K/V by allgather (torchtitan's default)"));
  ImportResult a2a = import_ok(
      &import_torchtitan, config("context_parallel_degree = 2\ncontext_parallel_rotate_method = \"alltoall\"\n"),
      world(1, 8));
  CHECK(any_contains(a2a.notes, "rotates K/V by alltoall"));
}

TEST_CASE("import_torchtitan_float8_converter_is_training_fp8") {
  // torchtitan turns torchao Float8 on with a model converter ("float8", later
  // "quantize.linear.float8"); recipe_name defaults to tensorwise (torchtitan
  // components/quantization/float8.py), rowwise_with_gw_hp is a rowwise recipe.
  const std::string with = replace(config(""), "flavor = \"8B\"\n", "flavor = \"8B\"\nconverters = [\"float8\"]\n");
  ImportResult tensorwise = import_ok(&import_torchtitan, with, world(1, 8));
  CHECK(tensorwise.plan["training"]["fp8"] == "tensorwise");
  // Weights stay in the mixed-precision dtype: no param_dtype written, the plan's default bf16.
  CHECK(tensorwise.plan["training"].value("param_dtype", std::string("bf16")) == "bf16");
  const std::string rowwise =
      replace(config(""), "flavor = \"8B\"\n", "flavor = \"8B\"\nconverters = [\"quantize.linear.float8\"]\n") +
      "[quantize.linear.float8]\nrecipe_name = \"rowwise_with_gw_hp\"\n";
  CHECK(import_ok(&import_torchtitan, rowwise, world(1, 8)).plan["training"]["fp8"] == "rowwise");
  // The shipped config leaves the converter commented out: no FP8.
  ImportResult off = import_ok(&import_torchtitan, read_data("torchtitan/llama3_8b.toml"), world(1, 8));
  CHECK_FALSE(off.plan["training"].contains("fp8"));
  // Before converters (2024-12): [float8] enable_float8_linear.
  std::string legacy = read_data("torchtitan/llama3_8b_legacy_2024-12.toml");
  CHECK_FALSE(import_ok(&import_torchtitan, legacy, world(1, 8)).plan["training"].contains("fp8"));
  legacy = replace(legacy, "enable_float8_linear = false", "enable_float8_linear = true");
  CHECK(import_ok(&import_torchtitan, legacy, world(1, 8)).plan["training"]["fp8"] == "tensorwise");
  // torchao MX linears; a converter planck does not read is a warning, never dropped silently.
  const std::string mx =
      replace(config(""), "flavor = \"8B\"\n", "flavor = \"8B\"\nconverters = [\"quantize.linear.mx\", \"eco\"]\n");
  ImportResult mxr = import_ok(&import_torchtitan, mx, world(1, 8));
  CHECK(mxr.plan["training"]["fp8"] == "mxfp8");
  CHECK(any_contains(mxr.warnings, "converter 'eco'"));
}

TEST_CASE("import_torchtitan_global_batch_that_does_not_factor_reaches_verify") {
  ImportResult r =
      import_ok(&import_torchtitan, config("", "local_batch_size = 2\nglobal_batch_size = 20\n"), world(1, 8));
  CHECK(r.plan["training"]["global_batch"] == 20);
  CHECK(!r.plan["training"].contains("grad_accumulation"));
  CHECK(verify(r).has_rule("batch-indivisible"));
}

TEST_CASE("import_torchtitan_unknown_keys_warn_and_missing_sections_default") {
  ImportResult r =
      import_ok(&import_torchtitan, "[parallelism]\ntensor_paralel_degree = 2\n[mystery]\nx = 1\n", world(1, 8));
  CHECK(any_contains(r.warnings, "config:2: unknown-key: [parallelism] tensor_paralel_degree is not a key the framework knows (torchtitan refuses"));
  CHECK(any_contains(r.warnings, "did you mean 'tensor_parallel_degree'?"));
  CHECK(any_contains(r.warnings, "unknown-key: [mystery] is not a key"));
  CHECK(any_contains(r.warnings, "no planck preset"));  // default llama3 debugmodel
  CHECK(shape_of(r) == Shape{1, 1, 8, 1, 1});
  CHECK(!r.plan.contains("model"));
}

TEST_CASE("import_torchtitan_sections_of_a_custom_args_module_are_its_not_typos") {
  // torchtitan merges the JobConfig dataclass of [experimental] custom_args_module into its config
  // (config/manager.py; nscottnichols' blendcorpus llama3_70b.toml names
  // torchtitan.experiments.blendcorpus.job_config and sets [blendcorpus]): the framework reads the
  // section, planck does not, which is a setting-unmodelled warning, not "check the spelling".
  ImportResult r = import_ok(&import_torchtitan,
                             "[experimental]\ncustom_args_module = \"my.job_config\"\n[blendcorpus]\nx = 1\n"
                             "[parallelism]\ntensor_paralel_degree = 2\n",
                             world(1, 8));
  CHECK(any_contains(r.warnings, "config:3: setting-unmodelled: [blendcorpus] is not modelled by planck: a section of "
                                 "my.job_config"));
  CHECK_FALSE(any_contains(r.warnings, "unknown-key: [blendcorpus]"));
  // A typo in a known section is still one.
  CHECK(any_contains(r.warnings, "unknown-key: [parallelism] tensor_paralel_degree"));
}

TEST_CASE("import_torchtitan_refuses_bad_degrees_with_file_and_line") {
  CHECK(import_error(&import_torchtitan, config("tensor_parallel_degree = 0\n"), world(1, 8)).find("config:8") !=
        std::string::npos);
  CHECK(import_error(&import_torchtitan, config("tensor_parallel_degree = \"two\"\n"), world(1, 8))
            .find("must be an integer") != std::string::npos);
  CHECK(import_error(&import_torchtitan, config("data_parallel_shard_degree = -2\n"), world(1, 8)).find("-2") !=
        std::string::npos);
  const std::string big = "4611686018427387904";  // 2^62
  CHECK(import_error(&import_torchtitan,
                     config("tensor_parallel_degree = " + big + "\ndata_parallel_replicate_degree = " + big + "\n"),
                     world(1, 8))
            .find("overflows") != std::string::npos);
  CHECK(import_error(&import_torchtitan, config("tensor_parallel_degree = 99999999999999999999\n"), world(1, 8))
            .find("config:8") != std::string::npos);
  const std::string broken = import_error(&import_torchtitan, "[parallelism\ntp = 1\n", world(1, 8));
  CHECK(broken.find("config:1:") != std::string::npos);
  CHECK(broken.find("not valid TOML") != std::string::npos);
}

TEST_CASE("import_torchtitan_expert_parallel_follows_paralleldims") {
  // HEAD rule: (dp_shard * cp * tp) % ep == 0 (etp 1). dp_shard 2, ep 3 -> ValueError.
  CHECK(import_error(
            &import_torchtitan,
            config("data_parallel_shard_degree = 2\ndata_parallel_replicate_degree = 4\nexpert_parallel_degree = 3\n"),
            world(1, 8))
            .find("(dp_shard x cp x tp) % (ep x etp)") != std::string::npos);
  ImportResult ok = import_ok(&import_torchtitan, config("expert_parallel_degree = 4\n"), world(1, 8));
  CHECK(any_contains(ok.notes, "expert parallel ep=4"));
}

// Issue 31: the stack follows torch.compile. The shipped config has [compile] enable=false
// (torchtitan/models/llama3/train_configs/llama3_8b.toml, tests/data/import/torchtitan/), the
// 2024-12 one [training] compile = false; switched on, Inductor fuses the memory-bound ops.
TEST_CASE("import_torchtitan_stack_follows_torch_compile") {
  const std::string text = read_data("torchtitan/llama3_8b.toml");
  CHECK(import_ok(&import_torchtitan, text, world(1, 8)).plan["training"]["stack"] == "torchtitan_eager");
  const std::string compiled = replace(text, "[compile]\nenable=false", "[compile]\nenable=true");
  REQUIRE(compiled != text);
  CHECK(import_ok(&import_torchtitan, compiled, world(1, 8)).plan["training"]["stack"] == "torchtitan_compile");
  const std::string legacy = read_data("torchtitan/llama3_8b_legacy_2024-12.toml");
  CHECK(import_ok(&import_torchtitan, legacy, world(2, 8)).plan["training"]["stack"] == "torchtitan_eager");
  const std::string legacy_on = replace(legacy, "compile = false", "compile = true");
  REQUIRE(legacy_on != legacy);
  CHECK(import_ok(&import_torchtitan, legacy_on, world(2, 8)).plan["training"]["stack"] == "torchtitan_compile");
  // [compile] components (pytorch/torchtitan@08b8b244, default ["model", "loss"]): without
  // "loss" the model is compiled and the loss runs eagerly (the memory model reads it).
  CHECK(!import_ok(&import_torchtitan, compiled, world(1, 8)).plan["training"].contains("cross_entropy"));
  const std::string model_only = replace(compiled, "components = [\"model\", \"loss\"]", "components = [\"model\"]");
  REQUIRE(model_only != compiled);
  const auto m = import_ok(&import_torchtitan, model_only, world(1, 8));
  CHECK(m.plan["training"]["cross_entropy"] == "eager");
}

}  // namespace
}  // namespace planck::import::test
