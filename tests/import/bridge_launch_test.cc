// Megatron-Bridge launch scripts (NVIDIA-NeMo/Megatron-Bridge@067f987df03b8355b03192d88d70f1709fedf51a,
// copied verbatim to tests/data/import/megatron-bridge/067f987d/<the same path>, see
// tests/data/import/PROVENANCE.md): each runs scripts/training/run_recipe.py with a recipe name
// and Hydra-style KEY=VALUE overrides. The layouts asserted were read by hand off each script's
// PARALLELISM_CONFIG(S) / #SBATCH / torchrun lines; the mesh follows Megatron-Core's order
// tp-cp-ep-dp-pp, listed slowest first [pp, dp, ep, cp, tp], with dp = world / (tp·pp·cp) and the
// mesh's ep = ep / (cp·tp) taken from dp (docs/import.md "Megatron-LM").

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "import/bridge/recipe.h"
#include "tests/import/import_test_util.h"

namespace planck::import::test {
namespace {

const std::string kTree = "megatron-bridge/067f987d/";

// The 1-based line of `rel` that contains `needle` first (found in the file, not by planck).
int line_of(const std::string& rel, const std::string& needle) {
  const std::string text = read_data(kTree + rel);
  const std::size_t at = text.find(needle);
  REQUIRE_MESSAGE(at != std::string::npos, needle << " not in " << rel);
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

std::vector<NamedImport> launches(const std::string& rel, const ImportOptions& options = {}) {
  auto all = import_all("megatron-bridge", data_path(kTree + rel), options);
  REQUIRE_MESSAGE(all.is_ok(), (all.is_ok() ? std::string() : all.message()));
  return std::move(*all);
}

TEST_CASE("bridge_launch_slurm_script_with_overrides_gpt_oss_pretrain") {
  // examples/models/gpt_oss/slurm_pretrain.sh: #SBATCH --nodes=4 --ntasks-per-node=8 (32 ranks),
  // PARALLELISM_CONFIGS=("2,4,4,1,True" "4,2,4,1,True" "2,4,4,2,True") as TP,PP,EP,CP,SP, one
  // run_recipe.py --recipe gpt_oss_20b_pretrain_config per entry with GLOBAL_BATCH_SIZE=128,
  // MICRO_BATCH_SIZE=1, SEQ_LENGTH=4096 as model.* / train.* / dataset.* overrides.
  const std::string script = "examples/models/gpt_oss/slurm_pretrain.sh";
  const std::vector<NamedImport> all = launches(script);
  REQUIRE(all.size() == 3);
  struct Want {
    const char* name;
    std::int64_t tp, pp, ep, cp;
  };
  const Want want[] = {{"CONFIG=2,4,4,1,True", 2, 4, 4, 1},
                       {"CONFIG=4,2,4,1,True", 4, 2, 4, 1},
                       {"CONFIG=2,4,4,2,True", 2, 4, 4, 2}};
  const int tp_line = line_of(script, "model.tensor_model_parallel_size=$TP");
  const int pp_line = line_of(script, "model.pipeline_model_parallel_size=$PP");
  for (std::size_t k = 0; k < 3; ++k) {
    const Want& w = want[k];
    const ImportResult& r = all[k].result;
    CAPTURE(w.name);
    CHECK(all[k].name == w.name);
    CHECK(r.unfollowed.empty());
    CHECK(r.plan["cluster"]["nodes"] == 4);
    CHECK(r.plan["cluster"]["gpus_per_node"] == 8);
    const std::int64_t dp = 32 / (w.tp * w.pp * w.cp), mesh_ep = w.ep / (w.cp * w.tp);
    CHECK(shape_of(r) == Shape{w.pp, dp / mesh_ep, mesh_ep, w.cp, w.tp});
    CHECK(r.plan["parallelism"]["sequence_parallel"] == true);
    CHECK(r.plan["training"]["global_batch"] == 128);
    CHECK(r.plan["training"]["micro_batch"] == 1);
    CHECK(r.plan["training"]["seq_len"] == 4096);
    // recipes/gpt_oss/h100/gpt_oss.py: AutoBridge.from_hf_pretrained("openai/gpt-oss-20b").
    CHECK(r.plan["model"] == "gpt-oss-20b");
    // Each setting is located at the script line writing its override, not in the recipe.
    CHECK(r.source_path == data_path(kTree + script));
    CHECK(r.positions.at("/mesh/shape/4") == tp_line);
    CHECK(r.positions.at("/mesh/shape/0") == pp_line);
    CHECK(r.position_files.count("/mesh/shape/4") == 0);
    const bool verified_clean = error_rules(verify(r)).empty();
    CHECK(verified_clean);
  }
}

TEST_CASE("bridge_launch_shell_variable_set_on_the_command_line_reaches_the_override") {
  // --set TP=3 pins the variable `IFS=',' read -r TP ...` would assign: 3 x 4 x 1 does not divide
  // 32 ranks, and the mesh names the override line.
  ImportOptions o;
  o.sets = {{"TP", "3"}};
  const std::string script = "examples/models/gpt_oss/slurm_pretrain.sh";
  const std::vector<NamedImport> all = launches(script, o);
  REQUIRE(all.size() == 3);
  CHECK(shape_of(all[0].result)[4] == 3);
  CHECK(error_rules(verify(all[0].result)).find("mesh-world-mismatch") != std::string::npos);
  // A dotted --set is a ConfigContainer override over the script's own: pp 2 for the first
  // launch (tp 2, cp 1, ep 4): dp = 32 / 4 = 8, mesh ep 4 / 2 = 2.
  o.sets = {{"model.pipeline_model_parallel_size", "2"}};
  const std::vector<NamedImport> first = launches(script + ":1", o);
  REQUIRE(first.size() == 1);
  CHECK(shape_of(first[0].result) == Shape{2, 4, 2, 1, 2});
  // A variable the script never reads is said on each launch; the dotted override is not a variable.
  o.sets = {{"model.pipeline_model_parallel_size", "2"}, {"T_P", "3"}};
  const std::vector<NamedImport> typo = launches(script + ":1", o);
  REQUIRE(typo.size() == 1);
  REQUIRE(typo[0].result.findings.size() >= 1);
  int unread = 0;
  for (const ImportFinding& f : typo[0].result.findings) unread += f.rule == "unknown-key" && f.message.find("--set T_P=3") == 0;
  CHECK(unread == 1);
}

TEST_CASE("bridge_launch_script_colon_picks_one_launch_and_nothing_else_takes_a_colon") {
  const std::string script = data_path(kTree + "examples/models/gpt_oss/slurm_pretrain.sh");
  auto by_name = import_all("megatron-bridge", script + ":CONFIG=4,2,4,1,True", {});
  REQUIRE(by_name.is_ok());
  REQUIRE(by_name->size() == 1);
  CHECK(shape_of(by_name->front().result)[4] == 4);
  auto none = import_all("megatron-bridge", script + ":4", {});
  REQUIRE_FALSE(none.is_ok());
  CHECK(none.message().find("CONFIG=2,4,4,1,True; CONFIG=4,2,4,1,True; CONFIG=2,4,4,2,True") != std::string::npos);
  // A TOML has no functions or launches: FILE:NAME is refused, not read as FILE.
  auto toml = import_all("torchtitan", data_path("torchtitan/llama3_8b.toml") + ":x", world(1, 8));
  REQUIRE_FALSE(toml.is_ok());
  CHECK(toml.message().find("FILE:NAME") != std::string::npos);
}

TEST_CASE("bridge_launch_case_and_read_select_recipe_and_layout_deepseek_v4") {
  // examples/models/deepseek_v4/slurm_pretrain.sh: RECIPE_NAME=deepseek_v4_flash_pretrain_mxfp8_config
  // (a `case` on it adds checkpoint overrides), PARALLELISM_CONFIG=${PARALLELISM_CONFIG:-1,4,8,1}
  // split by `IFS=',' read -r TP PP EP CP`, and torchrun --nproc_per_node=$NPROC_PER_NODE
  // (${SLURM_GPUS_PER_NODE:-4}) --nnodes=$NNODES (${SLURM_JOB_NUM_NODES:-8}): 32 ranks.
  // The recipe's set_deepseek_v4_pipeline_model_parallel_layout (models/deepseek/
  // deepseek_v4_bridge.py:125-163) builds the layout from the model's num_layers, which
  // AutoBridge reads from the Hugging Face config when Bridge runs: refused at that line, until
  // the layout is given on the command line.
  const std::vector<NamedImport> refused = launches("examples/models/deepseek_v4/slurm_pretrain.sh");
  REQUIRE(refused.size() == 1);
  REQUIRE(refused[0].result.unfollowed.size() == 1);
  CHECK(refused[0].result.unfollowed[0].file.find("deepseek_v4_bridge.py") != std::string::npos);
  CHECK(refused[0].result.unfollowed[0].line == 143);
  CHECK(refused[0].result.unfollowed[0].settings == "model.pipeline_model_parallel_layout");
  ImportOptions layout;
  layout.sets = {{"model.pipeline_model_parallel_layout", "Et*10|t*11|t*11|t*11mL"}};
  const std::vector<NamedImport> pre = launches("examples/models/deepseek_v4/slurm_pretrain.sh", layout);
  REQUIRE(pre.size() == 1);
  const ImportResult& r = pre[0].result;
  CHECK(r.unfollowed.empty());
  CHECK(r.plan["parallelism"]["pipeline_layout"] == "Et*10|t*11|t*11|t*11mL");
  CHECK(any_contains(r.notes, "runs recipe deepseek_v4_flash_pretrain_mxfp8_config"));
  CHECK(r.plan["cluster"]["nodes"] == 8);
  CHECK(r.plan["cluster"]["gpus_per_node"] == 4);
  // tp 1, pp 4, ep 8, cp 1: dp = 32 / 4 = 8, all of it the mesh's ep.
  CHECK(shape_of(r) == Shape{4, 1, 8, 1, 1});
  CHECK(r.plan["training"]["global_batch"] == 128);
  CHECK(r.plan["training"]["seq_len"] == 4096);
  // slurm_sft.sh picks the recipe with `case "${MTP}" in on) ... ;; off) ... ;; esac` (MTP=on).
  const std::vector<NamedImport> sft = launches("examples/models/deepseek_v4/slurm_sft.sh", layout);
  REQUIRE(sft.size() == 1);
  CHECK(any_contains(sft[0].result.notes, "runs recipe deepseek_v4_flash_sft_config"));
  ImportOptions off = layout;
  off.sets.emplace_back("MTP", "off");
  CHECK(any_contains(launches("examples/models/deepseek_v4/slurm_sft.sh", off)[0].result.notes,
                     "runs recipe deepseek_v4_flash_no_mtp_sft_config"));
}

TEST_CASE("bridge_launch_overrides_run_recipe_refuses_are_errors_at_their_line") {
  // scripts/training/launch_with_sbatch.sh builds `run_recipe.py --recipe ... --step gpt`, an
  // option run_recipe.py does not define (its parser has --step-func / --step_func and
  // allow_abbrev=False): the run stops with "Unknown option: --step".
  const std::string script = "scripts/training/launch_with_sbatch.sh";
  auto r = import_all("megatron-bridge", data_path(kTree + script), {});
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.message().find("Unknown option: --step") != std::string::npos);
  // An older run_recipe.py (argparse's default allow_abbrev=True and parse_known_args, as
  // GeodesicResearch/geodesic-megatron's copy @df06386 still has) reads --step as the one option it
  // prefixes, --step-func: the refusal says which.
  CHECK(r.message().find("not read as --step-func") != std::string::npos);
  CHECK(r.message().find(script + ":" + std::to_string(line_of(script, "--step $STEP_TYPE"))) != std::string::npos);
}

TEST_CASE("bridge_launch_pp_override_over_a_recipe_layout_builder_is_refused") {
  // examples/models/glm/glm_45v/slurm_sft.sh overrides model.pipeline_model_parallel_size; its
  // recipe sets a _pipeline_model_parallel_layout_builder, which run_recipe.py reruns for the new
  // pp (recipe_runner.py sync_model_pipeline_layout). planck does not run it: config-unfollowed
  // at the override's line.
  const std::string script = "examples/models/glm/glm_45v/slurm_sft.sh";
  const std::vector<NamedImport> all = launches(script);
  REQUIRE(all.size() == 1);
  bool at_override = false;
  for (const Unfollowed& u : all[0].result.unfollowed) {
    at_override = at_override || (u.file == data_path(kTree + script) &&
                                  u.line == line_of(script, "model.pipeline_model_parallel_size=") &&
                                  u.settings == "model.pipeline_model_parallel_layout");
  }
  CHECK(at_override);
}

TEST_CASE("bridge_launch_unknown_value_of_a_setting_that_matters_is_refused") {
  // A launch whose override takes a variable nothing sets: its value is not known, so the
  // setting is refused rather than left at the recipe's (the slurm examples take TP from a loop;
  // without one it is empty).
  const std::string text =
      "#!/bin/bash\n#SBATCH --nodes=4\n#SBATCH --ntasks-per-node=8\n"
      "python scripts/training/run_recipe.py --recipe gpt_oss_20b_pretrain_config \\\n"
      "    model.tensor_model_parallel_size=$TP logger.log_interval=$LOG\n";
  const std::string path = data_path(kTree + "examples/models/gpt_oss/unset_tp.sh");
  auto r = import_bridge_launch(text, path, {});
  REQUIRE_MESSAGE(r.is_ok(), (r.is_ok() ? std::string() : r.message()));
  REQUIRE(r->size() == 1);
  const ImportResult& one = r->front().result;
  REQUIRE(one.unfollowed.size() == 1);  // the logger override is only noted
  CHECK(one.unfollowed[0].construct == "model.tensor_model_parallel_size=");
  CHECK(one.unfollowed[0].line == 5);
  CHECK(one.unfollowed[0].settings == "model.tensor_model_parallel_size");
}

TEST_CASE("bridge_launch_mode_is_the_recipes_peft_scheme") {
  // run_recipe.py --mode dora calls the recipe with peft_scheme="dora" (recipe_runner.py
  // _load_with_optional_kwargs); gpt_oss_20b_peft_1gpu_h100_bf16_config(peft_scheme="lora") then
  // builds DoRA. Without --mode the name's _peft_ means lora, the recipe's default.
  const std::string head = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n"
                           "python scripts/training/run_recipe.py --recipe gpt_oss_20b_peft_config";
  const std::string path = data_path(kTree + "examples/models/gpt_oss/mode.sh");
  auto lora = import_bridge_launch(head + "\n", path, {});
  REQUIRE_MESSAGE(lora.is_ok(), (lora.is_ok() ? std::string() : lora.message()));
  CHECK(any_contains(lora->front().result.notes, "peft LoRA: adapters of rank 32"));
  auto dora = import_bridge_launch(head + " --mode dora\n", path, {});
  REQUIRE_MESSAGE(dora.is_ok(), (dora.is_ok() ? std::string() : dora.message()));
  CHECK(any_contains(dora->front().result.warnings, "peft DoRA is not modelled"));
  // --mode sft contradicts the recipe's name: run_recipe.py's _validate_recipe_mode refuses it.
  CHECK_FALSE(import_bridge_launch(head + " --mode sft\n", path, {}).is_ok());
}

TEST_CASE("bridge_launch_recipe_found_through_python_path") {
  // The launch outside a Bridge checkout: the recipe is not found beside it (config-unfollowed,
  // with the fix), and is with --python-path naming the checkout's src/.
  const std::string text = read_data(kTree + "examples/models/gpt_oss/slurm_pretrain.sh");
  const std::string outside = "/nonexistent-planck-test/slurm_pretrain.sh";
  auto lost = import_bridge_launch(text, outside, {});
  REQUIRE(lost.is_ok());
  REQUIRE(lost->front().result.unfollowed.size() == 1);
  CHECK(lost->front().result.unfollowed[0].why.find("--python-path") != std::string::npos);
  ImportOptions o;
  o.python_path = {data_path(kTree + "src")};
  auto found = import_bridge_launch(text, outside, o);
  REQUIRE_MESSAGE(found.is_ok(), (found.is_ok() ? std::string() : found.message()));
  REQUIRE(found->size() == 3);
  CHECK(found->front().result.unfollowed.empty());
  CHECK(found->front().result.plan["model"] == "gpt-oss-20b");
}

TEST_CASE("bridge_launch_override_values_parse_as_hydra_does") {
  // hydra's override grammar: true/false in any case, null, quoted strings, lists.
  CHECK(bridge::override_value("True") == true);
  CHECK(bridge::override_value("FALSE") == false);
  CHECK(bridge::override_value("null").is_null());
  CHECK(bridge::override_value("4096") == 4096);
  CHECK(bridge::override_value("5e-6") == 5e-6);
  CHECK(bridge::override_value("'\"9999,8,2\"'") == "\"9999,8,2\"");
  CHECK(bridge::override_value("[0]") == nlohmann::json::array({0}));
  CHECK(bridge::override_value("[[a, b], null]") == nlohmann::json::parse(R"([["a", "b"], null])"));
  CHECK(bridge::override_value("bf16_mixed") == "bf16_mixed");
}

}  // namespace
}  // namespace planck::import::test
