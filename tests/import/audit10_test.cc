// Audit 10: post-training / reasoning-model sources not read before (huggingface/open-r1 and its TRL
// recipes, NovaSky-AI/SkyThought's LLaMA-Factory configs). Expected values from each framework's code, cited
// per case.

#include <doctest/doctest.h>

#include <string>

#include "tests/import/import_test_util.h"

namespace planck::import::test {

TEST_CASE("trl_script_config_is_refused_not_priced_as_llama_factory_defaults") {
  // huggingface/open-r1 recipes/OpenR1-Distill-7B/sft/config_distill.yaml (@1416fa0) is the `--config` of
  // src/open_r1/sft.py, parsed by TRL's TrlParser (trl/scripts/utils.py:321-327 @f2cd577) into ModelConfig,
  // ScriptArguments and SFTConfig: a full fine-tune (ModelConfig.use_peft defaults to False,
  // trainer/model_config.py:103) at max_length 32768 (SFTConfig, sft_config.py:205). Its model_name_or_path
  // made planck read it as LLaMA-Factory's YAML, with LLaMA-Factory's defaults: finetuning_type lora at
  // rank 8 (finetuning_args.py), cutoff_len 2048 (data_args.py), DDP: an "ok" for a run it never priced.
  const std::string text = read_data("llama-factory/audit10/open-r1/OpenR1-Distill-7B_sft_config_distill.yaml");
  CHECK(detect_framework("config_distill.yaml", text) == "llama-factory");  // the key it shares
  const std::string why = import_error(&import_llama_factory, text, world(1, 8), "config_distill.yaml");
  CHECK(why.find("TRL script config") != std::string::npos);
  // torch_dtype is the first TRL field (ModelConfig, renamed dtype at model_config.py:89), line 5.
  CHECK(why.find("config_distill.yaml:5") != std::string::npos);
  CHECK(why.find("attn_implementation") != std::string::npos);
  CHECK(why.find("dataset_name") != std::string::npos);
  // The GRPO recipe: GRPOConfig's num_generations (grpo_config.py:474), use_vllm (:577).
  const std::string grpo = read_data("llama-factory/audit10/open-r1/Qwen2.5-1.5B-Instruct_grpo_config_demo.yaml");
  const std::string why_grpo = import_error(&import_llama_factory, grpo, world(1, 8), "config_demo.yaml");
  CHECK(why_grpo.find("num_generations") != std::string::npos);
  CHECK(why_grpo.find("use_vllm") != std::string::npos);
}

TEST_CASE("llama_factory_yaml_with_a_shared_trl_key_is_still_read") {
  // A LLaMA-Factory YAML names its stage / finetuning_type / template / dataset / cutoff_len
  // (hparams/finetuning_args.py, data_args.py @ff6d4d12); with one of them the file is LLaMA-Factory's even
  // when a key TRL also has sits beside it (there: unknown-key, as LLaMA-Factory's parser refuses it).
  const std::string text = "model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct\nstage: sft\n"
                           "finetuning_type: lora\ndataset_name: x\n";
  auto r = import_ok(&import_llama_factory, text, world(1, 8), "lf.yaml");
  CHECK(finding_says(r, "unknown-key", "dataset_name"));
  CHECK(r.plan["training"]["lora_rank"] == 8);
}

TEST_CASE("accelerate_launch_in_a_shell_script_names_its_config") {
  // huggingface/open-r1 slurm/train.slurm (@1416fa0) runs `srun ... bash -c "$LAUNCHER $CMD"` with
  // LAUNCHER = `accelerate launch --config_file recipes/accelerate_configs/$ACCELERATOR.yaml ...` and CMD =
  // `src/open_r1/$TASK.py --config $CONFIG_FILE`. accelerate's launcher (commands/launch.py @16cb6eb8) takes
  // the layout from that config's distributed_type; the script's arguments are TRL's. Read as a Megatron-LM
  // launch, planck said "nodes (-1) and gpus_per_node (8) must be >= 1",
  // and with --nodes "no --micro-batch-size: Megatron refuses to start": neither is what runs.
  ImportOptions o;
  o.sets = {{"ACCELERATOR", "zero3"}, {"TASK", "sft"}};
  auto r = import_data_ok("megatron", "megatron-lm/audit10/open_r1_train.slurm", o);
  REQUIRE(r.unfollowed.size() == 1);
  CHECK(r.unfollowed[0].line == 174);  // the srun line that runs the launch
  CHECK(r.unfollowed[0].construct.find("accelerate launch") != std::string::npos);
  CHECK(r.unfollowed[0].why.find("--config_file recipes/accelerate_configs/zero3.yaml") != std::string::npos);
  CHECK(r.unfollowed[0].why.find("src/open_r1/sft.py") != std::string::npos);
  // Without the world on the command line the same refusal, not a world error.
  auto bare = import_data_ok("megatron", "megatron-lm/audit10/open_r1_train.slurm", ImportOptions{});
  CHECK(bare.unfollowed.size() == 1);
}

TEST_CASE("llama_factory_simpo_has_no_reference_model_to_warn_about") {
  // NovaSky-AI/SkyThought qwen2_full_simpo.yaml (@0d190f1): stage dpo with pref_loss simpo. LLaMA-Factory
  // finetuning_args.py:593 (@ff6d4d12): use_ref_model = stage == "dpo" and pref_loss not in ["orpo",
  // "simpo"]; train/dpo/workflow.py:57-63 then builds no reference model. planck warned that the
  // reference model was not priced: there is none.
  const std::string text = read_data("llama-factory/audit10/skythought/examples/train_full/qwen2_full_simpo.yaml");
  const std::string path = data_path("llama-factory/audit10/skythought/examples/train_full/qwen2_full_simpo.yaml");
  auto r = import_ok(&import_llama_factory, text, world(1, 8), path);
  CHECK(findings(r, "setting-unmodelled", "stage dpo") == 0);
  // pref_loss sigmoid (the default, finetuning_args.py:183): a reference model, still warned.
  auto dpo = import_ok(&import_llama_factory, replace(text, "pref_loss: simpo", "pref_loss: sigmoid"), world(1, 8),
                       path);
  CHECK(finding_says(dpo, "setting-unmodelled", "stage dpo"));
}

TEST_CASE("skythought_sky_t1_zero3_offload_reads_every_setting") {
  // Sky-T1-32B-Preview's qwen2_full_sft.yaml (@0d190f1) with examples/deepspeed/ds_z3_offload_config.json:
  // stage 3, offload_optimizer and offload_param on the CPU; its "auto" batch filled by Hugging Face's
  // integrations/deepspeed.py from per_device_train_batch_size 1 and gradient_accumulation_steps 12
  // (train_batch_size = 1 x 12 x 8 GPUs = 96); cutoff_len 16384; LLaMA-Factory checkpoints every layer
  // unless disable_gradient_checkpointing (model_args.py); finetuning_type full trains every weight.
  const std::string path = data_path("llama-factory/audit10/skythought/examples/train_full/qwen2_full_sft.yaml");
  auto r = import_ok(&import_llama_factory, read_data("llama-factory/audit10/skythought/examples/train_full/"
                                                      "qwen2_full_sft.yaml"),
                     world(1, 8), path);
  const auto& t = r.plan["training"];
  CHECK(r.plan["parallelism"]["data_parallel"] == "zero3");
  CHECK(t["offload_optimizer"] == "cpu");
  CHECK(t["offload_params"] == "cpu");
  CHECK(t["micro_batch"] == 1);
  CHECK(t["grad_accumulation"] == 12);
  CHECK(t["global_batch"] == 96);
  CHECK(t["seq_len"] == 16384);
  CHECK(t["activation_checkpointing"] == "full");
  CHECK_FALSE(t.contains("lora_rank"));
  CHECK(t["param_dtype"] == "bf16");
}

TEST_CASE("llama_factory_trainer_fsdp_is_read_as_transformers_builds_it") {
  // open-thoughts/OpenThoughts-Agent sft/lf_configs/qwen3/extra/32k_base_30b_coder_fsdp2.yaml (@247f352c):
  // `fsdp: full_shard auto_wrap` with fsdp_config {fsdp_version: 2, fsdp_reshard_after_forward: true}, no
  // DeepSpeed. transformers@00349ae8 training_args.py _process_fsdp_args splits the options (FSDPOption),
  // strips the fsdp_ prefix of fsdp_config's keys and passes version and reshard_after_forward to
  // accelerate's FullyShardedDataParallelPlugin, which ignores sharding_strategy under FSDP2
  // (accelerate@16cb6eb8 utils/dataclasses.py:1829-1845). It was priced as DDP ("fsdp ... priced as DDP"):
  // whole weights, gradients and Adam states on every GPU.
  const std::string text = read_data("llama-factory/audit10/openthoughts/32k_base_30b_coder_fsdp2.yaml");
  auto r = import_ok(&import_llama_factory, text, world(2, 8), "32k_base_30b_coder_fsdp2.yaml");
  CHECK(r.plan["parallelism"]["data_parallel"] == "fsdp");
  CHECK(r.plan["parallelism"]["reshard_after_forward"] == true);
  CHECK(r.plan["mesh"]["dims"] == nlohmann::ordered_json::array({"dp_shard"}));
  CHECK(r.plan["mesh"]["shape"] == nlohmann::ordered_json::array({16}));
  CHECK(r.plan["training"]["stack"] == "fsdp2");
  CHECK_FALSE(finding_says(r, "setting-unmodelled", "priced as DDP"));
  // fsdp_offload_params is no key _process_fsdp_args reads (offload is the `offload` option): said.
  CHECK(finding_says(r, "unknown-key", "fsdp_config.fsdp_offload_params"));
  CHECK_FALSE(r.plan["training"].contains("offload_params"));

  // FSDP2 without reshard_after_forward: _process_fsdp_args passes "false" (parameters stay gathered).
  const std::string kept = replace(text, "  fsdp_reshard_after_forward: true\n", "");
  CHECK(import_ok(&import_llama_factory, kept, world(2, 8), "v2.yaml").plan["parallelism"]["reshard_after_forward"] ==
        false);
  // FSDP1 (version 1): the option is the sharding strategy; SHARD_GRAD_OP keeps parameters gathered, the
  // hybrid strategies shard inside a node and replicate across nodes (torch FSDP's intra/inter-node groups).
  const std::string v1 = replace(kept, "fsdp_version: 2", "fsdp_version: 1");
  auto grad_op = import_ok(&import_llama_factory, replace(v1, "full_shard auto_wrap", "shard_grad_op auto_wrap"),
                           world(2, 8), "v1.yaml");
  CHECK(grad_op.plan["training"]["stack"] == "fsdp1");
  CHECK(grad_op.plan["parallelism"]["reshard_after_forward"] == false);
  auto hybrid = import_ok(&import_llama_factory, replace(v1, "full_shard auto_wrap", "hybrid_shard auto_wrap"),
                          world(2, 8), "h.yaml");
  CHECK(hybrid.plan["parallelism"]["data_parallel"] == "hsdp");
  CHECK(hybrid.plan["mesh"]["shape"] == nlohmann::ordered_json::array({2, 8}));
  auto no_shard = import_ok(&import_llama_factory, replace(v1, "full_shard auto_wrap", "no_shard"), world(2, 8),
                            "n.yaml");
  CHECK(no_shard.plan["parallelism"]["data_parallel"] == "ddp");
  // `offload` with a strategy: CPUOffload of parameters and gradients, the optimizer step on the host.
  auto off = import_ok(&import_llama_factory, replace(v1, "full_shard auto_wrap", "full_shard offload"), world(2, 8),
                       "o.yaml");
  CHECK(off.plan["training"]["offload_params"] == "cpu");
  // What transformers raises on: offload alone, full_shard with shard_grad_op, an option FSDPOption lacks.
  CHECK(import_error(&import_llama_factory, replace(v1, "full_shard auto_wrap", "offload"), world(2, 8), "e.yaml")
            .find("offload alone") != std::string::npos);
  CHECK(import_error(&import_llama_factory, replace(v1, "full_shard auto_wrap", "full_shard shard_grad_op"),
                     world(2, 8), "e.yaml")
            .find("both full_shard and shard_grad_op") != std::string::npos);
  CHECK(import_error(&import_llama_factory, replace(v1, "full_shard auto_wrap", "full_shard zero3"), world(2, 8),
                     "e.yaml")
            .find("fsdp option 'zero3'") != std::string::npos);
}

}  // namespace planck::import::test
