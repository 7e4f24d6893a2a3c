// planck verify / import on framework configs that need more than one file, or that cannot be
// followed: the exit codes and where the findings point (docs/verify.md config-unfollowed,
// docs/import.md "torchtitan (Python registries)"). Inputs: torchtitan's own files at b5bcd76c
// (tests/data/import/torchtitan/pkg-b5bcd76c, tests/data/import/PROVENANCE.md).

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/run_command.h"
#include "tests/temp_dir.h"

namespace fs = std::filesystem;

namespace {

using Run = planck_test::CommandRun;

Run planck(const std::string& args) { return planck_test::run_command(std::string(PLANCK_BIN) + " " + args + " 2>&1"); }

std::string pkg(const std::string& rel) {
  return std::string(PLANCK_TEST_DATA_DIR) + "/import/torchtitan/pkg-b5bcd76c/" + rel;
}

fs::path temp_dir() {
  fs::path d = planck_test::process_temp_dir("planck-config-input");
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST_CASE("cli_verify_a_recipe_on_a_base_imported_from_the_package") {
  // tp 3 x HSDP 3 x 5 = 45 ranks on 8 x 8 GPUs, the base llama3_8b() from torchtitan's package.
  const fs::path dir = temp_dir();
  const std::string recipe = (dir / "my_recipes.py").string();
  std::ofstream(recipe) << "from torchtitan.models.llama3.config_registry import llama3_8b\n"
                           "\n"
                           "def llama3_8b_tp3_hsdp() -> Trainer.Config:\n"
                           "    config = llama3_8b()\n"
                           "    config.parallelism.tensor_parallel_degree = 3\n"          // line 5
                           "    config.parallelism.data_parallel_replicate_degree = 3\n"  // line 6
                           "    config.parallelism.data_parallel_shard_degree = 5\n"
                           "    return config\n";
  // Without the package: the base cannot be followed -> exit 2 at the call, naming the module.
  Run missing = planck("verify " + recipe + " --nodes 8 --gpus-per-node 8");
  CHECK(missing.code == 2);
  CHECK(missing.out.find("my_recipes.py:4:1: error[config-unfollowed]") != std::string::npos);
  CHECK(missing.out.find("torchtitan.models.llama3.config_registry") != std::string::npos);
  CHECK(missing.out.find("--python-path") != std::string::npos);
  // With it: followed, and the mesh finding is at the first degree the recipe edits.
  Run found = planck("verify " + recipe + " --nodes 8 --gpus-per-node 8 --python-path " + pkg(""));
  CHECK(found.code == 1);
  CHECK(found.out.find("my_recipes.py:5:1: error[mesh-world-mismatch]") != std::string::npos);
  // PYTHONPATH is searched too (planck runs python3 -I, so it passes the directories itself).
  Run env = planck_test::run_command("PYTHONPATH=" + pkg("") + " " + PLANCK_BIN + " verify " + recipe +
                                     " --nodes 8 --gpus-per-node 8 2>&1");
  CHECK(env.code == 1);
  fs::remove_all(dir);
}

TEST_CASE("cli_verify_torchtitan_recipes_models_py_follows_the_package_beside_it") {
  // Run from a torchtitan checkout: the package is found in a parent of the file's directory.
  Run r = planck("verify " + pkg("torchtitan_recipes/tests/models.py") +
                 ":qwen3_debugmodel_fsdp2_tp2_cp2 --nodes 1 --gpus-per-node 8");
  CHECK(r.out.find("config-unfollowed") == std::string::npos);
  CHECK(r.out.find("mesh-world-mismatch") == std::string::npos);
  CHECK(r.code != 2);
  // On 16 GPUs the 8-rank layout does not fill the world: located at its first degree edit.
  Run wide = planck("verify " + pkg("torchtitan_recipes/tests/models.py") +
                    ":qwen3_debugmodel_fsdp2_tp2_cp2 --nodes 2 --gpus-per-node 8");
  CHECK(wide.code == 1);
  CHECK(wide.out.find("models.py:92:1: error[mesh-world-mismatch]") != std::string::npos);
}

TEST_CASE("cli_graph_trainer_registry_is_config_unfollowed_in_verify_and_import") {
  const std::string path = pkg("torchtitan/experiments/graph_trainer/qwen3/config_registry.py");
  Run v = planck("verify " + path + " --nodes 1 --gpus-per-node 8 --format json");
  CHECK(v.code == 2);
  CHECK(v.out.find("\"rule\": \"config-unfollowed\"") != std::string::npos);
  CHECK(v.out.find("GraphTrainer.Config(**d)") != std::string::npos);
  Run i = planck("import torchtitan " + path + ":graph_trainer_qwen3_14b --nodes 1 --gpus-per-node 8");
  CHECK(i.code == 2);
  CHECK(i.out.find("config_registry.py:34: error[config-unfollowed]") != std::string::npos);
  CHECK(i.out.find("no plan written") != std::string::npos);
}

// The run's facts on the command line (--seq-len, --micro-batch, --global-batch, --gpu, --activation-checkpointing,
// --set, --script-args) and the one input path simulate / render / report / diff / groups share with verify.

namespace {

std::string data(const std::string& rel) { return std::string(PLANCK_TEST_DATA_DIR) + "/" + rel; }

}  // namespace

TEST_CASE("cli_verify_deepspeed_json_with_the_run_facts_runs_the_memory_rules") {
  // DeepSpeedExamples' ZeRO-3 JSON has no sequence length and an "auto" micro-batch: without the
  // facts the memory rules are checks-skipped; with them they run (llama3-8b, 2 x 4096 tokens, no
  // checkpointing on 80 GB: activations alone are tens of GB, so memory-exceeds is a verdict).
  const std::string ds = data("corpus/deepspeed/dsconfigs__ds_config_z3.json");
  Run without = planck("verify " + ds + " --nodes 1 --gpus-per-node 8 --model llama3-8b --format json");
  CHECK(without.out.find("training.seq_len") != std::string::npos);  // checks-skipped names it
  CHECK(without.out.find("\"rule\": \"memory-exceeds\"") == std::string::npos);
  Run with = planck("verify " + ds + " --nodes 1 --gpus-per-node 8 --model llama3-8b --seq-len 4096 --micro-batch 2 "
                    "--format json");
  CHECK(with.out.find("\"rule\": \"memory-exceeds\"") != std::string::npos);
  CHECK(with.out.find("has no training.seq_len") == std::string::npos);
  CHECK(with.code == 1);
  // The facts are said as coming from the command line (import --explain / the plan's notes).
  Run imported = planck("import deepspeed " + ds + " --nodes 1 --gpus-per-node 8 --seq-len 4096 --micro-batch 2 "
                        "--gpu h200 --set zero_optimization.stage=2");
  CHECK(imported.code == 0);
  CHECK(imported.out.find("training/seq_len = 4096 from --seq-len") != std::string::npos);
  // Its micro-batch is "auto" (what the trainer fills): --micro-batch is that value, said as such,
  // not as overriding an 8 the config never states (audit 3, D10).
  CHECK(imported.out.find("train_micro_batch_size_per_gpu \\\"auto\\\": 2 from --micro-batch") != std::string::npos);
  CHECK(imported.out.find("the config says 8") == std::string::npos);
  // A trainer-filled config cannot say the trainer's gradient checkpointing or LoRA: warned.
  CHECK(imported.out.find("the trainer's gradient checkpointing and PEFT") != std::string::npos);
  CHECK(imported.out.find("\"gpu\": \"h200\"") != std::string::npos);
  CHECK(imported.out.find("\"data_parallel\": \"zero2\"") != std::string::npos);  // --set wins over stage 3
  // --activation-checkpointing says what the trainer's script enables. Full recompute keeps each layer's input
  // only (Korthikanti et al. 2022, sec. 4.1: 2sbh bytes a layer in 16-bit): 32 x 2 x 4096 x 2 x 4096 B = 2.1 GB
  // for llama3-8b, against ~34sbh + 5as^2b bytes a layer kept without it, which is what exceeded 80 GB above.
  Run ckpt = planck("verify " + ds + " --nodes 1 --gpus-per-node 8 --model llama3-8b --seq-len 4096 --micro-batch 2 "
                    "--activation-checkpointing full --format json");
  CHECK(ckpt.out.find("\"rule\": \"memory-exceeds\"") == std::string::npos);
  Run noted = planck("import deepspeed " + ds + " --nodes 1 --gpus-per-node 8 --seq-len 4096 --micro-batch 2 "
                     "--activation-checkpointing full");
  CHECK(noted.out.find("training/activation_checkpointing = \\\"full\\\" from --activation-checkpointing") !=
        std::string::npos);
  CHECK(planck("verify " + ds + " --nodes 1 --gpus-per-node 8 --activation-checkpointing some").code != 0);
}

TEST_CASE("cli_commands_take_a_config_through_the_shared_input") {
  const std::string toml = data("import/torchtitan/llama3_70b_2025-12.toml");
  Run sim = planck("simulate " + toml + " --nodes 8 --gpus-per-node 8");
  CHECK(sim.code == 0);
  CHECK(sim.out.find("step: ") != std::string::npos);
  CHECK(sim.out.find(" step ") != std::string::npos);
  // --set with torchtitan's own CLI names: tp 4 instead of the file's 8.
  Run groups = planck("groups " + toml + " --nodes 8 --gpus-per-node 8 --set parallelism.tensor_parallel_degree=4 "
                      "--dim tp --format json");
  CHECK(groups.code == 0);
  CHECK(groups.out.find("[0, 1, 2, 3]") != std::string::npos);
  Run no_world = planck("simulate " + toml);
  CHECK(no_world.code == 2);
  CHECK(no_world.out.find("--nodes N --gpus-per-node G") != std::string::npos);
  // A planck plan states its own facts: refused, not silently overridden.
  Run plan = planck("simulate " + std::string(PLANCK_PLANS_DIR) + "/hsdp-2x4.json --seq-len 4096");
  CHECK(plan.code == 2);
  CHECK(plan.out.find("a planck plan states its own") != std::string::npos);
  Run diff = planck("diff " + toml + " " + toml + " --nodes 8 --gpus-per-node 8");
  CHECK(diff.code == 0);
  CHECK(diff.out.find("no change") != std::string::npos);
  // A Megatron script (tp 8 x pp 16: 128 GPUs) and a DeepSpeed JSON through the same path.
  const std::string mega = data("import/megatron-lm/train_gpt3_175b_distributed.sh");
  CHECK(planck("simulate " + mega + " --nodes 16 --gpus-per-node 8").out.find("step: ") != std::string::npos);
  const fs::path dir = temp_dir();
  CHECK(planck("report " + mega + " --nodes 16 --gpus-per-node 8 -o " + (dir / "r.html").string()).code == 0);
  CHECK(fs::file_size(dir / "r.html") > 0);
  const std::string ds = data("corpus/deepspeed/dsconfigs__ds_config_z3.json");
  CHECK(planck("render " + ds + " --nodes 1 --gpus-per-node 8 --format dot -o " + (dir / "r.dot").string()).code == 0);
  CHECK(planck("simulate " + ds + " --nodes 1 --gpus-per-node 8 --model llama3-8b --seq-len 2048").code == 0);
  fs::remove_all(dir);
}

TEST_CASE("cli_pai_megatron_patch_script_from_its_positional_arguments") {
  // alibaba/Pai-Megatron-Patch examples/qwen3/run_mcore_qwen3.sh takes everything positionally; the
  // arguments are the README's pre-training example (examples/qwen3/README.md): A3B, mbs 1, gbs 8,
  // seq 128, bf16, TP 4, PP 2, CP 1, ETP 1, EP 4, SP/DO/FL true, SFT false, AC sel, no offload;
  // ENV=dlc takes the cluster from WORLD_SIZE (nodes) and KUBERNETES_CONTAINER_RESOURCE_GPU.
  const std::string script = data("import/pai/run_mcore_qwen3.sh");
  const std::string args =
      " --script-args \"dlc A3B 1 8 1e-5 1e-6 128 128 bf16 4 2 1 1 4 true true true false sel false 100000 "
      "/data /data /ckpt 10000 100 /out\" --set WORLD_SIZE=2 --set KUBERNETES_CONTAINER_RESOURCE_GPU=8";
  Run without = planck("verify " + script);
  CHECK(without.code == 2);  // nothing says the cluster or the degrees
  Run r = planck("import megatron " + script + args);
  CHECK(r.code == 0);
  // Megatron-Core: dp = 16 / (tp 4 x pp 2 x cp 1) = 2; EP 4 spans the tp group (etp 1): mesh ep 4/4 = 1.
  CHECK(r.out.find("\"dims\": [\n      \"pp\",\n      \"dp\",\n      \"ep\",\n      \"cp\",\n      \"tp\"\n    ]") !=
        std::string::npos);
  CHECK(r.out.find("\"shape\": [\n      2,\n      2,\n      1,\n      1,\n      4\n    ]") != std::string::npos);
  CHECK(r.out.find("\"global_batch\": 8") != std::string::npos);
  CHECK(r.out.find("\"seq_len\": 128") != std::string::npos);
  CHECK(r.out.find("\"data_parallel\": \"zero1\"") != std::string::npos);  // DO=true: distributed optimizer
  Run v = planck("verify " + script + args);
  CHECK(v.code == 0);
}

TEST_CASE("cli_verify_memory_exceeds_is_a_warning_when_the_config_saves_memory_planck_does_not_price") {
  // Megatron-LM's GPT-2 DeepSpeed example config (DeepSpeedExamples, corpus) partitions the
  // activations the model checkpoints through deepspeed.checkpointing over tp
  // (activation_checkpointing.partition_activations, line 20), which planck does not price:
  // Llama-3-8B at 16,384 tokens (activations 34 s h bytes a layer, 32 layers: 82 GB) does not fit
  // 80 GB as priced, but the peak is an upper bound, so the verdict is a warning that says why.
  // The contiguous buffer (line 21) moves checkpoints without shrinking them: not named.
  const std::string facts = " --nodes 1 --gpus-per-node 8 --model llama3-8b --seq-len 16384 --gpu h100-sxm";
  Run saves = planck("verify " + data("corpus/deepspeed/Megatron_GPT2__ds_config_func_bs8_zero2.json") + facts);
  CHECK(saves.code == 0);
  CHECK(saves.out.find("warning[memory-exceeds]") != std::string::npos);
  CHECK(saves.out.find("memory planck does not price (activation_checkpointing.partition_activations at line 20)") !=
        std::string::npos);
  // The same model and run facts on DeepSpeedExamples' ZeRO-3 config, which saves nothing planck
  // leaves out: an error.
  Run plain = planck("verify " + data("corpus/deepspeed/dsconfigs__ds_config_z3.json") + facts + " --micro-batch 1");
  CHECK(plain.code == 1);
  CHECK(plain.out.find("error[memory-exceeds]") != std::string::npos);
}

TEST_CASE("cli_framework_rank_programs_make_strict_usable") {
  // Megatron-LM examples/academic_paper_scripts/sc21/run_figure_16.sh (sources CONFIG.sh, SBATCH.sh,
  // SRUN.sh beside it): the importer states Megatron-Core's data rank, so the rank rules run and
  // a clean script passes --strict (no checks-skipped note left).
  // The scripts state the nodes (#SBATCH) but not the GPUs per node: Selene's DGX A100s had 8.
  Run sc21 = planck("verify " + data("import/megatron-lm/sc21/run_figure_16.sh") + " --gpus-per-node 8 --strict");
  CHECK(sc21.code == 0);
  CHECK(sc21.out.find("checks-skipped") == std::string::npos);
  // DeepSpeed AutoEP (autoep_size 8 over 16 ranks): the data rank is global rank / autotp_size =
  // dp.rank x 8 + ep.rank on the mesh (dp 2, ep 8, tp 1), DeepSpeed's data-parallel group rank.
  Run ds = planck("import deepspeed " + data("import/moe/ds_autoep_zero1_qwen3_5_moe.json") +
                  " --nodes 2 --gpus-per-node 8");
  CHECK(ds.out.find("\"dp_rank = dp.rank * ep.size + ep.rank\"") != std::string::npos);
  CHECK(ds.out.find("\"dp_degree = dp.size * ep.size\"") != std::string::npos);
}

TEST_CASE("cli_verify_ignore_is_reported_in_every_format") {
  // tests/data/corpus/deepspeed/dsconfigs__ds_config_z3.json (DeepSpeedExamples): without the model
  // and sequence length, two checks-skipped notes; --strict fails on them unless they are ignored.
  const std::string ds = data("corpus/deepspeed/dsconfigs__ds_config_z3.json") + " --nodes 1 --gpus-per-node 8";
  // The file's "auto" micro-batch is a setting-unmodelled warning (issue 30): --strict fails on it
  // too, until it is ignored with the notes.
  CHECK(planck("verify " + ds + " --strict").code == 1);
  CHECK(planck("verify " + ds + " --strict --ignore checks-skipped").code == 1);
  Run text = planck("verify " + ds + " --strict --ignore checks-skipped,setting-unmodelled");
  CHECK(text.code == 0);
  CHECK(text.out.find("ignored (--ignore): checks-skipped (2 diagnostics)") != std::string::npos);
  Run json = planck("verify " + ds + " --ignore checks-skipped,memory-exceeds --format json");
  CHECK(json.out.find("\"rule\": \"checks-skipped\"") != std::string::npos);  // in "ignored"
  CHECK(json.out.find("\"diagnostics\": 2") != std::string::npos);
  CHECK(json.out.find("\"diagnostics\": 0") != std::string::npos);  // memory-exceeds: none to leave out
  Run sarif = planck("verify " + ds + " --ignore checks-skipped --format sarif");
  CHECK(sarif.out.find("\"ruleConfigurationOverrides\"") != std::string::npos);
  CHECK(sarif.out.find("\"enabled\": false") != std::string::npos);
  Run junit = planck("verify " + ds + " --ignore checks-skipped --format junit");
  CHECK(junit.out.find("ignored by --ignore (2 diagnostics left out)") != std::string::npos);
  CHECK(planck("verify " + ds + " --ignore config-unreadable").code == 2);
  CHECK(planck("verify " + ds + " --ignore no-such-rule").code == 2);
}

TEST_CASE("cli_megatron_bridge_benchmark_recipe_takes_its_hardware_and_world_from_its_name") {
  // Megatron-Bridge@067f987d names each benchmark recipe for its run:
  // <model>_<task>_<N>gpu_<hardware>_<precision>_config (scripts/training/recipe_metadata.py
  // BENCHMARK_RECIPE_PATTERN), e.g. "Qwen3 235B-A22B pretrain: 64x B200" in the docstring. Without
  // --nodes / --gpu the plan is for 64 B200s (8 nodes of 8), not for the default H100 (whose 80 GB
  // the recipe, written for 180 GB, does not fit without recompute).
  const std::string b200 = data("import/megatron-bridge/067f987d/src/megatron/bridge/perf_recipes/qwen/b200/"
                                "qwen3_moe.py:qwen3_235b_a22b_pretrain_64gpu_b200_bf16_config");
  Run imp = planck_test::run_command(std::string(PLANCK_BIN) + " import megatron-bridge " + b200 + " 2>/dev/null");
  REQUIRE(imp.code == 0);
  const auto plan = nlohmann::json::parse(imp.out);
  CHECK(plan["cluster"]["gpu"] == "b200");
  CHECK(plan["cluster"]["nodes"] == 8);
  CHECK(plan["cluster"]["gpus_per_node"] == 8);
  Run v = planck("verify " + b200 + " --format json");
  CHECK(v.out.find("\"rule\": \"memory-exceeds\"") == std::string::npos);
  // The command line wins: the same recipe on H100s is the user's question, and planck answers it.
  Run h100 = planck("verify " + b200 + " --gpu h100-sxm --format json");
  CHECK(h100.out.find("\"rule\": \"memory-exceeds\"") != std::string::npos);
  // GB200: its own preset (2,500 / 5,000 dense TFLOP/s, 186 GB), 4-GPU trays as Bridge launches
  // them (utils/executors.py), and the NVL72 rack's NVLink over the whole 64-GPU job, so the
  // trays' collectives are not priced on the NICs. --nvlink-domain gives another domain.
  const std::string gb200 = data("import/megatron-bridge/067f987d/src/megatron/bridge/perf_recipes/llama/gb200/"
                                 "llama3.py:llama3_70b_pretrain_64gpu_gb200_bf16_config");
  Run g = planck("verify " + gb200 + " --format json");
  CHECK(g.out.find("has no planck preset") == std::string::npos);
  Run gi = planck_test::run_command(std::string(PLANCK_BIN) + " import megatron-bridge " + gb200 + " 2>/dev/null");
  REQUIRE(gi.code == 0);
  const auto gplan = nlohmann::json::parse(gi.out);
  CHECK(gplan["cluster"]["gpu"] == "gb200");
  CHECK(gplan["cluster"]["nodes"] == 16);
  CHECK(gplan["cluster"]["gpus_per_node"] == 4);
  CHECK(gplan["cluster"]["nvlink_domain"] == 64);
  Run gd = planck_test::run_command(std::string(PLANCK_BIN) + " import megatron-bridge " + gb200 +
                                    " --nvlink-domain 4 2>/dev/null");
  REQUIRE(gd.code == 0);
  CHECK(nlohmann::json::parse(gd.out)["cluster"]["nvlink_domain"] == 4);
  // On more trays than a rack holds, the domain is the Slurm segment Bridge's executor asks for
  // (scripts/performance/utils/executors.py): the largest divisor of the tray count up to 18.
  for (const auto& [nodes, domain] : {std::pair{64, 64}, std::pair{20, 40}, std::pair{19, 4}}) {
    Run w = planck_test::run_command(std::string(PLANCK_BIN) + " import megatron-bridge " + gb200 + " --nodes " +
                                     std::to_string(nodes) + " --gpus-per-node 4 2>/dev/null");
    REQUIRE(w.code == 0);
    const auto wp = nlohmann::json::parse(w.out);
    if (domain > 4) {
      CHECK(wp["cluster"]["nvlink_domain"] == domain);
    } else {
      CHECK_FALSE(wp["cluster"].contains("nvlink_domain"));  // 19 trays: a segment of 1, each tray alone
    }
  }
}

TEST_CASE("cli_megatron_bridge_recipe_file_reports_a_refused_function_and_reads_the_others") {
  // Megatron-Bridge@067f987d perf_recipes/deepseek/h100/deepseek_v3.py: the 64-GPU functions keep
  // the 1,024-GPU layout (ep 64 x pp 8 = 512 ranks per expert grid), which Megatron-Core's
  // RankGenerator refuses on 64 ranks; the 1,024-GPU functions of the same file are still read.
  const std::string file = data("import/megatron-bridge/067f987d/src/megatron/bridge/perf_recipes/deepseek/h100/"
                                "deepseek_v3.py");
  Run all = planck("verify " + file);
  CHECK(all.code == 2);
  CHECK(all.out.find("deepseek_v3.py:38:1: error[config-unreadable]: [deepseek_v3_pretrain_64gpu_h100_bf16_config] "
                     "world_size (64) is not divisible") != std::string::npos);
  CHECK(all.out.find("[deepseek_v3_pretrain_1024gpu_h100_bf16_config]") != std::string::npos);
  // Named on its own, the function is the error it was.
  Run one = planck("verify " + file + ":deepseek_v3_pretrain_64gpu_h100_bf16_config");
  CHECK(one.code == 2);
  CHECK(one.out.find("world_size (64) is not divisible") != std::string::npos);
}

TEST_CASE("cli_megatron_bridge_recipe_and_launcher") {
  // Megatron-Bridge@067f987d perf recipe, detected from its text (ConfigContainer, megatron.bridge).
  const std::string recipe = data("import/megatron-bridge/067f987d/src/megatron/bridge/perf_recipes/llama/h100/"
                                  "llama3.py:llama3_70b_pretrain_64gpu_h100_bf16_config");
  Run ok = planck("verify " + recipe + " --nodes 8 --gpus-per-node 8 --strict");
  CHECK(ok.code == 0);
  // Bridge's interactive launcher runs scripts/performance/bootstrap.py, which picks its recipe
  // from family / recipe / GPU / dtype flags: refused, never the defaults of a Megatron-LM script
  // with no flags.
  Run launch = planck("verify " + data("corpus/megatron-bridge/mbridge__scripts__performance__rubin_launch_interactive.sh") +
                      " --nodes 1 --gpus-per-node 8");
  CHECK(launch.code == 2);
  CHECK(launch.out.find("error[config-unfollowed]") != std::string::npos);
  CHECK(launch.out.find("scripts/performance picks the recipe") != std::string::npos);
  // A run_recipe.py slurm script (examples/models/gpt_oss/slurm_pretrain.sh, three parallelism
  // configs on its #SBATCH 4 x 8): detected from its text, each launch verified; a TP the 32 ranks
  // cannot hold (--set TP=3 pins the variable the script's `read` sets) fails at the override's
  // line, model.tensor_model_parallel_size=$TP (line 186 of the script).
  const std::string slurm = data("import/megatron-bridge/067f987d/examples/models/gpt_oss/slurm_pretrain.sh");
  CHECK(planck("verify " + slurm + " --strict").code == 0);
  Run bad = planck("verify " + slurm + " --set TP=3");
  CHECK(bad.code == 1);
  CHECK(bad.out.find("slurm_pretrain.sh:186:1: error[mesh-world-mismatch]: [CONFIG=2,4,4,1,True]") != std::string::npos);
}

TEST_CASE("cli_verify_says_why_a_config_has_no_model") {
  // A torchtitan TOML whose flavour planck has no preset for (nscottnichols' blendcorpus
  // Llama3-70B, audit 3 D10.3): `import` warned "has no planck preset; model left out", `verify` said
  // only that the model rules did not run. The note now says why, as import does.
  const fs::path dir = temp_dir();
  const fs::path toml = dir / "flavour.toml";
  std::ofstream(toml) << "[model]\nname = \"llama3\"\nflavor = \"Llama3-70B-custom\"\n\n"
                         "[training]\nlocal_batch_size = 1\nseq_len = 8192\n\n"
                         "[parallelism]\ndata_parallel_shard_degree = -1\n";
  Run r = planck("verify " + toml.string() + " --nodes 1 --gpus-per-node 8");
  CHECK(r.out.find("checks-skipped") != std::string::npos);
  CHECK_MESSAGE(r.out.find("(the importer: ") != std::string::npos, r.out);
  CHECK(r.out.find("Llama3-70B-custom") != std::string::npos);
}
