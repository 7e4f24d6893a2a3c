// Megatron-DeepSpeed launches (import/megatron/deepspeed_*.cc): the fork's own example scripts
// (tests/data/import/megatron-deepspeed/, microsoft/Megatron-DeepSpeed, PROVENANCE.md) and small
// flag lists. Expected values from the fork's code @f4157bea and DeepSpeed's @edaa722, cited per case.

#include <doctest/doctest.h>

#include <string>

#include "tests/import/import_test_util.h"

namespace planck::import::test {
namespace {

ImportResult import_script(const std::string& name, const ImportOptions& opts) {
  return import_data_ok("megatron", "megatron-deepspeed/" + name, opts);
}

const std::string kGpt =
    "pretrain_gpt.py --num-layers 4 --hidden-size 1024 --num-attention-heads 16 "
    "--seq-length 1024 --max-position-embeddings 1024 --micro-batch-size 2 "
    "--global-batch-size 64 --fp16 --deepspeed ";

}  // namespace

TEST_CASE("megatron_deepspeed_run_1t_reads_the_here_document_zero3_offload") {
  // examples_deepspeed/azure/run-1t.sh writes ds_config.json with `cat <<EOT > $DS_CONFIG`:
  // "stage": 3 (line 74) and offload_optimizer "device": "$OFFLOAD_DEVICE" = "cpu" (lines 55, 84),
  // fp16 enabled (line 93); the launch passes --no-pipeline-parallel, --checkpoint-activations,
  // --cpu-optimizer and --deepspeed-activation-checkpointing.
  ImportResult r = import_script("run-1t.sh", world(1, 8));
  CHECK(r.plan["parallelism"]["data_parallel"] == "zero3");
  CHECK(r.plan["training"]["offload_optimizer"] == "cpu");
  CHECK(r.plan["training"]["param_dtype"] == "fp16");
  // ZeRO-3 reduces gradients in every backward (deepspeed/runtime/engine.py).
  CHECK(r.plan["training"]["grad_sync"] == "every_microbatch");
  // The fork's transformer.py:2082: --checkpoint-activations recomputes every layer.
  CHECK(r.plan["training"]["activation_checkpointing"] == "full");
  // Every fork flag is the fork's: none is "check the spelling".
  CHECK_MESSAGE(findings(r, "unknown-key") == 0, r.plan["notes"].dump(1));
  // The offload_optimizer line of the here-document is where the plan's offload comes from.
  CHECK(r.positions.at("/training/offload_optimizer") == 83);
}

TEST_CASE("megatron_deepspeed_moe64_reads_deepspeed_moe") {
  // examples_deepspeed/MoE/ds_pretrain_gpt_125M_MoE64.sh with NUM_GPUS=64 (the script asks ds_ssh):
  // 12 layers, --num-experts 64, --moe-expert-parallel-size 64, top-1 (the fork's --topk default,
  // arguments.py:612), experts every 2nd layer (--expert-interval default 2, arguments.py:614;
  // transformer.py:1658), capacity factor 1.0 with token dropping (MOE_DROP_TOKEN=true).
  ImportOptions o = world(8, 8);
  o.sets = {{"NUM_GPUS", "64"}, {"NUM_GPUS_PERNODE", "8"}};
  ImportResult r = import_script("ds_pretrain_gpt_125M_MoE64.sh", o);
  const auto& m = r.plan["model"];
  REQUIRE(m.is_object());
  CHECK(m["experts"] == 64);
  CHECK(m["experts_per_token"] == 1);
  CHECK(m["moe_layer_freq"] == 2);
  CHECK(r.plan["parallelism"]["expert_capacity_factor"] == 1.0);
  CHECK(r.plan["parallelism"]["moe_dispatcher"] == "alltoall");
  // EP groups are 64 consecutive data-parallel ranks (deepspeed/utils/groups.py): dp 64 = 1 x ep 64.
  const auto& dims = r.plan["mesh"]["dims"];
  const auto& shape = r.plan["mesh"]["shape"];
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == "ep") CHECK(shape[i] == 64);
    if (dims[i] == "dp") CHECK(shape[i] == 1);
  }
  // The ds_config is made by sed over a template: not read, and said, with the stage assumed.
  CHECK(findings(r, "setting-unmodelled", "ds_config") >= 1);
  CHECK(findings(r, "unknown-key") == 0);
  CHECK(r.plan["training"]["activation_checkpointing"] == "full");
}

TEST_CASE("megatron_deepspeed_pr_moe_list_is_refused_when_ep_does_not_divide") {
  // examples_deepspeed/MoE/ds_pretrain_gpt_350M_PR-MoE32or64.sh: --num-experts "32 ... 64 64" with
  // --moe-expert-parallel-size 64 (NUM_GPUS). DeepSpeed asserts num_experts % ep_size == 0
  // (deepspeed/moe/layer.py:59): 32 % 64 fails.
  auto r = import_file("megatron", data_path("megatron-deepspeed/ds_pretrain_gpt_350M_PR-MoE32or64.sh"), world(8, 8));
  REQUIRE(!r.is_ok());
  CHECK(r.message().find("--num-experts 32 is not divisible by --moe-expert-parallel-size 64") != std::string::npos);
  // With ep 32 it runs: every MoE layer priced with the largest count, said; the residual MLP (PR-MoE,
  // --mlp-type residual, transformer.py:1076 use_residual) as one shared expert.
  ImportOptions o = world(8, 8);
  o.sets = {{"EP_PARALLEL_SIZE", "32"}};
  ImportResult ok = import_script("ds_pretrain_gpt_350M_PR-MoE32or64.sh", o);
  CHECK(ok.plan["model"]["experts"] == 64);
  CHECK(ok.plan["model"]["shared_experts"] == 1);
  CHECK(findings(ok, "setting-unmodelled", "--num-experts 32 32") == 1);
}

TEST_CASE("megatron_deepspeed_zero_stage_without_config_and_conflicts") {
  // No ds_config readable: the engine's stage is unknown; --zero-stage 2 priced, said.
  ImportResult r = import_ok(&import_megatron,
                             kGpt + "--no-pipeline-parallel --deepspeed_config ds.json --zero-stage 2", world(1, 8));
  CHECK(r.plan["parallelism"]["data_parallel"] == "zero2");
  CHECK(findings(r, "setting-unmodelled", "--zero-stage 2") == 1);
  // ZeRO-2 under DeepSpeed's PipelineEngine (no --no-pipeline-parallel): engine.py:76 asserts.
  const std::string e = import_error(&import_megatron, kGpt + "--deepspeed_config ds.json --zero-stage 2", world(1, 8));
  CHECK(e.find("incompatible with pipeline parallelism") != std::string::npos);
  // --no-pipeline-parallel with pp 2: the fork asserts pp == 1 (arguments.py:94-96).
  const std::string pp = import_error(
      &import_megatron, kGpt + "--no-pipeline-parallel --pipeline-model-parallel-size 2 --deepspeed_config ds.json",
      world(1, 8));
  CHECK(pp.find("--no-pipeline-parallel") != std::string::npos);
}

TEST_CASE("megatron_deepspeed_flags_are_the_forks") {
  // --topk is the fork's (arguments.py:612); --moe-router-topk is upstream's only: unknown to the fork.
  ImportResult r = import_ok(&import_megatron,
                             kGpt +
                                 "--no-pipeline-parallel --topk 2 --moe-router-topk 2 "
                                 "--lr-decay-tokens 300000000000 --partition-activations",
                             world(1, 8));
  CHECK(findings(r, "unknown-key", "--moe-router-topk") == 1);
  CHECK(findings(r, "unknown-key", "--topk") == 0);
  CHECK(findings(r, "unknown-key", "--lr-decay-tokens") == 0);
  CHECK(findings(r, "setting-unmodelled", "--partition-activations") == 1);
  // --deepspeed-activation-checkpointing alone recomputes nothing (transformer.py:2082-2090).
  ImportResult d =
      import_ok(&import_megatron, kGpt + "--no-pipeline-parallel --deepspeed-activation-checkpointing", world(1, 8));
  CHECK(d.plan["training"]["activation_checkpointing"] == "none");
}

TEST_CASE("megatron_deepspeed_pipeline_module_takes_uneven_stages_and_bf16_z0_is_zero1") {
  // bigscience's tr11-176B-ml.slurm (BLOOM: 70 layers over pp 12, --deepspeed, ZERO_STAGE=0 with
  // bf16): pretrain_gpt.py builds GPTModelPipe, a DeepSpeed PipelineModule that partitions the
  // layers itself (gpt_model.py partition_method), so Megatron's divisibility assert never runs.
  const std::string ds = "cat <<EOT > ds.json\n{\"train_micro_batch_size_per_gpu\": 1, \"train_batch_size\": 64, "
                         "\"zero_optimization\": {\"stage\": 0}, \"bf16\": {\"enabled\": true}}\nEOT\n";
  const std::string launch =
      "pretrain_gpt.py --num-layers 30 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
      "--max-position-embeddings 1024 --micro-batch-size 1 --global-batch-size 64 --vocab-size 50304 --bf16 "
      "--pipeline-model-parallel-size 4 --deepspeed --deepspeed_config ds.json\n";
  ImportResult r = import_ok(&import_megatron, ds + launch, world(1, 8), "train.sh");
  CHECK(any_contains(r.notes, "PipelineModule partitions them itself"));
  // A bf16 model under the PipelineEngine without ZeRO runs BF16_Optimizer, whose fp32 master
  // weights and optimizer states are a 1/dp partition (DeepSpeed bf16_optimizer.py:161-171@edaa722).
  CHECK(r.plan["parallelism"]["data_parallel"] == "zero1");
  // fp16 (FP16_Optimizer keeps everything on every rank) stays ddp.
  ImportResult fp16 = import_ok(&import_megatron, kGpt + "--pipeline-model-parallel-size 2 --zero-stage 0",
                                world(1, 8), "train.sh");
  CHECK(fp16.plan["parallelism"]["data_parallel"] == "ddp");
}

}  // namespace planck::import::test
