// Megatron-LM flags an audit of third-party launch scripts found misread (corpus2/megatron):
// each expected value is what Megatron-LM itself does with the flag, cited to its source at
// NVIDIA/Megatron-LM@d98e8a64 unless another commit is named.

#include <doctest/doctest.h>

#include <string>

#include "tests/import/import_test_util.h"

namespace planck::import::test {
namespace {

const std::string kBase = "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 "
                          "--vocab-size 32000 --micro-batch-size 1 --global-batch-size 8 ";

nlohmann::ordered_json training(const std::string& flags) {
  return import_ok(&import_megatron, kBase + flags, world(1, 8), "args.txt").plan["training"];
}

TEST_CASE("megatron_main_grads_dtype_bf16_keeps_gradients_in_bf16") {
  // megatron/training/arguments.py:1204-1217: with --bf16, accumulate_allreduce_grads_in_fp32 is
  // set only when main_grads_dtype is torch.float32; --main-grads-dtype bf16 leaves the gradient
  // buffers and their reduction in bf16.
  CHECK(training("--bf16")["reduce_dtype"] == "fp32");
  CHECK(training("--bf16 --use-precision-aware-optimizer --main-grads-dtype bf16")["reduce_dtype"] == "bf16");
  CHECK(training("--bf16 --use-precision-aware-optimizer --main-grads-dtype fp32")["reduce_dtype"] == "fp32");
  // arguments.py:1209-1211 asserts main_grads_dtype == float32 under --accumulate-allreduce-grads-in-fp32.
  const std::string both = import_error(
      &import_megatron,
      kBase + "--bf16 --use-precision-aware-optimizer\n--main-grads-dtype bf16\n--accumulate-allreduce-grads-in-fp32",
      world(1, 8), "args.txt");
  CHECK(both.find("args.txt:2") != std::string::npos);
  CHECK(both.find("--accumulate-allreduce-grads-in-fp32") != std::string::npos);
  // megatron/core/optimizer/optimizer_config.py:468-480: without --use-precision-aware-optimizer
  // every one of these dtypes must be fp32.
  for (const char* flag : {"--main-grads-dtype bf16", "--exp-avg-dtype bf16", "--main-params-dtype fp16"}) {
    const std::string e = import_error(&import_megatron, kBase + "--bf16\n" + flag, world(1, 8), "args.txt");
    CHECK_MESSAGE(e.find("args.txt:2") != std::string::npos, e);
    CHECK_MESSAGE(e.find("--use-precision-aware-optimizer") != std::string::npos, e);
  }
}

TEST_CASE("megatron_precision_aware_optimizer_state_dtypes") {
  // arguments.py:3675-3684: --exp-avg-dtype / --exp-avg-sq-dtype bf16 store Adam's moments in bf16.
  const auto t = training("--bf16 --use-precision-aware-optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16");
  CHECK(t["optimizer_state_dtype"] == "bf16");
  CHECK_FALSE(training("--bf16 --use-precision-aware-optimizer").contains("optimizer_state_dtype"));
  // fp8 moments (torch.uint8, arguments.py:1078) have no planck pricing: said, priced as fp32.
  ImportResult r = import_ok(&import_megatron, kBase + "--bf16 --use-precision-aware-optimizer --exp-avg-dtype fp8",
                             world(1, 8), "args.txt");
  CHECK_FALSE(r.plan["training"].contains("optimizer_state_dtype"));
  CHECK(any_contains(r.warnings, "setting-unmodelled: --exp-avg-dtype fp8"));
}

TEST_CASE("megatron_use_flash_attn_is_flash_attention_for_the_legacy_model") {
  // --use-flash-attn (d693034, 2022-12) makes the legacy ParallelAttention run flash-attn's
  // FlashSelfAttention (megatron/legacy/model/transformer.py:541-547@8de8238^); Megatron-Core
  // models never read it. No s x s scores are kept: not standard attention.
  const auto legacy = training("--use-flash-attn --transformer-impl local --use-legacy-models");
  CHECK(legacy["attention_kernel"] == "fa2");
  CHECK_FALSE(legacy.contains("attention"));
  CHECK(training("--use-flash-attn --use-legacy-models")["attention_kernel"] == "fa2");
  // Without the flag, --transformer-impl local is Megatron's own unfused attention.
  CHECK(training("--transformer-impl local --use-legacy-models")["attention"] == "standard");
  // A Megatron-Core model with Transformer Engine ignores it: the stack's default kernel.
  const auto core_model = training("--use-flash-attn");
  CHECK_FALSE(core_model.contains("attention_kernel"));
  CHECK_FALSE(core_model.contains("attention"));
  // An explicit --attention-backend is what runs.
  CHECK(training("--use-flash-attn --use-legacy-models --attention-backend fused")["attention_kernel"] == "cudnn");
}

TEST_CASE("megatron_padded_vocab_size_is_the_models_vocabulary") {
  // megatron/training/argument_utils.py:474-480: vocab_size = padded_vocab_size with
  // should_pad_vocab False; build_tokenizer.py:149-152 pads the tokenizer's size only when it is None.
  const std::string flags = "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 "
                            "--micro-batch-size 1 --global-batch-size 8 --tensor-model-parallel-size 2 ";
  ImportResult alone = import_ok(&import_megatron, flags + "--padded-vocab-size 151936", world(1, 8), "args.txt");
  REQUIRE(alone.plan["model"].is_object());
  CHECK(alone.plan["model"]["vocab"] == 151936);
  // Not padded further, and it wins over --vocab-size (151643 would pad to 151808 at 128 x tp 2).
  ImportResult both = import_ok(&import_megatron, flags + "--vocab-size 151643 --padded-vocab-size 151937",
                                world(1, 8), "args.txt");
  CHECK(both.plan["model"]["vocab"] == 151937);
  CHECK(import_ok(&import_megatron, flags + "--vocab-size 151643", world(1, 8), "args.txt").plan["model"]["vocab"] ==
        (151643 + 255) / 256 * 256);
}

TEST_CASE("megatron_without_micro_batch_size_is_refused_as_megatron_refuses_it") {
  // megatron/training/arguments.py:693 asserts args.micro_batch_size is not None (its default,
  // training_config.py:11), as every version since 9019bbf (2020-12) does: the job never starts.
  const std::string script = "#!/bin/bash\npython pretrain_gpt.py --num-layers 4 --hidden-size 512 \\\n"
                             "  --num-attention-heads 8 --seq-length 1024 --global-batch-size 8\n";
  const std::string e = import_error(&import_megatron, script, world(1, 8), "run.sh");
  CHECK_MESSAGE(e.find("run.sh:2: no --micro-batch-size") != std::string::npos, e);
  CHECK(e.find("add --micro-batch-size") != std::string::npos);
  // Before 9019bbf, --batch-size was the per-model-instance batch: the micro batch.
  ImportResult old = import_ok(&import_megatron,
                               "--num-layers 4 --hidden-size 512 --num-attention-heads 8 --seq-length 1024 "
                               "--vocab-size 32000 --batch-size 4",
                               world(1, 8), "args.txt");
  CHECK(old.plan["training"]["micro_batch"] == 4);
}

TEST_CASE("megatron_layers_not_divisible_by_pp_is_refused_as_megatron_refuses_it") {
  // megatron/training/arguments.py:984-998: with no --decoder-first/last-pipeline-num-layers, no
  // layout, no virtual stages per rank and no hybrid pattern, (num_layers [+1 embedding] [+1 loss])
  // % pp must be 0 ("Number of layers should be divisible by the pipeline-model-parallel size").
  const std::string model = "--hidden-size 1024 --num-attention-heads 16 --seq-length 1024 --vocab-size 32000 "
                            "--micro-batch-size 1 --pipeline-model-parallel-size 2\n";
  const std::string e = import_error(&import_megatron, model + "--num-layers 27", world(1, 8), "args.txt");
  CHECK_MESSAGE(e.find("args.txt:2: --num-layers 27 is not divisible by --pipeline-model-parallel-size 2") !=
                    std::string::npos,
                e);
  // The embedding counted as a layer makes 28 units: 14 a stage.
  import_ok(&import_megatron, model + "--num-layers 27 --account-for-embedding-in-pipeline-split", world(1, 8));
  // An uneven first stage is Megatron's own way to split 27 layers (transformer_block.py
  // get_num_layers_to_build): the import reads it.
  ImportResult uneven = import_ok(&import_megatron, model + "--num-layers 27 --decoder-first-pipeline-num-layers 13",
                                  world(1, 8), "args.txt");
  CHECK(uneven.plan["parallelism"]["first_stage_layers"] == 13);
  // arguments.py:966-970: (layers / pp) % layers-per-virtual-stage must be 0 as well.
  CHECK(import_error(&import_megatron, model + "--num-layers 28 --num-layers-per-virtual-pipeline-stage 3",
                     world(1, 8), "args.txt")
            .find("layers per virtual stage") != std::string::npos);
}

TEST_CASE("megatron_cross_entropy_fusion_te_keeps_the_16_bit_logits") {
  // language_module.py compute_language_model_loss@d98e8a6: --cross-entropy-loss-fusion with
  // --cross-entropy-fusion-impl te runs Transformer Engine's parallel_cross_entropy; native (the
  // default, model_parallel_config.py:325) or no fusion, VocabParallelCrossEntropy's fp32 copy.
  CHECK_FALSE(training("--bf16").contains("cross_entropy"));
  CHECK_FALSE(training("--bf16 --cross-entropy-loss-fusion").contains("cross_entropy"));
  CHECK_FALSE(training("--bf16 --cross-entropy-fusion-impl te").contains("cross_entropy"));
  ImportResult r = import_ok(&import_megatron, kBase + "--bf16 --cross-entropy-loss-fusion\n--cross-entropy-fusion-impl te",
                             world(1, 8), "args.txt");
  CHECK(r.plan["training"]["cross_entropy"] == "te");
  // arguments.py:1697-1702 refuses the pair since #5115 (168cb15, 2026-06-03): said at its line.
  REQUIRE(r.findings.size() >= 1);
  bool said = false;
  for (const ImportFinding& f : r.findings) said = said || (f.line == 2 && f.message.find("#5115") != std::string::npos);
  CHECK(said);
  ImportResult odd = import_ok(&import_megatron, kBase + "--bf16 --cross-entropy-fusion-impl triton", world(1, 8),
                               "args.txt");
  CHECK(any_contains(odd.warnings, "setting-unmodelled: --cross-entropy-fusion-impl triton"));
}

TEST_CASE("megatron_use_torch_fsdp2_is_fsdp_and_refused_where_megatron_refuses_it") {
  // training.py wraps the model in TorchFullyShardedDataParallel (fully_shard over dp) with
  // --use-torch-fsdp2; arguments.py:1031-1047 asserts no pp, no ep, no distributed optimizer.
  ImportResult r = import_ok(&import_megatron, kBase + "--bf16 --use-torch-fsdp2", world(1, 8), "args.txt");
  CHECK(r.plan["parallelism"]["data_parallel"] == "fsdp");
  for (const char* flag : {"--pipeline-model-parallel-size 2", "--use-distributed-optimizer"}) {
    const std::string e = import_error(&import_megatron, kBase + "--bf16\n--use-torch-fsdp2\n" + std::string(flag),
                                       world(1, 8), "args.txt");
    CHECK_MESSAGE(e.find("args.txt:2") != std::string::npos, e);
  }
}

TEST_CASE("megatron_nodes_flag_is_what_slurm_sets_in_the_job") {
  // awslabs' gpt3 2.distributed-training.sbatch branches on NODES=${SLURM_JOB_NUM_NODES:-2}; under
  // `sbatch --nodes=8` Slurm sets SLURM_JOB_NUM_NODES=8 (sbatch(1) OUTPUT ENVIRONMENT VARIABLES),
  // over the script's #SBATCH --nodes=2, and so does planck's --nodes 8.
  const std::string script =
      "#!/bin/bash\n#SBATCH --nodes=2\nNODES=${SLURM_JOB_NUM_NODES:-2}\n"
      "if [ $NODES -ge 8 ]; then TP=8; else TP=4; fi\n"
      "torchrun --nnodes $NODES --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size $TP " + kBase + "\n";
  ImportResult two = import_ok(&import_megatron, script, ImportOptions{}, "job.sbatch");
  CHECK(two.plan["mesh"]["shape"].back() == 4);
  ImportOptions eight;
  eight.nodes = 8;
  ImportResult r = import_ok(&import_megatron, script, eight, "job.sbatch");
  CHECK(r.plan["mesh"]["shape"].back() == 8);
  CHECK(r.plan["cluster"]["nodes"] == 8);
}

TEST_CASE("megatron_torchrun_without_nproc_per_node_runs_one_process_a_node") {
  // torch/distributed/run.py (pytorch/pytorch v2.5): --nproc-per-node is an argparse action=env
  // option with default "1", read from $PET_NPROC_PER_NODE when the flag is absent. A launch that
  // states --nnodes alone starts one rank on each node.
  const std::string launch = "torchrun --nnodes 2 pretrain_gpt.py --tensor-model-parallel-size 2 " + kBase;
  ImportResult r = import_ok(&import_megatron, launch, ImportOptions{}, "run.sh");
  CHECK(r.plan["cluster"]["nodes"] == 2);
  CHECK(r.plan["cluster"]["gpus_per_node"] == 1);
  bool said = false;
  for (const ImportFinding& f : r.findings) said = said || (f.rule == "import-warning" && f.line == 1);
  CHECK(said);
  ImportResult env = import_ok(&import_megatron, "export PET_NPROC_PER_NODE=4\n" + launch, ImportOptions{}, "run.sh");
  CHECK(env.plan["cluster"]["gpus_per_node"] == 4);
  // The cluster on the command line settles it.
  ImportOptions eight;
  eight.gpus_per_node = 8;
  ImportResult given = import_ok(&import_megatron, launch, eight, "run.sh");
  CHECK(given.plan["cluster"]["gpus_per_node"] == 8);
  for (const ImportFinding& f : given.findings) CHECK(f.rule != "import-warning");
}

TEST_CASE("megatron_mpirun_ranks_are_the_world_and_unstated_gpus_per_node_are_said") {
  // rioyokotalab/Megatron-Llama2's ABCI scripts launch `mpirun -np $NUM_GPUS --npernode
  // $NUM_GPU_PER_NODE python pretrain_gpt.py` on 4-GPU V100 nodes: mpirun starts -np ranks,
  // --npernode on each node (OpenMPI mpirun(1)), one rank a GPU.
  ImportResult r = import_ok(&import_megatron, "mpirun -np 16 --npernode 4 python pretrain_gpt.py " + kBase,
                             ImportOptions{}, "run.sh");
  CHECK(r.plan["cluster"]["nodes"] == 4);
  CHECK(r.plan["cluster"]["gpus_per_node"] == 4);
  // Nodes stated (#SBATCH) but not the GPUs per node: 8 assumed, and said as a warning.
  ImportResult n = import_ok(&import_megatron, "#SBATCH --nodes=2\nsrun python pretrain_gpt.py " + kBase,
                             ImportOptions{}, "run.sh");
  CHECK(n.plan["cluster"]["gpus_per_node"] == 8);
  CHECK(any_contains(n.warnings, "not the GPUs per node: 8 assumed"));
}

TEST_CASE("megatron_llama2_tokenizer_type_guesses_llama2s_vocabulary") {
  // awslabs' llama2 70B sbatch and HYGON's Mixtral 8x7B pass --tokenizer-type Llama2Tokenizer with a
  // tokenizer.model and no --vocab-size: Megatron takes the vocabulary from that SentencePiece file,
  // Llama 2's 32000 pieces (meta-llama/Llama-2-70b-hf config.json "vocab_size": 32000; Mixtral's
  // too). The shape (80 layers, 8192, 64 heads, 8 groups) is also Llama 3 70B's, whose 128256 it got.
  const std::string llama2_70b = "--num-layers 80 --hidden-size 8192 --num-attention-heads 64 --group-query-attention "
                                 "--num-query-groups 8 --seq-length 4096 --micro-batch-size 1 --global-batch-size 8 "
                                 "--swiglu --tokenizer-model t.model\n--tokenizer-type Llama2Tokenizer";
  ImportResult r = import_ok(&import_megatron, llama2_70b, world(1, 8), "args.txt");
  // 32000 padded to a multiple of make_vocab_size_divisible_by 128 x tp 1: 32000.
  CHECK(r.plan["model"]["vocab"] == 32000);
  bool said = false;
  for (const ImportFinding& f : r.findings) {
    said = said || (f.line == 2 && f.message.find("vocab 32000") != std::string::npos);
  }
  CHECK(said);
  // --vocab-size wins over the guess.
  ImportResult given = import_ok(&import_megatron, llama2_70b + " --vocab-size 32768", world(1, 8), "args.txt");
  CHECK(given.plan["model"]["vocab"] == 32768);
}

TEST_CASE("megatron_checkpoint_flags_are_not_called_parallelism") {
  // --ckpt-fully-parallel-load (LLM360 k2v2) changes only how a checkpoint is read
  // (megatron/training/checkpointing.py:1935); --no-async-tensor-model-parallel-allreduce (ROCm's
  // examples) keeps TP input-gradient all-reduces unoverlapped, as planck prices them anyway.
  ImportResult r = import_ok(&import_megatron,
                             kBase + "--ckpt-fully-parallel-load --no-async-tensor-model-parallel-allreduce",
                             world(1, 8), "args.txt");
  CHECK_FALSE(any_contains(r.warnings, "looks parallelism-related"));
}

TEST_CASE("megatron_bcprun_runs_its_command_on_every_node_of_the_job") {
  // LLM360/k2-train scripts/pretrain_65b.sh: `bcprun -p 8 --env '...' -c 'python .../main.py --num-layers
  // 80 ...'`. NGC Base Command's bcprun runs the -c / --cmd text with -p / --npernode processes on each
  // of -n / --nnodes nodes, which default to the job's replicas: with no -n the node count is not in
  // the script.
  const std::string flags = "python main.py " + kBase + "--tensor-model-parallel-size 8";
  ImportResult both = import_ok(&import_megatron, "bcprun -n 4 -p 8 --env 'A=1' -c '" + flags + "'",
                                ImportOptions{}, "run.sh");
  CHECK(both.plan["cluster"]["nodes"] == 4);
  CHECK(both.plan["cluster"]["gpus_per_node"] == 8);
  CHECK(both.plan["mesh"]["shape"].back() == 8);
  ImportResult joined = import_ok(&import_megatron, "bcprun --nnodes=2 --npernode=4 --cmd='" + flags + "'",
                                  ImportOptions{}, "run.sh");
  CHECK(joined.plan["cluster"]["nodes"] == 2);
  CHECK(joined.plan["cluster"]["gpus_per_node"] == 4);
  ImportResult per_node = import_ok(&import_megatron, "bcprun -p 8 -c '" + flags + "'", ImportOptions{}, "run.sh");
  CHECK(per_node.world_assumed);
  ImportOptions sixty;
  sixty.nodes = 60;
  ImportResult given = import_ok(&import_megatron, "bcprun -p 8 -c '" + flags + "'", sixty, "run.sh");
  CHECK_FALSE(given.world_assumed);
  CHECK(given.plan["cluster"]["nodes"] == 60);
  CHECK(given.plan["cluster"]["gpus_per_node"] == 8);
}

TEST_CASE("megatron_rocm_launch_is_checked_on_an_amd_gpu") {
  // ROCm/Megatron-LM examples/llama/train_llama3.sh exports RCCL_MSCCL_ENABLE, HSA_NO_SCRATCH_RECLAIM
  // and NVTE_CK_* (Transformer Engine's ROCm build): variables only ROCm's runtime and libraries read.
  // The script does not say which Instinct part: the smallest-memory one, said, and --gpu settles it.
  const std::string script = "#!/bin/bash\nexport CUDA_DEVICE_MAX_CONNECTIONS=1\nexport HSA_NO_SCRATCH_RECLAIM=1\n"
                             "torchrun --nproc_per_node 8 pretrain_gpt.py " + kBase + "\n";
  ImportResult r = import_ok(&import_megatron, script, ImportOptions{}, "train.sh");
  CHECK(r.plan["cluster"]["gpu"] == "mi300x");
  REQUIRE(r.findings.size() >= 1);
  bool said = false;
  for (const ImportFinding& f : r.findings) {
    if (f.pointer != "/cluster/gpu") continue;
    said = true;
    CHECK(f.line == 3);
    CHECK(f.message.find("HSA_NO_SCRATCH_RECLAIM") != std::string::npos);
    CHECK(f.message.find("pass --gpu") != std::string::npos);
  }
  CHECK(said);
  // CUDA's own variables say nothing about the vendor: no GPU is named in the plan.
  ImportResult nvidia = import_ok(&import_megatron,
                                  "export CUDA_DEVICE_MAX_CONNECTIONS=1\ntorchrun --nproc_per_node 8 pretrain_gpt.py " +
                                      kBase,
                                  ImportOptions{}, "train.sh");
  CHECK_FALSE(nvidia.plan["cluster"].contains("gpu"));
}

}  // namespace
}  // namespace planck::import::test
