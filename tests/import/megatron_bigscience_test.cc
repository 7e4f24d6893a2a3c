// bigscience-workshop/Megatron-DeepSpeed launches (import/megatron/bigscience.cc): BLOOM's own
// training scripts (tests/data/import/megatron-deepspeed/, bigscience-workshop/bigscience @9e64edec,
// PROVENANCE.md), priced as `planck verify` prices them. Expected values come from the scripts'
// flags and the fork's code (@8387ae17 main, @a1d9317d lumi_mtf) and DeepSpeed's (@edaa722), cited.

#include <doctest/doctest.h>

#include <string>

#include "tests/import/import_test_util.h"
#include "tests/import/priced.h"

namespace planck::import::test {
namespace {

ImportResult import_script(const std::string& name, const ImportOptions& opts) {
  return import_data_ok("megatron", "megatron-deepspeed/" + name, opts);
}

std::string unknown_keys(const ImportResult& r) {
  std::string out;
  for (const ImportFinding& f : r.findings) out += f.rule == "unknown-key" ? f.message + "\n" : "";
  return out;
}

constexpr const char* kTr13 = "tr13-176B-mtf-xp3capmixnewcodelonglossseq.slurm";

}  // namespace

TEST_CASE("bigscience_tr13_bloomz_reads_the_forks_flags_and_bloom_176b") {
  // #SBATCH --nodes=36, 8 GPUs a node; PP_SIZE=72 TP_SIZE=1 (lines 59-60): dp = 288 / 72 = 4.
  ImportResult r = import_script(kTr13, world(36, 8));
  // --pp-partition-method, --pad-vocab-size-to, --position-embedding-type, --norm-target-loss,
  // --reset-progress, --kill-switch-path ... are the fork's (arguments.py@8387ae17:372,398,578;
  // @a1d9317d for the MTF flags): none is unknown.
  CHECK_MESSAGE(findings(r, "unknown-key") == 0, unknown_keys(r));
  // NLAYERS=70 NHIDDEN=14336 NHEADS=112 (lines 69-71); --pad-vocab-size-to 250880 is the vocabulary
  // (tokenizer.py:72-82 _vocab_size_with_padding: `after = args.pad_vocab_size_to`); ffn 4h by the
  // fork's default (arguments.py:243-244); no --glu-activation: a GELU MLP (transformer.py:73-79).
  const auto& m = r.plan["model"];
  REQUIRE(m.is_object());
  CHECK(m["layers"] == 70);
  CHECK(m["hidden"] == 14336);
  CHECK(m["heads"] == 112);
  CHECK(m["vocab"] == 250880);
  CHECK(m["ffn_hidden"] == 4 * 14336);
  CHECK(m["gated_mlp"] == false);
  // --position-embedding-type alibi: no learned position table (language_model.py:138 builds one
  // only for absolute).
  CHECK(!m.contains("position_embeddings"));
  CHECK(any_contains(r.notes, "ALiBi"));
}

TEST_CASE("bigscience_tr13_finetune_t0_runs_bf16_optimizer_and_one_unit_per_stage") {
  ImportResult r = import_script(kTr13, world(36, 8));
  // finetune_t0.py:35-36@a1d9317d builds GPTModelPipe under --deepspeed, so DeepSpeed's
  // PipelineEngine with a bf16 model and ZeRO 0 ("bf16 must use z0", line 148) runs BF16_Optimizer
  // (engine.py:2014@edaa722): fp32 master weights and optimizer states partitioned over dp
  // (bf16_optimizer.py:161-171), ZeRO-1's memory.
  CHECK(r.plan["parallelism"]["data_parallel"] == "zero1");
  CHECK(any_contains(r.notes, "finetune_t0.py builds GPTModelPipe"));
  // 'type:transformer|embedding' (line 111): the 70 ParallelTransformerLayerPipe and 2 EmbeddingPipe
  // specs (gpt_model.py:225,248,277@8387ae17) are 72 units over 72 stages (pipe/module.py:412-417),
  // one each: the first stage the input embedding, the last the tied output embedding.
  CHECK(r.plan["parallelism"]["account_for_embedding_in_pipeline_split"] == true);
  CHECK(r.plan["parallelism"]["account_for_loss_in_pipeline_split"] == true);
  core::Diagnostics d = verify(r);
  CHECK_MESSAGE(!d.has_rule("layers-indivisible"), error_rules(d));
}

TEST_CASE("bigscience_tr13_bloomz_fits_a100_80g") {
  // BLOOMZ trained on 36 nodes of 8 A100 80GB (the script's #SBATCH -C a100); --gpu a100-80g.
  ImportResult r = import_script(kTr13, world(36, 8));
  nlohmann::ordered_json plan = r.plan;
  plan["cluster"]["gpu"] = "a100-80g";
  Priced p = price(plan);
  // BF16_Optimizer keeps 12 bytes a parameter (fp32 master, exp_avg, exp_avg_sq) as a 1/dp
  // partition next to the 2-byte bf16 parameters (bf16_optimizer.py:161-171): 12 / 4 = 1.5 x
  // the parameters' 2 bytes over dp 4 (ZeRO-1, Rajbhandari et al. SC'20 §5.1), not 6 x (DDP).
  CHECK(static_cast<double>(p.memory.optimizer) == doctest::Approx(1.5 * static_cast<double>(p.memory.params))
                                                       .epsilon(0.01));
  CHECK_MESSAGE(!p.diags.has_rule("memory-exceeds"), error_rules(p.diags));
  CHECK(!p.diags.has_rule("layers-indivisible"));
}

TEST_CASE("bigscience_tr9_glu_activation_is_a_gated_mlp") {
  // tr9-1B3-modeling-swiglu.slurm: --glu-activation swiglu (line 98) with FFN_HIDDEN_SIZE=5456
  // (line 63). The fork's dense_h_to_4h is 2 x ffn wide under a GLU (transformer.py:73-79@8387ae17):
  // 3 matrices of hidden x ffn, with biases (ColumnParallelLinear's default).
  ImportResult r = import_script("tr9-1B3-modeling-swiglu.slurm", world(16, 4));
  CHECK_MESSAGE(findings(r, "unknown-key") == 0, unknown_keys(r));
  const auto& m = r.plan["model"];
  REQUIRE(m.is_object());
  CHECK(m.value("gated_mlp", true) == true);  // the plan format's default (docs/plan-format.md)
  CHECK(m["ffn_hidden"] == 5456);
  CHECK(m["biases"] == true);
}

TEST_CASE("bigscience_tr11_bloom_176b_twelve_stages_of_six_units") {
  // tr11-176B-ml.slurm: NLAYERS=70 over PP_SIZE=12 on 24 nodes with 'type:transformer|embedding':
  // 72 units / 12 = 6 a stage; the first and last hold an embedding and 5 layers.
  ImportResult r = import_script("tr11-176B-ml.slurm", world(24, 8));
  CHECK_MESSAGE(findings(r, "unknown-key") == 0, unknown_keys(r));
  CHECK(r.plan["model"]["vocab"] == 250880);
  CHECK(r.plan["parallelism"]["account_for_embedding_in_pipeline_split"] == true);
  // ZERO_STAGE=0 with --bf16 under the PipelineEngine: BF16_Optimizer, whose gradients BLOOM's
  // DeepSpeed branch accumulates in a full fp32 buffer (before deepspeedai/DeepSpeed#4713, v0.12.5,
  // made it follow data_types.grad_accum_dtype).
  CHECK(r.plan["parallelism"]["data_parallel"] == "zero1");
  CHECK(r.plan["training"]["grad_accum_dtype"] == "fp32");
  core::Diagnostics d = verify(r);
  CHECK_MESSAGE(!d.has_rule("layers-indivisible"), error_rules(d));
}

TEST_CASE("bigscience_partition_methods_other_than_an_even_type_split") {
  // 70 layers + 2 embeddings over pp 8: 72 / 8 = 9; over pp 16 it does not divide (partition_balanced
  // gives uneven stages: said, priced as the even split).
  const std::string base =
      "finetune_t0.py --num-layers 70 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
      "--max-position-embeddings 1024 --micro-batch-size 1 --global-batch-size 64 --pad-vocab-size-to 250880 "
      "--deepspeed --deepspeed_config ds.json --pipeline-model-parallel-size ";
  ImportResult even = import_ok(&import_megatron, base + "8 --pp-partition-method 'type:transformer|embedding'",
                                world(1, 8));
  CHECK(even.plan["parallelism"]["account_for_loss_in_pipeline_split"] == true);
  ImportResult uneven = import_ok(&import_megatron, base + "16 --pp-partition-method 'type:transformer|embedding'",
                                  world(2, 8));
  CHECK(!uneven.plan["parallelism"].contains("account_for_loss_in_pipeline_split"));
  CHECK(findings(uneven, "setting-unmodelled", "--pp-partition-method") == 1);
  ImportResult params = import_ok(&import_megatron, base + "8 --pp-partition-method parameters", world(1, 8));
  CHECK(findings(params, "setting-unmodelled", "--pp-partition-method parameters") == 1);
  // DeepSpeed raises NotImplementedError for another method (pipe/module.py:419-421) and RuntimeError
  // when type: matches no spec (:340).
  CHECK(import_error(&import_megatron, base + "8 --pp-partition-method profile", world(1, 8))
            .find("NotImplementedError") != std::string::npos);
  // A pattern beyond words joined by '|' is not evaluated (no regex engine runs on a config's text).
  ImportResult re = import_ok(&import_megatron, base + "8 --pp-partition-method 'type:(a*)*b'", world(1, 8));
  CHECK(findings(re, "setting-unmodelled", "which planck does not evaluate") == 1);
  CHECK(import_error(&import_megatron, base + "8 --pp-partition-method type:attention", world(1, 8))
            .find("no valid layers") != std::string::npos);
  // tokenizer.py:79-80: --pad-vocab-size-to must be a multiple of --make-vocab-size-divisible-by.
  CHECK(import_error(&import_megatron,
                     "finetune_t0.py --num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 64 "
                     "--micro-batch-size 1 --global-batch-size 8 --pad-vocab-size-to 250881",
                     world(1, 8))
            .find("ValueError") != std::string::npos);
}

TEST_CASE("bigscience_flags_name_the_fork_and_microsoft_flags_are_unknown_to_it") {
  // --pp-partition-method is only bigscience's: its argparse is the list; microsoft's --topk
  // (arguments.py:612@f4157be) is not a flag of bigscience's fork.
  ImportResult r = import_ok(&import_megatron,
                             "pretrain_gpt.py --num-layers 4 --hidden-size 1024 --num-attention-heads 16 "
                             "--seq-length 1024 --max-position-embeddings 1024 --micro-batch-size 2 "
                             "--global-batch-size 64 --vocab-size 50304 --pp-partition-method type:transformer "
                             "--topk 2 --position-embedding-type absolute",
                             world(1, 8));
  CHECK(any_contains(r.notes, "Megatron-DeepSpeed launch (BLOOM's fork, --pp-partition-method)"));
  CHECK(findings(r, "unknown-key", "--topk") == 1);
  CHECK(findings(r, "unknown-key", "--pp-partition-method") == 0);
  // absolute is the fork's learned table (language_model.py:138): --max-position-embeddings rows.
  CHECK(r.plan["model"]["position_embeddings"] == 1024);
}

}  // namespace planck::import::test
