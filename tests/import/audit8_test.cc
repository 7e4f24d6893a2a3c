// Audit 8: launches and configs of sources not read before (bigcode-project/Megatron-LM,
// databricks/megablocks, IEIT-Yuan/Yuan-2.0, argonne-lcf/Megatron-DeepSpeed, ROCm/torchtitan, axolotl,
// MiniCPM, FastChat, stanford_alpaca, peft). Expected values from each framework's code, cited per case.

#include <doctest/doctest.h>

#include <string>

#include "tests/import/import_test_util.h"

namespace planck::import::test {

TEST_CASE("megatron_bigcode_launch_is_not_blooms_fork") {
  // bigcode-project/Megatron-LM's examples/finetune_starcoderplus.slurm (@7c325cd) passes
  // --train-weighted-split-paths-path, which the bigcode fork defines (megatron/arguments.py:1198) as
  // BLOOM's fork does, with flags only bigcode defines (--attention-head-type :575, --structured-logs
  // :703, --tokenizer-file :1224) and Megatron-LM's own --use-flash-attn (:838), --sequence-parallel
  // (:861) and --use-distributed-optimizer (:1066), which BLOOM's fork lacks. Read as BLOOM's fork,
  // those three were "unknown, argparse refuses at start-up": false.
  auto r = import_file("megatron", data_path("megatron-lm/audit8/bigcode_finetune_starcoderplus.slurm"), world(64, 8));
  REQUIRE_MESSAGE(r.is_ok(), (r.is_ok() ? std::string() : r.message()));
  for (const char* flag : {"--sequence-parallel is not a key", "--use-flash-attn is not a key"}) {
    CHECK_FALSE(finding_says(*r, "unknown-key", flag));
  }
  for (const auto& n : r->plan["notes"]) CHECK(n.get<std::string>().find("BLOOM's fork") == std::string::npos);
  CHECK(r->plan["parallelism"]["sequence_parallel"] == true);
  // The fork's own flags (megatron/arguments.py :575 --attention-head-type, :703/:705 --structured-logs(-dir),
  // :696/:698 --wandb-entity/project-name, :1224 --tokenizer-file, :1198-1199 the weighted split paths, :1250
  // --valid-num-workers) are its argparse's: none is unknown-key (eight were).
  CHECK(findings(*r, "unknown-key") == 0);
  bool said = false;
  for (const auto& n : r->plan["notes"])
    said |= n.get<std::string>().find("bigcode-project/Megatron-LM") != std::string::npos;
  CHECK(said);

  // pretrain_bigcode_7b.slurm: --use-distributed-optimizer is read (ZeRO-1 over dp), not unknown.
  auto s = import_file("megatron", data_path("megatron-lm/audit8/bigcode_pretrain_bigcode_7b.slurm"), world(64, 8));
  REQUIRE_MESSAGE(s.is_ok(), (s.is_ok() ? std::string() : s.message()));
  CHECK_FALSE(finding_says(*s, "unknown-key", "--use-distributed-optimizer"));
}

TEST_CASE("megatron_bigcode_multiquery_is_one_kv_head") {
  // StarCoder's finetune_starcoderplus.slurm: 40 layers, hidden 6144, 48 heads, --attention-head-type
  // multiquery, tp 4. bigcode's model/transformer.py:627-641: the query is a ColumnParallelLinear(hidden,
  // kv_channels x heads), the keys and values one get_linear_layer(hidden, 2 x kv_channels), not split over
  // tp: one K/V head (kv_channels = hidden / heads = 128, arguments.py:291-293), whole on every tp rank.
  // Per layer 6144^2 (query) + 2 x 6144 x 128 (K/V) + 6144^2 (dense) + 2 x 6144 x 24576 (MLP, ffn 4h,
  // arguments.py:278-279) = 379.1e6 weights; multi-head attention would add 2 x 6144 x (6144 - 128) each.
  const std::string text = replace(read_data("megatron-lm/audit8/bigcode_finetune_starcoderplus.slurm"),
                                   "type multiquery", "type multiquery --vocab-size 49152");
  auto r = import_ok(&import_megatron, text, world(64, 8), "finetune_starcoderplus.slurm");
  CHECK(r.plan["model"]["kv_heads"] == 1);
  CHECK(r.plan["model"]["heads"] == 48);
  CHECK(r.plan["model"]["ffn_hidden"] == 4 * 6144);
  CHECK(findings(r, "unknown-key") == 0);
  CHECK(error_rules(verify(r)).empty());  // kv_heads 1 divides tp 4: replicated, as the fork does
  // multihead is the fork's other choice: every head its own K/V.
  auto m = import_ok(&import_megatron, replace(text, "type multiquery", "type multihead"), world(64, 8), "mh.slurm");
  CHECK(m.plan["model"]["kv_heads"] == 48);
  // transformer.py:666: anything else, or no --attention-head-type (default None, arguments.py:575), raises
  // ValueError('Invalid attention arguments') when the model is built; argparse refuses other choices.
  CHECK(import_error(&import_megatron, replace(text, "type multiquery", "type grouped"), world(64, 8), "g.slurm")
            .find("takes multihead or multiquery") != std::string::npos);
  CHECK(import_error(&import_megatron, replace(text, "--attention-head-type multiquery", ""), world(64, 8), "n.slurm")
            .find("no --attention-head-type") != std::string::npos);
  // :700 --transformer-timers times every layer and slows it: said, not priced.
  const std::string timed = replace(text, "--structured-logs \\", "--structured-logs --transformer-timers \\");
  auto t = import_ok(&import_megatron, timed, world(64, 8), "t.slurm");
  CHECK(finding_says(t, "setting-unmodelled", "--transformer-timers"));
}

TEST_CASE("megatron_yuan_pipeline_blocks_are_an_uneven_split") {
  // IEIT-Yuan/Yuan-2.0's examples/pretrain_yuan2.0_51B.sh (@2f59b3f): 42 layers over pp 16 with
  // --pipeline-model-parallel-method block --pipeline-model-parallel-blocks 2,2,2,2,2,3,3,3,3,3,3,3,3,3,3,2.
  // The fork's arguments.py:117-121 takes the list as the layers of each stage (transformer.py:1492-1495:
  // num_layers = pipeline_blocks[pp rank]) and asserts only sum == 42 (5x2 + 10x3 + 2 = 42) and 16 entries;
  // the 42 % 16 check is under `elif` (:122-124), not run. planck said "42 is not divisible by 16: Megatron
  // refuses it at start-up": false. The script's NNODES=1 (8 GPUs) cannot hold pp 16; the run is 2 nodes.
  ImportOptions o = world(2, 8);
  o.sets.emplace_back("NNODES", "2");
  auto r = import_file("megatron", data_path("megatron-lm/audit8/yuan_pretrain_yuan2.0_51B.sh"), o);
  REQUIRE_MESSAGE(r.is_ok(), (r.is_ok() ? std::string() : r.message()));
  // Stage r holds blocks[r] layers; the embedding on the first stage, the loss on the last.
  CHECK(r->plan["parallelism"]["pipeline_layout"] == "Ett|tt|tt|tt|tt|ttt|ttt|ttt|ttt|ttt|ttt|ttt|ttt|ttt|ttt|ttL");
  CHECK(error_rules(verify(*r)).empty());

  // A list that does not sum to --num-layers stops the fork (arguments.py:120): an error naming it.
  const std::string text = replace(read_data("megatron-lm/audit8/yuan_pretrain_yuan2.0_51B.sh"),
                                   "-blocks 2,2,2,2,2,3,", "-blocks 2,2,2,2,2,2,");
  const std::string err = import_error(&import_megatron, text, o, "yuan.sh");
  CHECK(err.find("sums to 41 layers, not --num-layers 42") != std::string::npos);

  // Without --num-layers to check against, a list no model could have is refused before its layout
  // (one letter a layer) is written: 999999999 layers would be a gigabyte of text.
  const std::string huge = replace(replace(read_data("megatron-lm/audit8/yuan_pretrain_yuan2.0_51B.sh"),
                                           "-blocks 2,2,2,2,2,3,", "-blocks 999999999,2,2,2,2,3,"),
                                   "--num-layers 42", "");
  CHECK(import_error(&import_megatron, huge, o, "yuan.sh").find("more than planck reads") != std::string::npos);
}

TEST_CASE("llama_factory_auto_gradient_clipping_says_where_its_value_comes_from") {
  // OpenBMB/MiniCPM's minicpm_sala/finetune/llama_factory/configs/minicpm_sft.yaml (@0fcc3d0) names
  // LLaMA-Factory's examples/deepspeed/ds_z3_config.json, whose gradient_clipping is "auto", and sets no
  // max_grad_norm: the trainer fills it from TrainingArguments.max_grad_norm, default 1.0
  // (transformers training_args.py). planck's note said "filled from  (the file's "auto")", naming nothing.
  auto r = import_file("llama-factory", data_path("llama-factory/audit8/minicpm_minicpm_sft.yaml"), world(1, 8));
  REQUIRE_MESSAGE(r.is_ok(), (r.is_ok() ? std::string() : r.message()));
  bool said = false;
  for (const auto& n : r->plan["notes"]) {
    const std::string note = n.get<std::string>();
    if (note.rfind("gradient_clipping = 1.0", 0) != 0) continue;
    said = true;
    CHECK(note.find("filled from TrainingArguments' default max_grad_norm") != std::string::npos);
  }
  CHECK(said);
}

TEST_CASE("megatron_no_launch_names_the_shell_function_call_not_followed") {
  // argonne-lcf/Megatron-DeepSpeed's ALCF/pre-AuroraGPT/train-llama.sh (@ffa3456) sources setup.sh and
  // launch.sh through `function sourceFile() { local FILE="$1"; ... source "${FILE}"; }` (lines 40-50,
  // calls at 57-61). bash runs a function's body at each call with its arguments; planck reads the body
  // once where it is defined, so the launch in launch.sh is never seen. The refusal said only "no Megatron
  // launch command"; it now names the call it did not follow.
  auto r = import_file("megatron", data_path("megatron-deepspeed/audit8/alcf_train-llama.sh"), world(1, 8));
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.message().find("line 57 calls the shell function sourceFile") != std::string::npos);

  // The `NAME() {` spelling is a definition too, not a call of NAME.
  const std::string err = import_error(&import_megatron, "f() {\n  source \"$1\"\n}\nf /nonexist/launch.sh\n",
                                       world(1, 8), "t.sh");
  CHECK(err.find("line 4 calls the shell function f") != std::string::npos);
}

}  // namespace planck::import::test
