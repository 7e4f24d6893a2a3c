#pragma once
// The keys of a Hugging Face accelerate config file (`accelerate launch --config_file FILE`), as
// huggingface/accelerate@16cb6eb8 (2026-07-24) reads them.

#include <string>
#include <vector>

namespace planck::import::accelerate {

// src/accelerate/commands/config/config_args.py: BaseConfig and ClusterConfig's fields.
// ClusterConfig.from_yaml_file raises ValueError("The config file at ... had unknown keys") for
// any other top-level key, after process_config has turned the legacy `fp16` and
// `dynamo_backend` into mixed_precision / dynamo_config.
inline const std::vector<std::string> kTopKeys = {
    "compute_environment", "distributed_type", "mixed_precision", "use_cpu", "debug", "num_processes",
    "machine_rank", "num_machines", "gpu_ids", "main_process_ip", "main_process_port", "rdzv_backend",
    "same_network", "main_training_function", "enable_cpu_affinity", "fp8_config", "deepspeed_config",
    "fsdp_config", "parallelism_config", "megatron_lm_config", "mpirun_config", "downcast_bf16", "tpu_name",
    "tpu_zone", "tpu_use_cluster", "tpu_use_sudo", "command_file", "commands", "tpu_vm", "tpu_env",
    "dynamo_config", "fp16", "dynamo_backend"};

// Fields earlier releases wrote (the history of config_args.py) that today's refuses.
inline const std::vector<std::string> kRemovedTopKeys = {"ipex_config", "tp_config", "tpu_cluster", "command"};

// commands/launch.py: `accelerate launch` copies every key of deepspeed_config onto its arguments
// (unknown ones are set and never read); these are the ones DeepSpeedPlugin and the launcher use.
inline const std::vector<std::string> kDeepSpeedKeys = {
    "deepspeed_config_file", "zero_stage", "offload_optimizer_device", "offload_param_device",
    "offload_optimizer_nvme_path", "offload_param_nvme_path", "gradient_accumulation_steps", "gradient_clipping",
    "zero3_init_flag", "zero3_save_16bit_model", "deepspeed_hostfile", "deepspeed_exclusion_filter",
    "deepspeed_inclusion_filter", "deepspeed_multinode_launcher", "deepspeed_moe_layer_cls_names"};

// fsdp_config (a key without the fsdp_ prefix gets it, launch.py): the --fsdp_* arguments, and
// fsdp_backward_prefetch_policy, the name releases before 0.21 wrote.
inline const std::vector<std::string> kFsdpKeys = {
    "fsdp_version", "fsdp_offload_params", "fsdp_min_num_params", "fsdp_sharding_strategy",
    "fsdp_reshard_after_forward", "fsdp_auto_wrap_policy", "fsdp_transformer_layer_cls_to_wrap",
    "fsdp_backward_prefetch", "fsdp_state_dict_type", "fsdp_forward_prefetch", "fsdp_use_orig_params",
    "fsdp_cpu_ram_efficient_loading", "fsdp_sync_module_states", "fsdp_activation_checkpointing",
    "fsdp_ignored_modules", "fsdp_backward_prefetch_policy"};

// parallelism_config (launch.py's --parallelism_config_* arguments).
inline const std::vector<std::string> kParallelismKeys = {
    "parallelism_config_dp_replicate_size", "parallelism_config_dp_shard_size", "parallelism_config_tp_size",
    "parallelism_config_cp_size", "parallelism_config_cp_backend", "parallelism_config_cp_comm_strategy",
    "parallelism_config_sp_size", "parallelism_config_sp_backend", "parallelism_config_sp_seq_length",
    "parallelism_config_sp_seq_length_is_variable", "parallelism_config_sp_attn_implementation"};

// utils/dataclasses.py DistributedType: the values that launch on something other than NVIDIA or
// AMD GPUs.
inline const std::vector<std::string> kOtherDevices = {"MULTI_CPU", "MULTI_NPU", "MULTI_MLU", "MULTI_SDAA",
                                                       "MULTI_MUSA", "MULTI_XPU", "MULTI_HPU", "MULTI_NEURON",
                                                       "XLA", "TPU"};

// FSDP_SHARDING_STRATEGY (utils/constants.py): the names, 1-based as accelerate numbers them.
inline const std::vector<std::string> kShardingStrategies = {"FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD",
                                                             "HYBRID_SHARD", "HYBRID_SHARD_ZERO2"};

}  // namespace planck::import::accelerate
