// Hugging Face accelerate configs (`accelerate launch --config_file`) from trl, accelerate itself and
// open-instruct (tests/data/import/PROVENANCE.md). Expected values follow
// huggingface/accelerate@16cb6eb8: commands/config/config_args.py (keys, process_config),
// commands/launch.py (nproc_per_node = num_processes // num_machines, MULTI_GPU needs 2 processes),
// utils/dataclasses.py (DeepSpeedPlugin :1226-1330 and set_mixed_precision :1415-1445,
// FullyShardedDataParallelPlugin :1815-1880 and set_mixed_precision :2092-2130) and
// parallelism_config.py (mesh order dp_replicate, dp_shard, cp, sp, tp; fsdp over dp_shard_cp).

#include <doctest/doctest.h>

#include <string>

#include "tests/import/import_test_util.h"

namespace planck::import::test {
namespace {

ImportResult accel_ok(const std::string& rel, const ImportOptions& o = {}) { return import_data_ok("accelerate", rel, o); }

std::string accel_error(const std::string& rel, const std::string& text, const ImportOptions& o = {}) {
  return import_error(&import_accelerate, text, o, data_path(rel));
}

nlohmann::ordered_json shape(const ImportResult& r) { return r.plan["mesh"]["shape"]; }

}  // namespace

TEST_CASE("accelerate_is_detected_from_its_own_keys") {
  CHECK(detect_framework("trl_fsdp1.yaml", read_data("accelerate/trl_fsdp1.yaml")) == "accelerate");
  // accelerate's own template writes only distributed_type, num_processes and the section.
  CHECK(detect_framework("deepspeed.yaml", read_data("accelerate/config_yaml_templates/deepspeed.yaml")) ==
        "accelerate");
  CHECK(detect_framework("x.yaml", "distributed_type: FSDP\nfsdp_config:\n  fsdp_version: 2\n") == "accelerate");
  CHECK(detect_framework("x.yaml", "model_name_or_path: x\nfinetuning_type: lora\n") == "llama-factory");
}

TEST_CASE("accelerate_fsdp1_and_fsdp2_from_trl") {
  // trl fsdp1.yaml: FSDP, fsdp_version 1, num_processes 8 on 1 machine, bf16. The launcher passes
  // fsdp_sharding_strategy FULL_SHARD (its default), which the plugin takes; MixedPrecision gives
  // param_dtype = reduce_dtype = bf16.
  ImportResult r1 = accel_ok("accelerate/trl_fsdp1.yaml");
  CHECK(r1.plan["cluster"]["nodes"] == 1);
  CHECK(r1.plan["cluster"]["gpus_per_node"] == 8);
  CHECK(r1.plan["mesh"]["dims"] == nlohmann::ordered_json::array({"dp_shard"}));
  CHECK(r1.plan["parallelism"]["data_parallel"] == "fsdp");
  CHECK(r1.plan["parallelism"]["reshard_after_forward"] == true);
  CHECK(r1.plan["training"]["stack"] == "fsdp1");
  CHECK(r1.plan["training"]["param_dtype"] == "bf16");
  CHECK(r1.plan["training"]["reduce_dtype"] == "bf16");
  CHECK_FALSE(r1.plan["training"].contains("activation_checkpointing"));  // fsdp_activation_checkpointing false
  CHECK_FALSE(finding_says(r1, "import-warning", "fsdp_reshard_after_forward"));  // FULL_SHARD, as passed
  CHECK(finding_says(r1, "setting-unmodelled", "the training script (model, sequence, batch)"));
  // fsdp2.yaml: fsdp_version 2, reshard_after_forward true.
  ImportResult r2 = accel_ok("accelerate/trl_fsdp2.yaml");
  CHECK(r2.plan["training"]["stack"] == "fsdp2");
  CHECK(r2.plan["parallelism"]["data_parallel"] == "fsdp");
  CHECK(r2.plan["parallelism"]["reshard_after_forward"] == true);
  CHECK_FALSE(verify(r2).has_errors());
}

TEST_CASE("accelerate_fsdp1_strategy_is_the_one_the_launcher_passes") {
  const std::string fsdp1 = read_data("accelerate/trl_fsdp1.yaml");
  // SHARD_GRAD_OP written as reshard_after_forward: FSDP1 still gets fsdp_sharding_strategy's
  // FULL_SHARD (accelerator.py:1940 `sharding_strategy or reshard_after_forward`), said at the line.
  auto r = import_ok(&import_accelerate, replace(fsdp1, "fsdp_reshard_after_forward: FULL_SHARD",
                                                 "fsdp_reshard_after_forward: SHARD_GRAD_OP"),
                     {}, data_path("accelerate/trl_fsdp1.yaml"));
  CHECK(r.plan["parallelism"]["reshard_after_forward"] == true);
  CHECK(finding_says(r, "import-warning", "is not used by FSDP1"));
  // Written as fsdp_sharding_strategy it is taken: parameters stay gathered until backward.
  auto zero2 = import_ok(&import_accelerate,
                         replace(fsdp1, "fsdp_reshard_after_forward: FULL_SHARD", "fsdp_sharding_strategy: 2"), {},
                         data_path("accelerate/trl_fsdp1.yaml"));
  CHECK(zero2.plan["parallelism"]["reshard_after_forward"] == false);
  // HYBRID_SHARD on 2 machines x 8: shard within the node, replicate across (torch FSDP's
  // intra/inter-node groups).
  auto hybrid = import_ok(&import_accelerate,
                          replace(replace(fsdp1, "fsdp_reshard_after_forward: FULL_SHARD",
                                          "fsdp_sharding_strategy: HYBRID_SHARD"),
                                  "num_machines: 1\nnum_processes: 8", "num_machines: 2\nnum_processes: 16"),
                          {}, data_path("accelerate/trl_fsdp1.yaml"));
  CHECK(hybrid.plan["mesh"]["dims"] == nlohmann::ordered_json::array({"dp_replicate", "dp_shard"}));
  CHECK(shape(hybrid) == nlohmann::ordered_json::array({2, 8}));
  CHECK(hybrid.plan["parallelism"]["data_parallel"] == "hsdp");
  // FSDP2 takes a bool only: a strategy name raises in str_to_bool.
  const std::string fsdp2 = read_data("accelerate/trl_fsdp2.yaml");
  const std::string e = accel_error("accelerate/trl_fsdp2.yaml",
                                    replace(fsdp2, "fsdp_reshard_after_forward: true",
                                            "fsdp_reshard_after_forward: FULL_SHARD"));
  CHECK(e.find(":12:") != std::string::npos);
  CHECK(e.find("fsdp_version 2") != std::string::npos);
  // Offload and checkpointing: CPUOffload of parameters and the step, every layer recomputed.
  auto off = import_ok(&import_accelerate,
                       replace(replace(fsdp2, "fsdp_offload_params: false", "fsdp_offload_params: true"),
                               "fsdp_activation_checkpointing: false", "fsdp_activation_checkpointing: true"),
                       {}, data_path("accelerate/trl_fsdp2.yaml"));
  CHECK(off.plan["training"]["offload_params"] == "cpu");
  CHECK(off.plan["training"]["offload_optimizer"] == "cpu");
  CHECK(off.plan["training"]["activation_checkpointing"] == "full");
}

TEST_CASE("accelerate_parallelism_config_builds_the_fsdp2_mesh") {
  // accelerate's tp_hsdp.yaml: dp_replicate 2 x dp_shard 2 x tp 2 = 8 processes; fully_shard over
  // (dp_replicate, dp_shard): HSDP with TP inside.
  ImportResult r = accel_ok("accelerate/accelerate_tp_hsdp.yaml");
  CHECK(r.plan["mesh"]["dims"] == nlohmann::ordered_json::array({"dp_replicate", "dp_shard", "cp", "tp"}));
  CHECK(shape(r) == nlohmann::ordered_json::array({2, 2, 1, 2}));
  CHECK(r.plan["parallelism"]["data_parallel"] == "hsdp");
  CHECK_FALSE(verify(r).has_errors());
  // trl context_parallel_2gpu.yaml: cp 2 on 2 processes; FSDP shards over dp_shard_cp.
  ImportResult cp = accel_ok("accelerate/trl_context_parallel_2gpu.yaml");
  CHECK(shape(cp) == nlohmann::ordered_json::array({1, 1, 2, 1}));
  CHECK(cp.plan["parallelism"]["data_parallel"] == "fsdp");
  CHECK(cp.plan["parallelism"]["fsdp_dims"] == nlohmann::ordered_json::array({"dp_shard", "cp"}));
  CHECK(cp.plan["training"]["activation_checkpointing"] == "full");
  // Sizes that do not multiply to the world: _validate_accelerator raises.
  const std::string text = read_data("accelerate/accelerate_tp_hsdp.yaml");
  const std::string e = accel_error("accelerate/accelerate_tp_hsdp.yaml",
                                    replace(text, "parallelism_config_tp_size: 2", "parallelism_config_tp_size: 4"));
  CHECK(e.find("multiply to 16 but the world is 8") != std::string::npos);
}

TEST_CASE("accelerate_deepspeed_inline_and_from_a_file") {
  // trl deepspeed_zero3.yaml: zero_stage 3, no offload, bf16, 8 processes: DeepSpeedPlugin's own
  // config, ZeRO-3 over the 8 ranks in bf16.
  ImportResult z3 = accel_ok("accelerate/trl_deepspeed_zero3.yaml");
  CHECK(z3.plan["parallelism"]["data_parallel"] == "zero3");
  CHECK(z3.plan["training"]["param_dtype"] == "bf16");
  CHECK(z3.plan["cluster"]["gpus_per_node"] == 8);
  CHECK(z3.plan["training"]["stack"] == "deepspeed");
  // open-instruct's zero2: stage 2.
  CHECK(accel_ok("accelerate/open_instruct_deepspeed_zero2.yaml").plan["parallelism"]["data_parallel"] == "zero2");
  // accelerate's template names ../deepspeed_config_templates/zero_stage1_config.json: stage 1, fp16
  // (the file's), 2 processes; mixed_precision unset is "no", which fills nothing.
  ImportResult file = accel_ok("accelerate/config_yaml_templates/deepspeed.yaml");
  CHECK(file.plan["parallelism"]["data_parallel"] == "zero1");
  CHECK(file.plan["training"]["param_dtype"] == "fp16");
  CHECK(file.plan["cluster"]["gpus_per_node"] == 2);
  // mixed_precision bf16 against the file's fp16.enabled true: set_mixed_precision raises.
  const std::string tmpl = read_data("accelerate/config_yaml_templates/deepspeed.yaml");
  const std::string e = accel_error("accelerate/config_yaml_templates/deepspeed.yaml",
                                    tmpl + "mixed_precision: bf16\n");
  CHECK(e.find("cannot be set to `bf16` when `fp16` is set") != std::string::npos);
  // A plugin key beside the file: _deepspeed_config_checks raises.
  const std::string both = accel_error("accelerate/config_yaml_templates/deepspeed.yaml",
                                       replace(tmpl, "  zero3_init_flag", "  zero_stage: 2\n  zero3_init_flag"));
  CHECK(both.find("will be ignored") != std::string::npos);
  // No zero_stage: the plugin's default 2.
  const std::string open = read_data("accelerate/open_instruct_deepspeed_zero2.yaml");
  auto dflt = import_ok(&import_accelerate, replace(open, "  zero_stage: 2\n", ""), {},
                        data_path("accelerate/open_instruct_deepspeed_zero2.yaml"));
  CHECK(dflt.plan["parallelism"]["data_parallel"] == "zero2");
}

TEST_CASE("accelerate_deepspeed_ulysses_from_parallelism_config") {
  // trl alst_ulysses_4gpu.yaml: ZeRO-3 on 4 processes with sp_size 2 (sp_backend deepspeed): the
  // Accelerator hands DeepSpeed sequence_parallel_size 2, so dp 2 x sp 2. Its deepspeed_config's
  // seq_parallel_communication_data_type is not a key accelerate reads there: said, not used.
  ImportResult r = accel_ok("accelerate/trl_alst_ulysses_4gpu.yaml");
  CHECK(r.plan["parallelism"]["data_parallel"] == "zero3");
  CHECK(r.plan["mesh"]["dims"] == nlohmann::ordered_json::array({"dp", "cp"}));
  CHECK(shape(r) == nlohmann::ordered_json::array({2, 2}));
  CHECK(finding_says(r, "unknown-key", "deepspeed_config.seq_parallel_communication_data_type"));
}

TEST_CASE("accelerate_multi_gpu_and_the_world") {
  // trl multi_gpu.yaml: DDP over 8 processes; autocast keeps fp32 gradients, reduced in fp32.
  ImportResult ddp = accel_ok("accelerate/trl_multi_gpu.yaml");
  CHECK(ddp.plan["parallelism"]["data_parallel"] == "ddp");
  CHECK(ddp.plan["training"]["reduce_dtype"] == "fp32");
  // accelerate's multi_node.yaml: num_processes 8 over num_machines 2 = 4 a machine.
  ImportResult mn = accel_ok("accelerate/accelerate_multi_node.yaml");
  CHECK(mn.plan["cluster"]["nodes"] == 2);
  CHECK(mn.plan["cluster"]["gpus_per_node"] == 4);
  // The command line's cluster wins, as for every config.
  CHECK(accel_ok("accelerate/trl_multi_gpu.yaml", world(4, 8)).plan["mesh"]["shape"] == nlohmann::ordered_json::array({32}));
  // num_processes 1 with MULTI_GPU: launch.py raises.
  const std::string text = read_data("accelerate/trl_multi_gpu.yaml");
  CHECK(accel_error("accelerate/trl_multi_gpu.yaml", replace(text, "num_processes: 8", "num_processes: 1"))
            .find("at least 2 processes") != std::string::npos);
  // fp8 (accelerate's own 0.34 test config): priced as bf16, said.
  CHECK(finding_says(accel_ok("accelerate/accelerate_0_34_0_fp8.yaml"), "setting-unmodelled", "mixed_precision fp8"));
  // --micro-batch alone: one micro-batch a data rank a step (gradient accumulation 1, Accelerator's
  // default), so the global batch is micro x the data-parallel size (tp_hsdp: 2 x 2 data ranks).
  ImportOptions mb;
  mb.micro_batch = 3;
  CHECK(accel_ok("accelerate/trl_multi_gpu.yaml", mb).plan["training"]["global_batch"] == 3 * 8);
  CHECK(accel_ok("accelerate/accelerate_tp_hsdp.yaml", mb).plan["training"]["global_batch"] == 3 * 4);
}

TEST_CASE("accelerate_refuses_what_accelerate_refuses") {
  // accelerate's invalid_keys.yaml: from_yaml_file raises on invalid_key.
  const std::string e = accel_error("accelerate/accelerate_invalid_keys.yaml",
                                    read_data("accelerate/accelerate_invalid_keys.yaml"));
  CHECK(e.find(":14:") != std::string::npos);
  CHECK(e.find("invalid_key is not an accelerate config key") != std::string::npos);
  const std::string fsdp2 = read_data("accelerate/trl_fsdp2.yaml");
  for (const char* type : {"MULTI_NPU", "XLA", "MEGATRON_LM", "SOMETHING"}) {
    const std::string err = accel_error("accelerate/trl_fsdp2.yaml",
                                        replace(fsdp2, "distributed_type: FSDP", std::string("distributed_type: ") + type));
    CHECK(err.find(":4:") != std::string::npos);
  }
  CHECK(accel_error("accelerate/trl_fsdp2.yaml", replace(fsdp2, "use_cpu: false", "use_cpu: true"))
            .find("a CPU run") != std::string::npos);
  // An unknown fsdp_config key is copied onto the launch arguments and never read: a warning.
  auto r = import_ok(&import_accelerate, replace(fsdp2, "  fsdp_version: 2", "  fsdp_version: 2\n  fsdp_shard_size: 4"),
                     {}, data_path("accelerate/trl_fsdp2.yaml"));
  CHECK(finding_says(r, "unknown-key", "fsdp_config.fsdp_shard_size"));
}

}  // namespace planck::import::test
