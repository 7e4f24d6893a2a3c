// Megatron-LM's pipeline-split and MoE token-dispatcher flags (import/megatron/moe.cc): flags as
// Megatron-LM's own CI configs write them (NVIDIA/Megatron-LM@d98e8a64dd
// tests/functional_tests/test_cases/..., cited per case), defaults from
// megatron/core/transformer/transformer_config.py.

#include <doctest/doctest.h>

#include <string>

#include "tests/import/import_test_util.h"

namespace planck::import::test {
namespace {

const std::string kMoe =
    "--num-layers 6 --hidden-size 1024 --num-attention-heads 16 --seq-length 4096 "
    "--num-experts 8 --moe-router-topk 2 --expert-model-parallel-size 4 --micro-batch-size 1 ";

}  // namespace

TEST_CASE("import_megatron_account_for_embedding_and_loss_split_verifies") {
  // gpt/gpt3_mcore_te_tp1_pp4_vp2_account_for_embedding_loss_in_pipeline_split/model_config.yaml:
  // 6 layers, pp 4, 2 virtual stages per rank, both account-for flags: (6 + 2) / 4 / 2 = 1 per chunk.
  ImportResult r =
      import_ok(&import_megatron,
                "--micro-batch-size 1 --num-layers 6 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
                "--pipeline-model-parallel-size 4 --num-virtual-stages-per-pipeline-rank 2 "
                "--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split",
                world(1, 8));
  CHECK(r.plan["parallelism"]["account_for_embedding_in_pipeline_split"] == true);
  CHECK(r.plan["parallelism"]["account_for_loss_in_pipeline_split"] == true);
  CHECK(r.plan["parallelism"]["virtual_stages"] == 2);
  core::Diagnostics d = verify(r);
  CHECK_MESSAGE(!d.has_errors(), error_rules(d));
  // --num-layers-per-virtual-pipeline-stage 1 counts the embedding and loss: (6 + 2) / 4 / 1 = 2
  // chunks per rank (megatron/training/arguments.py:962-975).
  ImportResult per =
      import_ok(&import_megatron,
                "--micro-batch-size 1 --num-layers 6 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
                "--pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 1 "
                "--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split",
                world(1, 8));
  CHECK(per.plan["parallelism"]["virtual_stages"] == 2);
}

TEST_CASE("import_megatron_uneven_first_last_stage_and_layout") {
  // gpt/gpt3_mcore_te_tp1_pp4_vp1_uneven_pipeline/model_config.yaml: 12 layers, pp 4,
  // --decoder-first/last-pipeline-num-layers 2.
  ImportResult r =
      import_ok(&import_megatron,
                "--micro-batch-size 1 --num-layers 12 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
                "--pipeline-model-parallel-size 4 --decoder-first-pipeline-num-layers 2 "
                "--decoder-last-pipeline-num-layers 2",
                world(1, 8));
  CHECK(r.plan["parallelism"]["first_stage_layers"] == 2);
  CHECK(r.plan["parallelism"]["last_stage_layers"] == 2);
  CHECK(!verify(r).has_errors());
  // moe/gpt3_moe_mcore_te_tp2_pp2_ep4_etp1_no_mtp_no_a2a_ovlp_fine_grained_offloading/model_config.yaml:
  // 15 layers, pp 2, "Et*3|(tt|)*6L": 8 stages, 4 per rank, interleaved.
  ImportResult l =
      import_ok(&import_megatron,
                "--micro-batch-size 1 --num-layers 15 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
                "--pipeline-model-parallel-size 2 --pipeline-model-parallel-layout 'Et*3|(tt|)*6L'",
                world(1, 8));
  CHECK(l.plan["parallelism"]["pipeline_layout"] == "Et*3|(tt|)*6L");
  CHECK(l.plan["parallelism"]["virtual_stages"] == 4);
  CHECK(l.plan["parallelism"]["pipeline_schedule"] == "interleaved_1f1b");
  CHECK(!verify(l).has_errors());
  // 7 stages over pp 2: Megatron's arguments.py asserts; the import refuses naming it.
  CHECK(import_error(&import_megatron,
                     "--num-layers 13 --hidden-size 1024 --num-attention-heads 16 --pipeline-model-parallel-size 2 "
                     "--pipeline-model-parallel-layout 'Et*3|(tt|)*5L'",
                     world(1, 8))
            .find("not a multiple of pp 2") != std::string::npos);
}

TEST_CASE("import_megatron_token_dispatcher") {
  // TransformerConfig.moe_token_dispatcher_type defaults to allgather (transformer_config.py:891).
  ImportResult def = import_ok(&import_megatron, kMoe, world(1, 8));
  CHECK(def.plan["parallelism"]["moe_dispatcher"] == "allgather");
  ImportResult a2a = import_ok(&import_megatron, kMoe + "--moe-token-dispatcher-type alltoall", world(1, 8));
  CHECK(a2a.plan["parallelism"]["moe_dispatcher"] == "alltoall");
  // mixtral/deepseekv3_proxy_flex_tp1pp4emp16etp1cp1_release/model_config.yaml:103-104: flex + hybridep.
  ImportResult hy = import_ok(&import_megatron,
                              kMoe + "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep",
                              world(1, 8));
  CHECK(hy.plan["parallelism"]["moe_dispatcher"] == "hybridep");
  ImportResult dp = import_ok(&import_megatron, kMoe + "--moe-token-dispatcher-type flex --moe-enable-deepep",
                              world(1, 8));
  CHECK(dp.plan["parallelism"]["moe_dispatcher"] == "deepep");
  ImportResult flex = import_ok(&import_megatron, kMoe + "--moe-token-dispatcher-type flex", world(1, 8));
  CHECK(flex.plan["parallelism"]["moe_dispatcher"] == "deepep");  // backend default "deepep" (:898)
  // --moe-enable-deepep without flex: Megatron raises ValueError (transformer_config.py:1743-1745).
  CHECK(import_error(&import_megatron, kMoe + "--moe-token-dispatcher-type alltoall --moe-enable-deepep", world(1, 8))
            .find("needs --moe-token-dispatcher-type flex") != std::string::npos);
}

TEST_CASE("import_torchtitan_expert_parallel_comm_backend") {
  // torchtitan job_config.py (pytorch/torchtitan@d021aa9c torchtitan/config/job_config.py:414):
  // expert_parallel_comm_backend "standard" | "deepep".
  const std::string toml = R"([model]
name = "deepseek_v3"
flavor = "16B"
[training]
local_batch_size = 4
seq_len = 4096
[parallelism]
data_parallel_shard_degree = -1
expert_parallel_degree = 8
expert_parallel_comm_backend = "deepep"
)";
  ImportResult r = import_ok(&import_torchtitan, toml, world(2, 8), "ds.toml");
  CHECK(r.plan["parallelism"]["moe_dispatcher"] == "deepep");
}

TEST_CASE("import_megatron_runtime_flags_cuda_graphs_fp8_gathers_mtp") {
  // The model zoo's Qwen3-235B H100 command (NVIDIA/Megatron-LM@f13818d695
  // examples/moe-modelzoo/best_practice/qwen3/run_h100_235b.sh): Transformer Engine CUDA graphs
  // of the router and the dispatch preprocessing (nargs='+').
  ImportResult g = import_ok(&import_megatron,
                             kMoe + "--bf16 --cuda-graph-impl transformer_engine --cuda-graph-scope moe_router "
                                    "moe_preprocess --sequence-parallel",
                             world(1, 8));
  CHECK(g.plan["training"]["cuda_graphs"].dump() == R"(["moe_router","moe_preprocess"])");
  // An empty module list graphs the whole layer; --cuda-graph-impl full_iteration the step.
  ImportResult layer = import_ok(&import_megatron, kMoe + "--bf16 --cuda-graph-impl local", world(1, 8));
  CHECK(layer.plan["training"]["cuda_graphs"].dump() == R"(["layer"])");
  ImportResult step = import_ok(&import_megatron, kMoe + "--bf16 --cuda-graph-impl full_iteration", world(1, 8));
  CHECK(step.plan["training"]["cuda_graphs"].dump() == R"(["full_iteration"])");
  ImportResult none = import_ok(&import_megatron, kMoe + "--bf16", world(1, 8));
  CHECK_FALSE(none.plan["training"].contains("cuda_graphs"));
  // --fp8-param-gather with FP8 linears (arguments.py: distributed optimizer or Megatron-FSDP)
  // and the DeepSeek-V3 recipe's --mtp-num-layers 1.
  ImportResult fp8 = import_ok(&import_megatron,
                               kMoe + "--bf16 --use-distributed-optimizer --fp8-format e4m3 --fp8-recipe blockwise "
                                      "--fp8-param-gather --mtp-num-layers 1",
                               world(1, 8));
  CHECK(fp8.plan["parallelism"]["fp8_param_gather"] == true);
  CHECK(fp8.plan["training"]["mtp_layers"] == 1);
  CHECK_FALSE(any_contains(fp8.warnings, "fp8-param-gather"));
  // Megatron-FSDP's gradient communication dtype is what its reduce-scatters carry.
  ImportResult fsdp = import_ok(&import_megatron,
                                kMoe + "--bf16 --use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params "
                                       "--megatron-fsdp-grad-comm-dtype bf16",
                                world(1, 8));
  CHECK(fsdp.plan["training"]["reduce_dtype"] == "bf16");
  CHECK(fsdp.plan["training"]["stack"] == "megatron");
  core::Diagnostics d = verify(fsdp);
  CHECK_MESSAGE(!d.has_errors(), error_rules(d));
}

}  // namespace planck::import::test
