// The Python config reader (python/planck_torchtitan_registry.py) on Megatron-Bridge's own recipe
// modules (NVIDIA-NeMo/Megatron-Bridge@067f987d, verbatim in tests/data/import/megatron-bridge/):
// module constants written with a type annotation, compatibility aliases for renamed recipes, and
// which functions of a file are recipes.

#include <doctest/doctest.h>

#include <set>
#include <vector>
#include <string>

#include "tests/import/import_test_util.h"

namespace planck::import::test {
namespace {

std::string recipes(const std::string& rel) {
  return data_path("megatron-bridge/067f987d/src/megatron/bridge/recipes/" + rel);
}

}  // namespace

TEST_CASE("pyeval_annotated_module_constants_are_followed") {
  // recipes/llama/h100/llama3.py:36 `SEQUENCE_LENGTH_128K: int = 131072`, used at lines 505 / 514
  // by llama3_8b_pretrain_64gpu_h100_bf16_128k_config ("TP=4, PP=2, CP=8"): an error
  // (config-unfollowed) before it was read.
  auto all = import_all("megatron-bridge",
                        recipes("llama/h100/llama3.py:llama3_8b_pretrain_64gpu_h100_bf16_128k_config"), world(8, 8));
  REQUIRE_MESSAGE(all.is_ok(), (all.is_ok() ? std::string() : all.message()));
  const ImportResult& r = all->front().result;
  CHECK(r.unfollowed.empty());
  CHECK(r.plan["training"]["seq_len"] == 131072);
  CHECK(shape_of(r) == Shape{2, 64 / (4 * 2 * 8), 8, 4});  // pp, dp, cp, tp
}

TEST_CASE("pyeval_recipe_aliases_resolve_to_the_recipe_they_name") {
  // recipes/llama/llama3.py ("Compatibility aliases for legacy recipe names"):
  // `from megatron.bridge.recipes.llama.h100.llama3 import llama3_8b_pretrain_2gpu_h100_bf16_config
  // as llama3_8b_pretrain_config`. h100/llama3.py:235-263: cp 2, seq 8192, gbs 512, mbs 1.
  auto alias = import_all("megatron-bridge", recipes("llama/llama3.py:llama3_8b_pretrain_config"), world(1, 2));
  REQUIRE_MESSAGE(alias.is_ok(), (alias.is_ok() ? std::string() : alias.message()));
  auto real = import_all("megatron-bridge", recipes("llama/h100/llama3.py:llama3_8b_pretrain_2gpu_h100_bf16_config"),
                         world(1, 2));
  REQUIRE(real.is_ok());
  const ImportResult& a = alias->front().result;
  CHECK(a.plan["training"]["seq_len"] == 8192);
  CHECK(a.plan["training"]["global_batch"] == 512);
  CHECK(a.plan["parallelism"] == real->front().result.plan["parallelism"]);
  CHECK(a.plan["training"] == real->front().result.plan["training"]);
  // The world is the one the recipe's own name states (2gpu), also asked for by its alias.
  auto unsized = import_all("megatron-bridge", recipes("llama/llama3.py:llama3_8b_pretrain_config"), ImportOptions{});
  REQUIRE_MESSAGE(unsized.is_ok(), (unsized.is_ok() ? std::string() : unsized.message()));
  CHECK(unsized->front().result.plan["cluster"]["gpus_per_node"] == 2);
  CHECK(unsized->front().result.plan["cluster"]["nodes"] == 1);
  // The alias module read whole offers its aliases under their legacy names.
  auto every = import_all("megatron-bridge", recipes("llama/llama3.py"), world(1, 8));
  REQUIRE(every.is_ok());
  std::set<std::string> names;
  for (const NamedImport& n : *every) names.insert(n.name);
  CHECK(names.count("llama3_8b_pretrain_config") == 1);
  CHECK(names.count("llama3_70b_pretrain_config") == 1);
}

TEST_CASE("pyeval_a_bridge_file_of_helpers_has_no_recipe") {
  // recipes/utils/optimizer_utils.py returns (OptimizerConfig, SchedulerConfig) pairs: helpers a
  // recipe calls, not recipes (`-> ConfigContainer`), so the file offers none.
  auto all = import_all("megatron-bridge", recipes("utils/optimizer_utils.py"), world(1, 8));
  REQUIRE_FALSE(all.is_ok());
  CHECK(all.message().find("no recipe function") != std::string::npos);
}

TEST_CASE("pyeval_loops_over_known_values_build_a_pipeline_layout") {
  // recipes/exaone/h100/exaone_moe.py get_k_exaone_2_0_pipeline_layout (lines 34-63): 78 decoder
  // layers + 4 MTP layers over pp 16 (no vpp): ceil(82 / 16) = 6 a stage, the last holds 6 - 4 = 2
  // decoder layers, the MTP layers and the loss; the other 76 spread over 15 stages, 5 each with
  // the remainder (1) on the first, which also holds the embedding. A for loop, list.append,
  // divmod and max: an error (the loop not followed) before they were.
  auto all = import_all("megatron-bridge",
                        recipes("exaone/h100/exaone_moe.py:exaone_moe_2_0_750b_a37_pretrain_512gpu_h100_bf16_config"),
                        world(64, 8));
  REQUIRE_MESSAGE(all.is_ok(), (all.is_ok() ? std::string() : all.message()));
  const ImportResult& r = all->front().result;
  CHECK(r.unfollowed.empty());
  std::string want = "E" + std::string(6, 't');
  for (int s = 1; s < 15; ++s) want += "|" + std::string(5, 't');
  want += "|tt" + std::string(4, 'm') + "L";
  CHECK(r.plan["parallelism"]["pipeline_layout"] == want);
}

TEST_CASE("pyeval_a_list_edited_where_planck_cannot_follow_is_not_read_stale") {
  // tests/data/import/pyeval/edits.py: list.insert is not followed, and a loop's `break` depends on
  // a field the recipe never set; the layout is then unknown (config-unfollowed), never the list
  // as it was before the edit.
  for (const char* fn : {"stale_after_unfollowed_call", "loop_with_unknown_break"}) {
    CAPTURE(fn);
    auto r = import_all("megatron-bridge", data_path(std::string("pyeval/edits.py:") + fn), world(1, 8));
    REQUIRE(r.is_ok());
    const std::vector<Unfollowed>& u = r->front().result.unfollowed;
    REQUIRE(u.size() == 1);
    CHECK(u[0].settings.find("model.pipeline_model_parallel_layout") != std::string::npos);
    CHECK(u[0].line == (std::string(fn) == "stale_after_unfollowed_call" ? 12 : 24));
  }
}

TEST_CASE("pyeval_partial_layout_builders_and_bridge_expert_tensor_parallel_default") {
  // recipes/glm_vl/h100/glm_45v.py:92-101: set_glm_45v_pipeline_model_parallel_layout calls
  // functools.partial(_get_glm_45v_pipeline_layout, is_peft=False)(8, None), whose layout_map[(8, 1)]
  // (lines 56-64) is [embedding + 1 decoder] + 6 x [7 decoders] + [3 decoders + loss].
  // glm_45v_sft_128gpu_h100_bf16_config (lines 109-131) sets tp 1, pp 8, ep 16 and no expert tensor
  // parallelism: Megatron-Bridge's default is then 1 (models/transformer_config.py
  // _set_moe_expert_tensor_parallel_default, #4579), so the expert grid etp 1 x ep 16 x pp 8 holds
  // all 128 GPUs; with Megatron-Core's default (etp = tp = 1 here) it is the same, and a recipe with
  // tp > 1 (qwen3_vl's tp 4, ep 4, pp 2 on 8 GPUs) is refused by Megatron only under Core's default.
  auto all = import_all("megatron-bridge", recipes("glm_vl/h100/glm_45v.py:glm_45v_sft_128gpu_h100_bf16_config"),
                        world(16, 8));
  REQUIRE_MESSAGE(all.is_ok(), (all.is_ok() ? std::string() : all.message()));
  const ImportResult& r = all->front().result;
  CHECK(r.unfollowed.empty());
  std::string want = "Et";
  for (int s = 0; s < 6; ++s) want += "|" + std::string(7, 't');
  want += "|tttL";
  CHECK(r.plan["parallelism"]["pipeline_layout"] == want);
  CHECK(r.plan["mesh"]["dims"] == nlohmann::ordered_json{"pp", "dp", "ep", "cp", "tp"});
  CHECK(r.plan["mesh"]["shape"] == nlohmann::ordered_json{8, 128 / (8 * 16), 16, 1, 1});
  bool said = false;
  for (const std::string& n : r.notes) said = said || n.find("expert_tensor_parallel_size unset") != std::string::npos;
  CHECK(said);
  // recipes/qwen_vl/h100/qwen3_vl.py:98-108 qwen3_vl_30b_a3b_pretrain_8gpu_h100_bf16_mock_config: tp 4,
  // pp 2, ep 4 on 8 GPUs. Under Core's default (etp = tp = 4) Megatron raises (8 % (4 x 4 x 2)); under
  // Bridge's, etp 1 x ep 4 x pp 2 = 8: the experts are split 4 ways over tp x dp, the mesh's ep dim 4 / tp 4.
  auto vl = import_all("megatron-bridge",
                       recipes("qwen_vl/h100/qwen3_vl.py:qwen3_vl_30b_a3b_pretrain_8gpu_h100_bf16_mock_config"),
                       world(1, 8));
  REQUIRE_MESSAGE(vl.is_ok(), (vl.is_ok() ? std::string() : vl.message()));
  CHECK(vl->front().result.plan["mesh"]["shape"] == nlohmann::ordered_json{2, 1, 4 / 4, 1, 4});
}

}  // namespace planck::import::test
