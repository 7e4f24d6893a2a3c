// Audit 9: launches and configs of sources not read before (alibaba/Megatron-LLaMA, LLM360's K2 and
// CrystalCoder, CarperAI/trlx, yangjianxin1/Firefly). Expected values from each framework's code, cited per case.

#include <doctest/doctest.h>

#include <string>

#include "tests/import/import_test_util.h"
#include "tests/import/priced.h"

namespace planck::import::test {

TEST_CASE("megatron_llama_launch_is_not_blooms_fork") {
  // alibaba/Megatron-LLaMA's examples/LLaMA/LLaMA_13_standalone.sh (@25306de) passes --tokenizer-name-or-path,
  // which the fork defines (megatron/arguments.py:1105) as BLOOM's fork does, with Megatron-LM's own
  // --sequence-parallel (:792), --swiglu (:558), --recompute-activations (:704), --use-flash-attn (:769),
  // --disable-bias-linear (:772) and the fork's own --RMSNorm (:570), --causal-lm (:572), --job-name (:799),
  // --overlapped-distributed-optimizer (:1007), --reduce-bucket-size (:1009). Read as BLOOM's fork, all
  // fifteen were "unknown, argparse refuses at start-up": false.
  const std::string text = replace(read_data("megatron-lm/audit9/megatron_llama_LLaMA_13_standalone.sh"),
                                   "--use-flash-attn\"", "--use-flash-attn --vocab-size 32000\"");
  auto r = import_ok(&import_megatron, text, world(1, 8), "LLaMA_13_standalone.sh");
  CHECK(findings(r, "unknown-key") == 0);
  for (const auto& n : r.plan["notes"]) CHECK(n.get<std::string>().find("BLOOM's fork") == std::string::npos);
  CHECK(r.plan["parallelism"]["sequence_parallel"] == true);
  // fused_layer_norm.py:89: --RMSNorm is upstream's --normalization RMSNorm.
  // --overlapped-distributed-optimizer shards the optimizer's states over dp (README
  // "OverlappedDistributedOptimizer"); priced as Megatron-LM's distributed optimizer, and said.
  CHECK(r.plan["parallelism"]["data_parallel"] == "zero1");
  CHECK(finding_says(r, "setting-unmodelled", "--overlapped-distributed-optimizer"));
  // llama_model.py:75-81: --causal-lm unties the output layer (an nn.Linear(hidden, vocab) on every tp rank).
  CHECK_FALSE(r.plan["model"].value("tied_embeddings", false));  // absent: untied (plan.h default)
  CHECK(finding_says(r, "setting-unmodelled", "--causal-lm"));
  // arguments.py:425 --transformer-impl local by default: the fork's ParallelAttention, whose --use-flash-attn
  // runs flash-attn's FlashSelfAttention (model/transformer.py:419-420, :475-476).
  CHECK(r.plan["training"]["attention_kernel"] == "fa2");
  // Memory: 40 layers x (4 x 5120^2 + 3 x 5120 x 13824) + 2 x 32000 x 5120 = 13.02e9 parameters, 6.51e9 per
  // GPU at tp 2. bf16 weights 13.0 GB + fp32 gradients 26.0 GB + Adam's fp32 master and two moments
  // 78.1 GB: 117 GB, over the H100's 80 GB before any activation, when the optimizer is not sharded. Sharded
  // over dp 8 / 2 = 4, the optimizer is 19.5 GB: 58.5 GB before activations, which fit. planck said
  // memory-exceeds for a run the fork's README trains on 80 GB A100s: false.
  // Priced as verify prices it (the simulator's memory rules; the core-only verify(r) has none), on
  // the README's 80 GB A100s.
  r.plan["cluster"]["gpu"] = "a100-80g";
  Priced p = price(r.plan);
  CHECK(static_cast<double>(p.memory.optimizer) == doctest::Approx(19.5e9).epsilon(0.02));
  for (const core::Diagnostic& d : p.diags.items()) CHECK_MESSAGE(d.rule != "memory-exceeds", d.message);
}

TEST_CASE("megatron_upstream_tokenizer_flag_alone_still_reads_as_blooms_fork") {
  // Without a flag only Megatron-LLaMA defines, --tokenizer-name-or-path still says BLOOM's fork
  // (bigscience megatron/arguments.py @8387ae17), as before.
  const std::string text =
      "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 4 "
      "--seq-length 128 --micro-batch-size 1 --global-batch-size 8 --vocab-size 1000 "
      "--tokenizer-name-or-path t --sequence-parallel\n";
  auto r = import_ok(&import_megatron, text, world(1, 8), "bloom.sh");
  CHECK(finding_says(r, "unknown-key", "--sequence-parallel"));
}

TEST_CASE("megatron_srun_world_is_the_sbatch_request_not_an_unexported_world_size") {
  // alibaba/Megatron-LLaMA's examples/LLaMA/LLaMA_13_slurm.sh (@25306de): "#SBATCH ... --nodes=512
  // --ntasks-per-node=8" and `srun ... sh -c "python -u pretrain_llama.py ..."`; WORLD_SIZE=8 is a plain
  // variable naming the job (JOB_NAME), never exported nor passed. srun starts 512 x 8 = 4096 ranks; the fork
  // takes its world from the environment (megatron/arguments.py:51). planck read world 8, one node: false.
  auto r = import_data_ok("megatron", "megatron-lm/audit9/megatron_llama_LLaMA_13_slurm.sh", ImportOptions{});
  CHECK(r.plan["cluster"]["nodes"] == 512);
  CHECK(r.plan["cluster"]["gpus_per_node"] == 8);
  // dp = 4096 / tp 2 = 2048: --global-batch-size 2048 is not a multiple of micro 4 x dp 2048 = 8192, which
  // the fork's microbatches.py:64 asserts at start-up: an error, as the run would stop.
  CHECK(error_rules(verify(r)).find("batch") != std::string::npos);
}

}  // namespace planck::import::test
