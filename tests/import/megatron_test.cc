// Megatron-LM importer: the Megatron-FSDP example script and argument files.
// Expected values follow parallel_state.py / arguments.py (docs/sources/mesh.md §3).

#include <doctest/doctest.h>

#include <string>

#include "core/plan/plan.h"
#include "tests/import/import_test_util.h"

namespace planck::import::test {
namespace {

using Groups = std::vector<std::vector<std::int64_t>>;

std::string uncomment(std::string s, const std::string& what) {
  auto p = s.find("# " + what);
  REQUIRE_MESSAGE(p != std::string::npos, "test setup: '# " << what << "' not found");
  return s.erase(p, 2);
}

const std::string kModel =
    "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 --micro-batch-size 1 ";

TEST_CASE("import_megatron_fsdp_example_script") {
  const std::string text = read_data("megatron-lm/train_llama3_8b_fsdp_h100_fp8.sh");
  ImportResult r = import_ok(&import_megatron, text, ImportOptions{}, "train.sh");
  // GPUS_PER_NODE=8, NUM_NODES=1 reach torchrun as --nproc_per_node 8 --nnodes 1.
  CHECK(r.plan["cluster"]["nodes"] == 1);
  CHECK(r.plan["cluster"]["gpus_per_node"] == 8);
  // Order tp-cp-ep-dp-pp, fastest first -> mesh (pp, dp, cp, tp); dp = 8 / (1 * 1 * 1).
  CHECK(dims_of(r) == Dims{"pp", "dp", "cp", "tp"});
  CHECK(shape_of(r) == Shape{1, 8, 1, 1});
  CHECK(r.plan["parallelism"]["data_parallel"] == "fsdp");     // optim_grads_params
  CHECK(r.plan["parallelism"]["sequence_parallel"] == false);  // tp == 1 disables it
  // 32 layers, 4096 hidden, 14336 ffn, 32 heads, 8 query groups, vocab 128256 (already a
  // multiple of 128 x tp 1), untied: Llama 3 8B.
  CHECK(r.plan["model"] == "llama3-8b");
  // micro 1, global 128, dp 8 -> 128 / (1 * 8) = 16 micro-batches per step.
  CHECK(r.plan["training"]["global_batch"] == 128);
  CHECK(r.plan["training"]["micro_batch"] == 1);
  CHECK(r.plan["training"]["grad_accumulation"] == 128 / (1 * 8));
  CHECK(r.plan["training"]["seq_len"] == 8192);
  CHECK(r.plan["training"]["param_dtype"] == "bf16");
  CHECK(r.plan["training"]["reduce_dtype"] == "fp32");
  CHECK(r.plan["training"]["grad_sync"] == "every_microbatch");  // sharded Megatron-FSDP gradients
  CHECK(any_contains(r.hints, "line 128: commented out, not applied: --num-distributed-optimizer-instances 2"));
  CHECK(any_contains(r.hints, "contiguous shard groups of 4"));
  core::Diagnostics d = verify(r);
  CHECK_MESSAGE(!d.has_errors(), error_rules(d));

  // --nodes 2 on the command line wins over the script: dp = 16 / 1 = 16, 128 / 16 = 8.
  ImportResult two = import_ok(&import_megatron, text, world(2, 8), "train.sh");
  CHECK(shape_of(two) == Shape{1, 16, 1, 1});
  CHECK(two.plan["training"]["grad_accumulation"] == 8);
  CHECK(any_contains(two.notes, "--nodes 2 overrides 1"));
}

TEST_CASE("import_megatron_fp8_format_and_recipe_are_training_fp8") {
  // The FSDP example runs --fp8-format hybrid with Megatron's default --fp8-recipe delayed
  // (arguments.py): per-tensor delayed scaling, training.fp8 tensorwise; bf16 parameters stay.
  const std::string text = read_data("megatron-lm/train_llama3_8b_fsdp_h100_fp8.sh");
  ImportResult r = import_ok(&import_megatron, text, ImportOptions{}, "train.sh");
  CHECK(r.plan["training"]["fp8"] == "tensorwise");
  CHECK(r.plan["training"]["param_dtype"] == "bf16");
  const std::string base = kModel + "--bf16 --micro-batch-size 1 --global-batch-size 8 ";
  auto fp8_of = [&](const std::string& flags) {
    ImportResult one = import_ok(&import_megatron, base + flags, world(1, 8), "args.txt");
    return one.plan["training"].value("fp8", std::string("absent"));
  };
  CHECK(fp8_of("") == "absent");
  CHECK(fp8_of("--fp8-format e4m3 --fp8-recipe tensorwise") == "tensorwise");
  CHECK(fp8_of("--fp8-format e4m3 --fp8-recipe blockwise") == "blockwise");
  CHECK(fp8_of("--fp8-format e4m3 --fp8-recipe mxfp8") == "mxfp8");
}

TEST_CASE("import_megatron_attention_backend_names_the_kernel") {
  // language_module.py: flash -> NVTE_FLASH_ATTN only, fused -> NVTE_FUSED_ATTN only, unfused ->
  // TE's unfused path; local is Megatron's own DotProductAttention (scores materialised), as is
  // --transformer-impl local; auto (the default) leaves Transformer Engine to pick.
  const std::string base = kModel + "--bf16 --micro-batch-size 1 --global-batch-size 8 ";
  auto training = [&](const std::string& flags) {
    return import_ok(&import_megatron, base + flags, world(1, 8), "args.txt").plan["training"];
  };
  CHECK(training("--attention-backend flash")["attention_kernel"] == "fa2");
  CHECK(training("--attention-backend fused")["attention_kernel"] == "cudnn");
  CHECK_FALSE(training("--attention-backend auto").contains("attention_kernel"));
  CHECK_FALSE(training("").contains("attention"));
  CHECK(training("--attention-backend unfused")["attention"] == "standard");
  CHECK(training("--attention-backend local")["attention"] == "standard");
  CHECK(training("--transformer-impl local")["attention"] == "standard");
  CHECK(training("--attention-backend AttnBackend.fused")["attention_kernel"] == "cudnn");  // a Bridge config's enum
  const ImportResult odd = import_ok(&import_megatron, base + "--attention-backend triton", world(1, 8), "args.txt");
  CHECK_FALSE(odd.plan["training"].contains("attention_kernel"));
  CHECK(any_contains(odd.warnings, "setting-unmodelled: --attention-backend triton"));
}

TEST_CASE("import_megatron_hfsdp_when_the_commented_flags_are_enabled") {
  std::string text = read_data("megatron-lm/train_llama3_8b_fsdp_h100_fp8.sh");
  text = uncomment(text, "--num-distributed-optimizer-instances 2");
  text = uncomment(text, "--outer-dp-sharding-strategy ${OUTER_SHARDING_STRATEGY}");
  ImportResult r = import_ok(&import_megatron, text, ImportOptions{}, "train.sh");
  CHECK(dims_of(r) == Dims{"pp", "dp_replicate", "dp_shard", "cp", "tp"});
  CHECK(shape_of(r) == Shape{1, 2, 4, 1, 1});
  CHECK(r.plan["parallelism"]["data_parallel"] == "hsdp");
  // docs/sources/mesh.md §3 M7: W=8, dp=8, N=2: intra [[0..3],[4..7]], inter [[0,4],[1,5],[2,6],[3,7]].
  CHECK(groups(r, {"dp_shard"}) == Groups{{0, 1, 2, 3}, {4, 5, 6, 7}});
  CHECK(groups(r, {"dp_replicate"}) == Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}});
  core::Diagnostics d = verify(r);
  CHECK_MESSAGE(!d.has_errors(), error_rules(d));
}

TEST_CASE("import_megatron_args_file_matches_the_parallel_state_docstring") {
  // initialize_model_parallel docstring (M1): W=16, tp=2, pp=4 -> dp=2.
  const std::string args = "--tensor-model-parallel-size 2\n--pipeline-model-parallel-size 4\n" + kModel +
                           "--micro-batch-size 2 --global-batch-size 32 --vocab-size 32000\n--sequence-parallel\n";
  ImportResult r = import_ok(&import_megatron, args, world(2, 8));
  CHECK(shape_of(r) == Shape{4, 2, 1, 2});
  CHECK(groups(r, {"tp"}) == Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}});
  CHECK(groups(r, {"dp"}) == Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}});
  CHECK(groups(r, {"pp"}) == Groups{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}});
  CHECK(r.plan["parallelism"]["data_parallel"] == "ddp");
  CHECK(r.plan["parallelism"]["sequence_parallel"] == true);
  CHECK(r.plan["parallelism"]["pipeline_schedule"] == "1f1b");
  // 32 / (2 * 2) = 8 micro-batches; vocab 32000 padded to a multiple of 128 * tp 2 = 256 -> 32000.
  CHECK(r.plan["training"]["grad_accumulation"] == 32 / (2 * 2));
  CHECK(r.plan["model"]["vocab"] == (32000 + 255) / 256 * 256);
  CHECK(r.plan["model"]["ffn_hidden"] == 4 * 4096);  // no --swiglu
  CHECK(r.plan["model"]["tied_embeddings"] == true);
  core::Diagnostics d = verify(r);
  CHECK_MESSAGE(!d.has_errors(), error_rules(d));
}

TEST_CASE("import_megatron_order_virtual_pipeline_and_distributed_optimizer") {
  ImportResult r = import_ok(&import_megatron,
                             "--pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 2 "
                             "--use-distributed-optimizer --use-tp-pp-dp-mapping " +
                                 kModel,
                             world(1, 8));
  CHECK(dims_of(r) == Dims{"dp", "pp", "cp", "tp"});  // order tp-cp-ep-pp-dp
  CHECK(shape_of(r) == Shape{2, 4, 1, 1});
  CHECK(r.plan["parallelism"]["data_parallel"] == "zero1");
  CHECK(r.plan["parallelism"]["virtual_stages"] == (32 / 4) / 2);
  CHECK(r.plan["parallelism"]["pipeline_schedule"] == "interleaved_1f1b");
  ImportResult fsdp_no_shard =
      import_ok(&import_megatron,
                "--micro-batch-size 1 --use-custom-fsdp --data-parallel-sharding-strategy=no_shard "
                "--use-distributed-optimizer",
                world(1, 8));
  CHECK(fsdp_no_shard.plan["parallelism"]["data_parallel"] == "zero1");
  ImportResult fsdp_optim =
      import_ok(&import_megatron,
                "--micro-batch-size 1 --use-megatron-fsdp --data-parallel-sharding-strategy optim_grads", world(1, 8));
  CHECK(fsdp_optim.plan["parallelism"]["data_parallel"] == "zero2");
  CHECK(import_error(&import_megatron, "--num-layers-per-virtual-pipeline-stage 2 " + kModel, world(1, 8))
            .find("pipeline-model-parallel-size > 1") != std::string::npos);
}

// Megatron's DDP settings planck times: the parameter all-gather overlapped with the next forward
// (distributed optimizer only) and the bucket of --overlap-grad-reduce: --ddp-bucket-size, else
// max(4e7, 1e6 x dp) parameters (megatron/core/distributed/distributed_data_parallel.py).
TEST_CASE("import_megatron_overlap_flags_and_ddp_bucket") {
  ImportResult r =
      import_ok(&import_megatron, "--use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather " + kModel,
                world(8, 8));
  CHECK(r.plan["parallelism"]["overlap_param_gather"] == true);
  CHECK(r.plan["parallelism"]["dp_bucket_params"] == 64000000);  // dp 64: 1e6 x 64 > 4e7
  ImportResult small =
      import_ok(&import_megatron, "--overlap-grad-reduce --overlap-param-gather " + kModel, world(1, 8));
  CHECK_FALSE(small.plan["parallelism"].contains("overlap_param_gather"));  // plain DDP gathers nothing
  CHECK(small.plan["parallelism"]["dp_bucket_params"] == 40000000);
  ImportResult given =
      import_ok(&import_megatron, "--overlap-grad-reduce --ddp-bucket-size 1000 " + kModel, world(1, 8));
  CHECK(given.plan["parallelism"]["dp_bucket_params"] == 1000);
  ImportResult none = import_ok(&import_megatron, "--use-distributed-optimizer " + kModel, world(1, 8));
  CHECK(none.plan["parallelism"]["dp_bucket_params"] == planck::core::kMaxBucketParams);  // one bucket
}

TEST_CASE("import_megatron_sizes_the_world_cannot_hold") {
  for (std::int64_t tp : {1, 2, 3, 7, 8, 16}) {
    CAPTURE(tp);
    ImportResult r =
        import_ok(&import_megatron, "--tensor-model-parallel-size " + std::to_string(tp) + " " + kModel, world(1, 8));
    if (8 % tp == 0) {
      CHECK(shape_of(r) == Shape{1, 8 / tp, 1, tp});
    } else {
      CHECK(shape_of(r)[1] == -1);  // Megatron's RuntimeError, kept for verify
      CHECK(verify(r).has_rule("mesh-world-mismatch"));
    }
  }
  const std::string e = import_error(
      &import_megatron, "--use-distributed-optimizer --num-distributed-optimizer-instances 3", world(1, 8));
  CHECK(e.find("dp 8 x cp 1 = 8, instances 3") != std::string::npos);
  CHECK(import_error(&import_megatron, "--expert-model-parallel-size 3", world(1, 8))
            .find("expert_model_parallel_size 3") != std::string::npos);
  ImportResult bad_batch = import_ok(&import_megatron, kModel + "--global-batch-size 100", world(1, 8));
  CHECK(verify(bad_batch).has_rule("batch-indivisible"));
}

TEST_CASE("import_megatron_without_vocab_size_takes_the_preset_of_the_same_shape") {
  // examples/gpt3/train_gpt3_175b_distributed.sh gives the shape but leaves the vocabulary to
  // --vocab-file: GPT-3 175B is 96 layers, hidden 12288, 96 heads (Brown et al. 2020, Table 2.1)
  // with GPT-2's 50257-token BPE, padded to a multiple of 128 x tp (arguments.py
  // _vocab_size_with_padding): tp 8 -> multiple 1024 -> 50176 + 1024 = 51200.
  ImportResult r =
      import_ok(&import_megatron,
                "--micro-batch-size 1 --num-layers 96 --hidden-size 12288 --num-attention-heads 96 --seq-length 2048 "
                "--tensor-model-parallel-size 8 --vocab-file gpt2-vocab.json",
                world(1, 8));
  REQUIRE(r.plan.contains("model"));
  CHECK(r.plan["model"]["vocab"] == 51200);
  // A vocabulary taken from a preset is a guess (issue 30: Mistral-7B became 128,256): a warning
  // in every output, not a note only --explain shows.
  CHECK(any_contains(r.warnings, "no --vocab-size: vocab 50257 guessed from preset gpt3-175b"));
  CHECK(r.findings.size() == 1);
  CHECK(r.findings[0].rule == "setting-unmodelled");
}

TEST_CASE("import_megatron_bad_values_and_unknown_flags") {
  const std::string e = import_error(&import_megatron, "\n--tensor-model-parallel-size two\n", world(1, 8));
  CHECK(e.find("config:2: --tensor-model-parallel-size needs an integer, got 'two'") != std::string::npos);
  CHECK(import_error(&import_megatron, "--tensor-model-parallel-size 0", world(1, 8)).find("must be >= 1") !=
        std::string::npos);
  CHECK(
      import_error(&import_megatron, "TP=\npython pretrain_gpt.py --tensor-model-parallel-size $TP --bf16", world(1, 8))
          .find("config:2: --tensor-model-parallel-size has no value") != std::string::npos);
  CHECK(import_error(&import_megatron, "echo hello\n", world(1, 8)).find("no Megatron launch command") !=
        std::string::npos);
  CHECK(import_error(&import_megatron, "ARGS=(--tp \"2)\n", world(1, 8)).find("unterminated") != std::string::npos);
  ImportResult r = import_ok(&import_megatron, kModel + "--foo-parallel-size 2", world(1, 8));
  CHECK(any_contains(r.warnings, "unknown-key: --foo-parallel-size is not a key the framework knows"));
  CHECK(any_contains(r.warnings, "no --vocab-size"));
}

// --recompute-granularity full with --recompute-method block recomputes only the first
// --recompute-num-layers layers of each pipeline chunk (megatron/core/transformer/
// transformer_block.py _checkpointed_forward); uniform recomputes all of them.
TEST_CASE("import_megatron_block_recompute_keeps_its_layer_count") {
  ImportResult block = import_ok(
      &import_megatron, "--recompute-granularity full --recompute-method block --recompute-num-layers 3 " + kModel,
      world(1, 8));
  CHECK(block.plan["training"]["activation_checkpointing"] == "full");
  CHECK(block.plan["training"]["recompute_num_layers"] == 3);
  CHECK(!verify(block).has_errors());
  ImportResult uniform = import_ok(
      &import_megatron, "--recompute-granularity full --recompute-method uniform --recompute-num-layers 4 " + kModel,
      world(1, 8));
  CHECK(uniform.plan["training"]["activation_checkpointing"] == "full");
  CHECK_FALSE(uniform.plan["training"].contains("recompute_num_layers"));
  CHECK(any_contains(uniform.notes, "--recompute-method uniform"));
}

}  // namespace
}  // namespace planck::import::test
