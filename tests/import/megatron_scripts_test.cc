// Megatron-LM scripts as NVIDIA writes them (tests/data/import/megatron-lm, Megatron-LM
// d98e8a6): the launch inside a string run by `srun ... bash -c`, files sourced through
// `pwd` in backticks, a script run by sbatch, the GPT-3 175B example without --vocab-size and
// GPT-OSS's --quick-geglu. Expected values: parallel_state.py (dp = world / (tp x pp x cp)),
// num_microbatches_calculator (global / (micro x dp)), tokenizer.py (_vocab_size_with_padding).

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/import/import_test_util.h"

namespace planck::import::test {
namespace {

ImportResult import_script(const std::string& rel, const ImportOptions& opts) {
  auto r = import_file("megatron", data_path("megatron-lm/" + rel), opts);
  REQUIRE_MESSAGE(r.is_ok(), (r.is_ok() ? std::string() : r.message()));
  return std::move(*r);
}

// 1-based line of the first line of `rel` that contains `needle` (read without planck).
int line_of(const std::string& rel, const std::string& needle) {
  std::ifstream in(data_path("megatron-lm/" + rel));
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find(needle) != std::string::npos) return n;
  }
  return 0;
}

TEST_CASE("import_megatron_launch_inside_a_string_run_by_srun_bash_c") {
  // TRAINING_CMD="... python ${MEGATRON_PATH}/pretrain_gpt.py ${PRETRAIN_ARGS[@]}", run by
  // `srun ... bash -x -c "${TRAINING_CMD}"` inside an sbatch heredoc. TP=${TP:-1}, MBS=4, GBS=2048.
  ImportResult r = import_script("sbatch_mfsdp_deepseek_v3.sh", world(4, 8));
  // EP=${EP:-8} with --expert-tensor-parallel-size 1: ep is a mesh dim taken out of the 32
  // data-parallel ranks (docs/plan-format.md "Mixture of experts"): [pp, dp, ep, cp, tp].
  CHECK(shape_of(r) == Shape{1, 32 / 8, 8, 1, 1});
  CHECK(r.plan["training"]["micro_batch"] == 4);
  CHECK(r.plan["training"]["global_batch"] == 2048);
  CHECK(r.plan["training"]["grad_accumulation"] == 2048 / (4 * 32));
  CHECK(any_contains(r.notes, "read the text given to `-c` or `eval` as a script"));
  // The flags' lines are where PRETRAIN_ARGS writes them, not the srun line.
  CHECK(r.positions.at("/training/micro_batch") == line_of("sbatch_mfsdp_deepseek_v3.sh", "--micro-batch-size ${MBS}"));
  CHECK(r.positions.at("/mesh/shape/4") == line_of("sbatch_mfsdp_deepseek_v3.sh", "--tensor-model-parallel-size ${TP}"));
}

TEST_CASE("import_megatron_sc21_sources_config_and_follows_sbatch_to_srun") {
  // run_figure_15.sh: TP=2 PP=1 MBS=1 GBS=32, `. `pwd`/CONFIG.sh` (MEGATRON_PARAMS) and
  // `. `pwd`/SBATCH.sh` (sbatch SRUN.sh, whose `sh -c "${CMD}"` runs pretrain_gpt.py).
  ImportResult r = import_script("sc21/run_figure_15.sh", world(4, 8));
  CHECK(shape_of(r) == Shape{1, 32 / 2, 1, 2});
  CHECK(r.plan["training"]["micro_batch"] == 1);
  CHECK(r.plan["training"]["global_batch"] == 32);
  CHECK(r.plan["training"]["grad_accumulation"] == 32 / (1 * 16));
  CHECK(any_contains(r.notes, "CONFIG.sh (sourced)"));
  CHECK(any_contains(r.notes, "SRUN.sh (run by the script"));
  // The backtick `pwd` used to swallow the rest of the file into every hint.
  for (const std::string& h : r.hints) CHECK_MESSAGE(h.size() < 200, h);
  CHECK(r.hints.size() < 10);
}

TEST_CASE("import_megatron_missing_sourced_file_is_a_warning_naming_it") {
  const auto dir = std::filesystem::temp_directory_path() / "planck_sc21_alone";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(data_path("megatron-lm/sc21/run_figure_15.sh"), dir / "run_figure_15.sh",
                             std::filesystem::copy_options::overwrite_existing);
  auto r = import_file("megatron", (dir / "run_figure_15.sh").string(), world(1, 8));
  // Without CONFIG.sh and SBATCH.sh there is no launch at all: the refusal names both files.
  REQUIRE(!r.is_ok());
  CHECK(r.message().find("no Megatron launch command") != std::string::npos);
  CHECK(r.message().find("CONFIG.sh, which is not at " + (dir / "CONFIG.sh").string()) != std::string::npos);
  CHECK(r.message().find("SBATCH.sh, which is not at " + (dir / "SBATCH.sh").string()) != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("import_megatron_gpt3_175b_gets_its_model_without_vocab_size") {
  // 96 layers, hidden 12288, 96 heads, no --swiglu (4h GELU MLP), tied embeddings, GPT-2 BPE
  // (--vocab-file/--merge-file): 50257 tokens, the shape of preset gpt3-175b.
  ImportResult r = import_script("train_gpt3_175b_distributed.sh", world(16, 8));
  CHECK(shape_of(r) == Shape{16, 128 / (8 * 16), 1, 8});
  CHECK(r.plan["model"] == "gpt3-175b");
  // Megatron pads 50257 to a multiple of 128 x tp 8 = 1024: ceil(50257 / 1024) * 1024.
  CHECK(any_contains(r.notes, "pads them to " + std::to_string((50257 + 1023) / 1024 * 1024)));
}

TEST_CASE("import_megatron_quick_geglu_is_a_gated_mlp") {
  // The script puts its 12 layers over PP_SIZE=$WORLD_SIZE = 8 stages, which Megatron refuses at
  // start-up (arguments.py:984-998@d98e8a6: 12 % 8 != 0, no uneven-split flag): so does the import.
  auto refused = import_file("megatron", data_path("megatron-lm/gptoss_02_train.sh"), world(16, 8));
  REQUIRE_FALSE(refused.is_ok());
  CHECK(refused.message().find("gptoss_02_train.sh:" + std::to_string(line_of("gptoss_02_train.sh", "--num-layers")) +
                               ": --num-layers 12 is not divisible by --pipeline-model-parallel-size 8") !=
        std::string::npos);
  ImportOptions pp4 = world(16, 8);
  pp4.sets = {{"PP_SIZE", "4"}};
  ImportResult r = import_script("gptoss_02_train.sh", pp4);
  REQUIRE(r.plan["model"].is_object());
  CHECK(!r.plan["model"].contains("gated_mlp"));  // gated is the plan's default
  CHECK(any_contains(r.notes, "--quick-geglu: a gated MLP"));
  // A GELU MLP (no --swiglu, no --quick-geglu) says so in the plan.
  ImportResult gelu = import_script("sc21/run_figure_15.sh", world(4, 8));
  CHECK(gelu.plan["model"]["gated_mlp"] == false);
}

TEST_CASE("import_megatron_set_the_script_never_reads_is_an_unknown_key_naming_the_one_it_reads") {
  // `TP=2 bash script.sh` for a script that reads $TP_SIZE changes nothing; --set TP=2 said so nowhere.
  // The --set a branch not taken reads ($PP below) and a positional parameter are not warned about:
  // only a name the script never looked up, with the closest name it did.
  const std::string text =
      "TP_SIZE=${TP_SIZE:-1}\nif [ \"$MODE\" = big ]; then PP=$PP_SIZE; fi\n"
      "python pretrain_gpt.py --tensor-model-parallel-size $TP_SIZE --num-layers $((LAYERS + 4)) --micro-batch-size 1\n";
  ImportOptions o = world(1, 8);
  o.sets = {{"TP_SIZ", "2"}, {"TP_SIZE", "2"}, {"LAYERS", "4"}, {"MODE", "small"}, {"1", "x"}};
  ImportResult r = import_ok(&import_megatron, text, o, "read.sh");
  CHECK(shape_of(r).back() == 2);
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].rule == "unknown-key");
  CHECK(r.findings[0].message.find("--set TP_SIZ=2: the script never reads $TP_SIZ") == 0);
  CHECK(r.findings[0].message.find("did you mean 'TP_SIZE'?") != std::string::npos);
  // PP_SIZE sits on a branch MODE=small does not take: never read, so warned.
  o.sets = {{"MODE", "small"}, {"PP_SIZE", "2"}};
  ImportResult branch = import_ok(&import_megatron, text, o, "read.sh");
  REQUIRE(branch.findings.size() == 1);
  CHECK(branch.findings[0].message.find("--set PP_SIZE=2") == 0);
}

TEST_CASE("import_megatron_underscore_spelling_is_refused_by_megatron_and_located") {
  // Megatron-LM's parser has no underscore aliases (arguments.py:119-131@d98e8a6, allow_abbrev=False,
  // parse_args): this launch stops with "unrecognized arguments". planck reads the flags as the
  // dashed ones (a fork such as epfLLM/Megatron-LLM defines these spellings), says so at their line.
  const std::string text =
      "python pretrain_gpt.py \\\n  --tensor_model_parallel_size 2 \\\n  --num-layers 2 --micro-batch-size 1\n";
  ImportResult r = import_ok(&import_megatron, text, world(1, 8), "underscore.sh");
  CHECK(shape_of(r).back() == 2);
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].rule == "unknown-key");
  CHECK(r.findings[0].line == 2);
  CHECK(r.findings[0].message.find("--tensor_model_parallel_size is not a flag Megatron-LM defines: it spells it "
                                   "--tensor-model-parallel-size") == 0);
  // A value error on an underscore flag names its line too.
  const std::string bad = import_error(
      &import_megatron, "python pretrain_gpt.py --num-layers 2 \\\n --seq_length none --micro-batch-size 1\n", world(1, 8),
      "bad.sh");
  CHECK(bad.find("bad.sh:2: --seq_length needs an integer, got 'none'") != std::string::npos);
}

TEST_CASE("import_megatron_wrapper_that_builds_its_own_launch_is_not_read_as_megatron") {
  // krafton-ai/Megatron-Dion's speedrun_nanogpt_mcore.py takes --fs-size / --tp-size / --rp-size and
  // builds the torchrun pretrain_gpt.py command itself, --micro-batch-size included
  // (examples/dion/speedrun_nanogpt_mcore.py:316-345@2d0d2518): it is unfollowed, not a Megatron
  // launch refused for a missing --micro-batch-size.
  ImportResult r = import_script("dion/job_command_fs4_tp2.sh", world(1, 8));
  REQUIRE(r.unfollowed.size() == 1);
  CHECK(r.unfollowed[0].line == 7);
  CHECK(r.unfollowed[0].why.find("--fs-size") != std::string::npos);
  CHECK(r.unfollowed[0].why.find("--tp-size") == std::string::npos);  // Megatron-LM's tools define it
  CHECK(r.unfollowed[0].why.find("a wrapper that builds its own launch") != std::string::npos);
}

TEST_CASE("import_megatron_flags_held_in_an_array_or_a_non_python_launcher_are_said") {
  // llm-jp/scripts v4 params.sh collects its flags in ALL_PARAMS+=( ... ) for the script that sources
  // it; ms-swift runs `megatron sft --tensor_model_parallel_size 8 ...`. Neither is "no flags".
  const std::string params =
      "ALL_PARAMS=()\nALL_PARAMS+=(\n  --num-layers 32\n  --hidden-size 4096\n  --seq-length 4096\n)\n";
  const std::string held = import_error(&import_megatron, params, world(1, 8), "params.sh");
  CHECK(held.find("collects flags in ALL_PARAMS (3 flags)") != std::string::npos);
  const std::string swift = import_error(
      &import_megatron,
      "megatron sft --model Qwen/Qwen3-8B --tensor_model_parallel_size 8 --sequence_parallel true\n",
      world(1, 8), "swift.sh");
  CHECK(swift.find("megatron at line 1 runs a launcher that is not a .py script") != std::string::npos);
  // modelscope/ms-swift examples/megatron/grpo/sapo.sh passes --external_plugins examples/train/grpo/plugin/
  // plugin.py: a flag's value, which swift/cli/main.py hands to its own entry point. Taken for the launch, the
  // flags verified `ok` with 33 unknown keys and no model.
  const std::string plugin = import_error(
      &import_megatron,
      "NPROC_PER_NODE=8 \\\nmegatron rlhf \\\n  --rlhf_type grpo \\\n  --external_plugins examples/plugin.py \\\n"
      "  --tensor_model_parallel_size 1 \\\n  --micro_batch_size 2\n",
      world(1, 8), "sapo.sh");
  CHECK(plugin.find("megatron at line 2 runs a launcher that is not a .py script") != std::string::npos);
  CHECK(plugin.find("ms-swift's CLI") != std::string::npos);
}

TEST_CASE("import_megatron_deepspeed_launcher_states_the_world") {
  // deepspeed/launcher/runner.py@edaa722: -i / --include HOST:SLOTS (bigscience-workshop/
  // Megatron-DeepSpeed run.sh launches `deepspeed -i worker-0:0,1`), --num_nodes, --num_gpus.
  const std::string flags = " pretrain_gpt.py --tensor-model-parallel-size 1 --pipeline-model-parallel-size 2 "
                            "--num-layers 4 --micro-batch-size 1\n";
  ImportResult two = import_ok(&import_megatron, "deepspeed -i worker-0:0,1" + flags, ImportOptions{}, "ds.sh");
  CHECK(two.plan["cluster"]["nodes"] == 1);
  CHECK(two.plan["cluster"]["gpus_per_node"] == 2);
  ImportResult hosts =
      import_ok(&import_megatron, "deepspeed --include a:0,1,2,3@b:0,1,2,3" + flags, ImportOptions{}, "ds.sh");
  CHECK(hosts.plan["cluster"]["nodes"] == 2);
  CHECK(hosts.plan["cluster"]["gpus_per_node"] == 4);
  // --num_nodes from the launcher, the GPUs per node from the script's variable.
  ImportResult mixed =
      import_ok(&import_megatron, "GPUS_PER_NODE=4\ndeepspeed --num_nodes 3" + flags, ImportOptions{}, "ds.sh");
  CHECK(mixed.plan["cluster"]["nodes"] == 3);
  CHECK(mixed.plan["cluster"]["gpus_per_node"] == 4);
  ImportResult per_node = import_ok(&import_megatron, "deepspeed --num_gpus=8" + flags, ImportOptions{}, "ds.sh");
  CHECK(per_node.plan["cluster"]["gpus_per_node"] == 8);
}

TEST_CASE("import_megatron_script_running_several_launches_says_which_it_reads") {
  // A sweep over configs runs pretrain_gpt.py once per entry (the shell reader runs `for` bodies
  // per word): the plan is the last launch, and the others are named, never dropped silently.
  const std::string text =
      "for TP in 2 4; do\n  python pretrain_gpt.py --tensor-model-parallel-size $TP --num-layers 4 "
      "--micro-batch-size 1\ndone\n";
  ImportResult r = import_ok(&import_megatron, text, world(1, 8), "sweep.sh");
  CHECK(shape_of(r).back() == 4);
  CHECK(any_contains(r.warnings, "runs pretrain_gpt.py 2 times with different flags (also at line 2)"));
}

TEST_CASE("import_megatron_slurm_variables_come_from_the_sbatch_lines") {
  // Slurm sets SLURM_NNODES / SLURM_JOB_NUM_NODES from #SBATCH --nodes and SLURM_GPUS_PER_NODE from
  // --gpus-per-node (sbatch(1), OUTPUT ENVIRONMENT VARIABLES); bigcode's pretrain_bigcode_7b.slurm
  // runs torchrun --nnodes $NNODES with NNODES=$SLURM_NNODES and #SBATCH --nodes=64.
  const std::string flags = " --num-layers 4 --hidden-size 512 --num-attention-heads 8 --seq-length 1024 "
                            "--vocab-size 32000 --micro-batch-size 1";
  const std::string torchrun = "#!/bin/bash\n#SBATCH --nodes=64\n#SBATCH --gpus-per-node 8\nNNODES=$SLURM_NNODES\n"
                               "torchrun --nnodes $NNODES --nproc_per_node $SLURM_GPUS_PER_NODE pretrain_gpt.py" +
                               flags + "\n";
  ImportResult r = import_ok(&import_megatron, torchrun, ImportOptions{}, "job.slurm");
  CHECK(r.plan["cluster"]["nodes"] == 64);
  CHECK(r.plan["cluster"]["gpus_per_node"] == 8);
  // srun starting one python per task: the world is the #SBATCH request itself, and
  // $SLURM_GPUS_PER_NODE reaches the flag that names it (swiss-ai's tp = $SLURM_GPUS_PER_NODE).
  const std::string srun = "#SBATCH -N 32\n#SBATCH --ntasks-per-node=4\n#SBATCH --gpus-per-node=4\n"
                           "srun python pretrain_gpt.py --tensor-model-parallel-size $SLURM_GPUS_PER_NODE" +
                           flags + "\n";
  ImportResult s = import_ok(&import_megatron, srun, ImportOptions{}, "job.sh");
  CHECK(s.plan["cluster"]["nodes"] == 32);
  CHECK(s.plan["cluster"]["gpus_per_node"] == 4);
  CHECK(shape_of(s).back() == 4);
}

}  // namespace
}  // namespace planck::import::test
