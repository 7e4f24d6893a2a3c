// Megatron-Bridge perf recipes (NVIDIA-NeMo/Megatron-Bridge@067f987d, src/megatron/bridge/
// perf_recipes/*/h100/, with the recipes and training modules they import, verbatim:
// tests/data/import/PROVENANCE.md). The degrees and batches asserted were read by hand off each
// function's `cfg.model.*` / `cfg.train.*` lines (cited per case); the mesh follows Megatron-Core's
// order tp-cp-ep-dp-pp (dp = world / (tp·pp·cp); EP over cp·tp·(part of dp) with etp 1:
// mesh ep = ep / (cp·tp), docs/import.md "Megatron-LM").

#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/plan/pipeline_split.h"
#include "tests/import/import_test_util.h"
#include "tests/temp_dir.h"

namespace planck::import::test {
namespace {

std::string recipe(const std::string& rel) {
  return data_path("megatron-bridge/067f987d/src/megatron/bridge/perf_recipes/" + rel);
}

ImportResult import_one(const std::string& spec, std::int64_t nodes) {
  auto all = import_all("megatron-bridge", spec, world(nodes, 8));
  REQUIRE_MESSAGE(all.is_ok(), (all.is_ok() ? std::string() : all.message()));
  REQUIRE(all->size() == 1);
  return std::move(all->front().result);
}

TEST_CASE("bridge_perf_recipes_llama3_8b_70b_and_llama31_405b") {
  // llama/h100/llama3.py llama3_8b_pretrain_8gpu_h100_bf16_config: tp 1, pp 1, cp 2, gbs 128, mbs 1.
  const ImportResult l8 = import_one(recipe("llama/h100/llama3.py:llama3_8b_pretrain_8gpu_h100_bf16_config"), 1);
  CHECK(l8.unfollowed.empty());
  CHECK(l8.plan["model"] == "llama3-8b");  // AutoBridge.from_hf_pretrained("meta-llama/Meta-Llama-3-8B")
  CHECK(shape_of(l8) == Shape{1, 8 / 2, 2, 1});
  CHECK(l8.plan["training"]["global_batch"] == 128);
  CHECK(l8.plan["training"]["micro_batch"] == 1);
  CHECK(l8.plan["training"]["param_dtype"] == "bf16");  // _perf_precision("bf16")
  // llama3_70b_pretrain_64gpu_h100_bf16_config: "TP=4 PP=4 CP=2, GBS=256", VPP 5.
  const ImportResult l70 = import_one(recipe("llama/h100/llama3.py:llama3_70b_pretrain_64gpu_h100_bf16_config"), 8);
  CHECK(l70.unfollowed.empty());
  CHECK(l70.plan["model"] == "llama3-70b");
  CHECK(shape_of(l70) == Shape{4, 64 / (4 * 4 * 2), 2, 4});
  CHECK(l70.plan["parallelism"]["virtual_stages"] == 5);
  CHECK(l70.plan["training"]["global_batch"] == 256);
  // llama/h100/llama31.py llama31_405b_pretrain_512gpu_h100_bf16_config: the 1024-GPU recipe
  // (TP 8, PP 8, CP 2, VPP 8) with _with_global_batch_size(..., 768).
  const ImportResult l405 =
      import_one(recipe("llama/h100/llama31.py:llama31_405b_pretrain_512gpu_h100_bf16_config"), 64);
  CHECK(l405.unfollowed.empty());
  CHECK(l405.plan["model"] == "llama3-405b");
  CHECK(shape_of(l405) == Shape{8, 512 / (8 * 8 * 2), 2, 8});
  CHECK(l405.plan["parallelism"]["virtual_stages"] == 8);
  CHECK(l405.plan["training"]["global_batch"] == 768);
  // perf_recipes/_common.py sets ddp.grad_reduce_in_fp32 = False: gradients kept and reduced in bf16.
  CHECK(l405.plan["training"]["reduce_dtype"] == "bf16");
  // Each finding points where the recipe set the value: tp in perf_recipes/llama/h100/llama3.py.
  CHECK(l70.position_files.count("/mesh/shape/3") == 0);
  CHECK(l70.positions.at("/mesh/shape/3") > 0);
}

TEST_CASE("bridge_perf_recipes_deepseek_v3_and_qwen3_moe") {
  // deepseek/h100/deepseek_v3.py deepseek_v3_pretrain_1024gpu_h100_bf16_config: tp 2, pp 8, vpp 4,
  // cp 1, ep 64 (etp 1 from the base recipe), gbs 16384, on 1024 GPUs: dp 1024 / 16 = 64, mesh ep
  // 64 / 2 = 32 and dp 64 / 32 = 2.
  const ImportResult ds =
      import_one(recipe("deepseek/h100/deepseek_v3.py:deepseek_v3_pretrain_1024gpu_h100_bf16_config"), 128);
  CHECK(ds.unfollowed.empty());
  CHECK(ds.plan["model"] == "deepseek-v3");
  CHECK(shape_of(ds) == Shape{8, 2, 32, 1, 2});
  CHECK(ds.plan["parallelism"]["virtual_stages"] == 4);
  CHECK(ds.plan["training"]["global_batch"] == 16384);
  // perf_recipes/deepseek/h100/deepseek_v3.py:48 passes the layout "Et|(tt|)*30mL" to
  // set_deepseek_v3_pipeline_model_parallel_layout, which assigns it (recipes/deepseek/h100/
  // deepseek_v3.py:83). Megatron-Core's parse_str_to_list unrolls it to 32 stages: the embedding
  // with 1 decoder layer, 30 stages of 2 layers, then the MTP layer with the loss; 1 + 60 = 61,
  // DeepSeek-V3's num_hidden_layers. Over pp 8 that is the 4 chunks per rank the recipe states.
  CHECK(ds.plan["parallelism"]["pipeline_layout"] == "Et|(tt|)*30mL");
  CHECK(ds.position_files.at("/parallelism/pipeline_layout").find("recipes/deepseek/h100/deepseek_v3.py") !=
        std::string::npos);
  CHECK(ds.positions.at("/parallelism/pipeline_layout") == 83);
  core::Parallelism par;
  par.pipeline_layout = ds.plan["parallelism"]["pipeline_layout"].get<std::string>();
  auto split = core::megatron_split(par, 61, 8, 4);
  REQUIRE_MESSAGE(split.is_ok(), (split.is_ok() ? std::string() : split.message()));
  std::vector<std::int64_t> expected = {1};
  expected.insert(expected.end(), 30, 2);
  expected.push_back(0);
  CHECK(split->layers == expected);
  CHECK(split->mtp_layers == 1);
  CHECK(split->loss_stage == 31);
  // deepseek_v3_pretrain_1024gpu_h100_fp8sc_config sets pp 8, vp 2 and no layout string; the
  // recipe's set_deepseek_v3_pipeline_model_parallel_layout then takes
  // _get_deepseek_v3_pipeline_layout(8, 2, 1) from its layout_map (recipes/deepseek/h100/
  // deepseek_v3.py:50-68): [["embedding"] + ["decoder"] * 4] + [["decoder"] * 4] * 14 +
  // [["decoder"] + ["mtp"] + ["loss"]], 16 stages, 4 + 56 + 1 = 61 layers.
  const ImportResult sc =
      import_one(recipe("deepseek/h100/deepseek_v3.py:deepseek_v3_pretrain_1024gpu_h100_fp8sc_config"), 128);
  CHECK(sc.unfollowed.empty());
  std::string want = "Etttt";
  for (int k = 0; k < 14; ++k) want += "|tttt";
  want += "|tmL";
  CHECK(sc.plan["parallelism"]["pipeline_layout"] == want);
  CHECK(sc.plan["parallelism"]["virtual_stages"] == 2);
  // qwen/h100/qwen3_moe.py qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config -> recipes/qwen/h100/
  // qwen3_moe.py: tp 1, pp 1, cp 1, ep 16, etp 1, gbs 1024, mbs 1, seq 4096.
  const ImportResult qw = import_one(recipe("qwen/h100/qwen3_moe.py:qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config"), 2);
  CHECK(qw.unfollowed.empty());
  CHECK(qw.plan["model"] == "qwen3-30b-a3b");
  CHECK(shape_of(qw) == Shape{1, 1, 16, 1, 1});
  CHECK(qw.plan["training"]["global_batch"] == 1024);
  CHECK(qw.plan["training"]["seq_len"] == 4096);
}

TEST_CASE("bridge_set_overrides_a_recipe_field") {
  // --set model.tensor_model_parallel_size=8 (the a.b=c override a Bridge launch would pass).
  ImportOptions o = world(8, 8);
  o.sets = {{"model.tensor_model_parallel_size", "8"}};
  auto all = import_all("megatron-bridge", recipe("llama/h100/llama3.py:llama3_70b_pretrain_64gpu_h100_bf16_config"), o);
  REQUIRE(all.is_ok());
  CHECK(shape_of(all->front().result) == Shape{4, 64 / (8 * 4 * 2), 2, 8});
}

TEST_CASE("bridge_optimizer_dtypes_are_read_as_megatron_lms_flags") {
  // recipes/moonlight/h100/moonlight_16b.py:211-216 (moonlight_16b_pretrain_8gpu_h100_bf16_config):
  // use_precision_aware_optimizer True, main_params_dtype torch.float32, main_grads_dtype,
  // exp_avg_dtype and exp_avg_sq_dtype torch.bfloat16. OptimizerConfig is Megatron-Core's
  // (optimizer_config.py:187-206@d98e8a6): bf16 moments, as Megatron-LM's --exp-avg-dtype bf16
  // --exp-avg-sq-dtype bf16 (arguments.py:1076-1085 maps those strings to the same dtypes).
  const std::string moon = data_path("megatron-bridge/067f987d/src/megatron/bridge/recipes/moonlight/h100/"
                                     "moonlight_16b.py:moonlight_16b_pretrain_8gpu_h100_bf16_config");
  auto all = import_all("megatron-bridge", moon, world(1, 8));
  REQUIRE_MESSAGE(all.is_ok(), (all.is_ok() ? std::string() : all.message()));
  const ImportResult& r = all->front().result;
  CHECK(r.plan["training"]["optimizer_state_dtype"] == "bf16");
  // Its MixedPrecisionConfig(grad_reduce_in_fp32=False) (:243-248) is what keeps the gradients in bf16.
  CHECK(r.plan["training"]["reduce_dtype"] == "bf16");
  for (const std::string& n : r.notes) CHECK_MESSAGE(n.find("exp_avg_dtype = `torch") == std::string::npos, n);
  CHECK(any_contains(r.notes, "optimizer.main_grads_dtype = bf16"));
  // A torch dtype Megatron-LM has no flag value for is said, never priced as fp32 silently.
  ImportOptions o = world(1, 8);
  o.sets = {{"optimizer.exp_avg_dtype", "torch.float8_e4m3fn"}};
  auto odd = import_all("megatron-bridge", moon, o);
  REQUIRE(odd.is_ok());
  CHECK_FALSE(odd->front().result.plan["training"].contains("optimizer_state_dtype"));
  CHECK(any_contains(odd->front().result.warnings, "setting-unmodelled: --exp-avg-dtype torch.float8_e4m3fn"));
}

TEST_CASE("bridge_detected_from_the_recipe_text") {
  CHECK(detect_framework("r.py", "from megatron.bridge.training.config import ConfigContainer\n") ==
        "megatron-bridge");
  CHECK(detect_framework("config_registry.py", "def f() -> Trainer.Config: ...\n") == "torchtitan");
}

TEST_CASE("bridge_cross_entropy_fusion_impl_te_is_read") {
  // recipes/llama/h100/llama3.py:98-99 (llama32_1b_pretrain_1gpu_h100_bf16_config):
  // cross_entropy_loss_fusion True, cross_entropy_fusion_impl "te": Megatron-Core runs Transformer
  // Engine's cross entropy (language_module.py); Bridge does not run Megatron-LM's argument checks,
  // so no refusal is said.
  const std::string l1 = data_path("megatron-bridge/067f987d/src/megatron/bridge/recipes/llama/h100/"
                                   "llama3.py:llama32_1b_pretrain_1gpu_h100_bf16_config");
  auto all = import_all("megatron-bridge", l1, world(1, 1));
  REQUIRE_MESSAGE(all.is_ok(), (all.is_ok() ? std::string() : all.message()));
  const ImportResult& r = all->front().result;
  CHECK(r.plan["training"]["cross_entropy"] == "te");
  for (const ImportFinding& f : r.findings) CHECK_MESSAGE(f.message.find("#5115") == std::string::npos, f.message);
  // cross_entropy_loss_fusion False: Megatron-Core's unfused cross entropy (the fp32 copy).
  ImportOptions o = world(1, 1);
  o.sets = {{"model.cross_entropy_loss_fusion", "false"}};
  auto unfused = import_all("megatron-bridge", l1, o);
  REQUIRE(unfused.is_ok());
  CHECK_FALSE(unfused->front().result.plan["training"].contains("cross_entropy"));
}

TEST_CASE("bridge_recipe_beside_an_unrelated_megatron_folder_finds_bridge_on_the_python_path") {
  // awslabs' 3.test_cases/megatron/megatron-bridge/kimi-k2/conf/*.py (audit 3, F10): a third-party
  // recipe whose parent directory also holds a `megatron/` folder without bridge/ in it. Python
  // would import the installed megatron.bridge; the --python-path tree must not be hidden by it.
  const auto dir = planck_test::process_temp_dir("planck-bridge") / "layout";
  std::filesystem::create_directories(dir / "megatron" / "other");
  std::filesystem::create_directories(dir / "conf");
  std::ofstream(dir / "conf" / "my_recipe.py")
      << "from megatron.bridge.recipes.llama.h100.llama3 import llama32_1b_pretrain_1gpu_h100_bf16_config\n"
         "from megatron.bridge.training.config import ConfigContainer\n\n"
         "def my_cfg() -> ConfigContainer:\n"
         "    cfg = llama32_1b_pretrain_1gpu_h100_bf16_config()\n"
         "    cfg.model.tensor_model_parallel_size = 2\n"
         "    return cfg\n";
  ImportOptions o = world(1, 2);
  o.python_path = {data_path("megatron-bridge/067f987d/src")};
  auto all = import_all("megatron-bridge", (dir / "conf" / "my_recipe.py").string() + ":my_cfg", o);
  REQUIRE_MESSAGE(all.is_ok(), (all.is_ok() ? std::string() : all.message()));
  const ImportResult& r = all->front().result;
  CHECK(r.failed.empty());
  CHECK(r.unfollowed.empty());
  CHECK(r.plan["mesh"]["shape"].back() == 2);
  std::filesystem::remove_all(dir);
}

TEST_CASE("bridge_recipe_environment_reads_take_set_values_or_say_their_defaults") {
  // awslabs' kimi_k2_sft.py (audit 3, F13): `TENSOR_PARALLEL = int(os.environ.get("TENSOR_PARALLEL", "8"))`
  // at module level, used in the recipe, and branches on `os.environ.get("MOE_DISPATCHER", "deepep")`.
  // Python's os.environ.get returns the variable when the launch sets it, else the default: --set
  // NAME=VALUE is the launch's value; without it the default is taken and said where it matters.
  const auto dir = planck_test::process_temp_dir("planck-bridge") / "env";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "env_recipe.py")
      << "import os\n"
         "from megatron.bridge.recipes.llama.h100.llama3 import llama32_1b_pretrain_1gpu_h100_bf16_config\n"
         "from megatron.bridge.training.config import ConfigContainer\n\n"
         "TP = int(os.environ.get(\"TP\", \"2\"))\n"
         "OUT = os.environ.get(\"OUT_DIR\", \"/tmp/out\")\n\n"
         "def env_cfg() -> ConfigContainer:\n"
         "    cfg = llama32_1b_pretrain_1gpu_h100_bf16_config()\n"
         "    cfg.model.tensor_model_parallel_size = TP\n"
         "    if os.getenv(\"BIG_BATCH\", \"0\") == \"1\":\n"
         "        cfg.train.global_batch_size = 1024\n"
         "    cfg.checkpoint.save = OUT\n"
         "    return cfg\n\n"
         "def env_cfg_2() -> ConfigContainer:\n"
         "    cfg = llama32_1b_pretrain_1gpu_h100_bf16_config()\n"
         "    cfg.model.tensor_model_parallel_size = TP\n"
         "    return cfg\n";
  ImportOptions o = world(1, 4);
  o.python_path = {data_path("megatron-bridge/067f987d/src")};
  const std::string spec = (dir / "env_recipe.py").string() + ":env_cfg";
  auto defaults = import_all("megatron-bridge", spec, o);
  REQUIRE_MESSAGE(defaults.is_ok(), (defaults.is_ok() ? std::string() : defaults.message()));
  const ImportResult& d = defaults->front().result;
  CHECK(d.unfollowed.empty());
  CHECK(d.plan["mesh"]["shape"].back() == 2);
  auto said = [](const ImportResult& r, int line, const std::string& text) {
    for (const ImportFinding& f : r.findings) {
      if (f.line == line && f.message.find(text) != std::string::npos) return true;
    }
    return false;
  };
  CHECK(said(d, 10, "comes from the environment (TP)"));
  CHECK(said(d, 11, "decided by the default of BIG_BATCH"));
  // The file read whole: each recipe reads the same module-level TP, and each says so.
  auto both = import_all("megatron-bridge", (dir / "env_recipe.py").string(), o);
  REQUIRE(both.is_ok());
  REQUIRE(both->size() == 2);
  for (const NamedImport& n : *both) {
    CHECK_MESSAGE(said(n.result, n.name == "env_cfg" ? 10 : 18, "comes from the environment (TP)"), n.name);
  }
  // OUT_DIR reaches only the checkpoint path, which planck does not read: a note, no warning.
  for (const ImportFinding& f : d.findings) CHECK(f.message.find("OUT_DIR") == std::string::npos);
  // The launch's values: TP=4 and BIG_BATCH=1 take effect, and nothing is said.
  o.sets = {{"TP", "4"}, {"BIG_BATCH", "1"}};
  auto given = import_all("megatron-bridge", spec, o);
  REQUIRE(given.is_ok());
  const ImportResult& g = given->front().result;
  CHECK(g.plan["mesh"]["shape"].back() == 4);
  CHECK(g.plan["training"]["global_batch"] == 1024);
  CHECK_FALSE(said(g, 10, "environment"));
  CHECK_FALSE(said(g, 11, "BIG_BATCH"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace planck::import::test
