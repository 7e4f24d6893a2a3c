// The Python config reader (python/planck_torchtitan_registry.py) on Megatron-Bridge's own recipe
// modules (NVIDIA-NeMo/Megatron-Bridge@067f987d, verbatim in tests/data/import/megatron-bridge/):
// module constants written with a type annotation, compatibility aliases for renamed recipes, and
// which functions of a file are recipes.

#include <doctest/doctest.h>

#include <set>
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
  auto all = import_all("megatron-bridge", recipes("llama/h100/llama3.py:llama3_8b_pretrain_64gpu_h100_bf16_128k_config"),
                        world(8, 8));
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

}  // namespace planck::import::test
