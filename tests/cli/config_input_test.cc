// planck verify / import on framework configs that need more than one file, or that cannot be
// followed: the exit codes and where the findings point (docs/verify.md config-unfollowed,
// docs/import.md "torchtitan (Python registries)"). Inputs: torchtitan's own files at b5bcd76c
// (tests/data/import/torchtitan/pkg-b5bcd76c, tests/data/import/PROVENANCE.md).

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/run_command.h"

namespace fs = std::filesystem;

namespace {

using Run = planck_test::CommandRun;

Run planck(const std::string& args) { return planck_test::run_command(std::string(PLANCK_BIN) + " " + args + " 2>&1"); }

std::string pkg(const std::string& rel) {
  return std::string(PLANCK_TEST_DATA_DIR) + "/import/torchtitan/pkg-b5bcd76c/" + rel;
}

fs::path temp_dir() {
  fs::path d = fs::temp_directory_path() / ("planck-config-input-" + std::to_string(::getpid()));
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
