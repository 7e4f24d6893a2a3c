// torchtitan registries built on functions imported from torchtitan's own package, read across
// files (tests/data/import/torchtitan/pkg-b5bcd76c: the files these functions import, verbatim
// from pytorch/torchtitan@b5bcd76c, see PROVENANCE.md). The degrees asserted were read by hand off
// torchtitan_recipes/tests/models.py (each function's `config.parallelism.* = N` edits, on top of
// the base function's ParallelismConfig in torchtitan/models/<model>/config_registry.py), and
// the mesh follows torchtitan's ParallelDims (EP borrows dp_shard x cp x tp ranks with etp 1:
// efsdp = dp_shard·cp·tp / ep, mesh ep = ep / (cp·tp); docs/import.md).

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>
#include <string>

#include "tests/import/import_test_util.h"

namespace planck::import::test {
namespace {

const std::string kPkg = "torchtitan/pkg-b5bcd76c/";

std::map<std::string, ImportResult> import_each(const std::string& path, const ImportOptions& opts) {
  auto all = import_all("torchtitan", path, opts);
  REQUIRE_MESSAGE(all.is_ok(), (all.is_ok() ? std::string() : all.message()));
  std::map<std::string, ImportResult> out;
  for (NamedImport& n : *all) out.emplace(n.name, std::move(n.result));
  return out;
}

// The 1-based line of the first line containing `needle` after `def function(` (or from the top
// when function is ""), found without planck.
int line_in(const std::string& path, const std::string& function, const std::string& needle) {
  std::ifstream in(path);
  std::string line;
  int n = 0;
  bool inside = function.empty();
  while (std::getline(in, line)) {
    ++n;
    if (!inside && line.rfind("def " + function + "(", 0) == 0) inside = true;
    if (inside && line.find(needle) != std::string::npos) return n;
  }
  return 0;
}

struct Degrees {
  const char* function;
  std::int64_t dpr, dps, cp, tp, pp, ep;
  const char* checkpointing;
};

Shape expected_mesh(const Degrees& d) {
  if (d.ep == 1) return {d.pp, d.dpr, d.dps, d.cp, d.tp};
  return {d.pp, d.dpr, d.dps * d.cp * d.tp / d.ep, d.ep / (d.cp * d.tp), d.cp, d.tp};
}

TEST_CASE("torchtitan_recipes_tests_models_py_every_function_followed_across_files") {
  const std::string path = data_path(kPkg + "torchtitan_recipes/tests/models.py");
  // Each function on the GPUs its degrees take (its integration test's ngpu).
  // checkpointing: _use_spmd_types(config, typechecking=True) sets activation_checkpoint = None
  // (torchtitan_recipes/tests/__init__.py); typechecking=False keeps the base's SelectiveAC.
  const Degrees expected[] = {
      {"deepseek_v3_debugmodel_mtp_fsdp4_ep2_compile", 1, 4, 1, 1, 1, 2, "selective"},
      {"deepseek_v3_debugmodel_fsdp2_tp2_pp2_ep4", 1, 2, 1, 2, 2, 4, "selective"},
      {"deepseek_v3_debugmodel_hsdp2x2_ep2", 2, 2, 1, 1, 1, 2, "none"},
      {"deepseek_v3_debugmodel_fused_mla_swiglu_fsdp4_ep2", 1, 4, 1, 1, 1, 2, "none"},
      {"qwen3_debugmodel_moe_param_groups_fsdp2_tp2_ep4", 1, 2, 1, 2, 1, 4, "none"},
      {"qwen3_debugmodel_fsdp2_tp2_cp2", 1, 2, 2, 2, 1, 1, "none"},
      {"qwen3_debugmodel_fsdp2_tp2_cp2_no_sp", 1, 2, 2, 2, 1, 1, "none"},
      {"qwen3_debugmodel_fsdp2_tp2_cp2_compile_helion_rope", 1, 2, 2, 2, 1, 1, "selective"},
      {"qwen3_debugmodel_non_fused_qkv_fsdp2_tp2_cp2", 1, 2, 2, 2, 1, 1, "none"},
      {"qwen35_debugmodel_moe_fsdp2_tp2_pp2_ep4", 1, 2, 1, 2, 2, 4, "selective"},
      {"qwen35_debugmodel_varlen_attn_fsdp2_tp2_sac", 1, 2, 1, 2, 1, 1, "selective"},
      {"gpt_oss_debugmodel_fsdp4_tp2_ep4_compile", 1, 4, 1, 2, 1, 4, "none"},
      {"gpt_oss_debugmodel_flex_fsdp2_cp2_pp2_ep4_sac", 1, 2, 2, 1, 2, 4, "selective"},
      {"gpt_oss_debugmodel_fsdp4_pp2_ep4_sac", 1, 4, 1, 1, 2, 4, "selective"},
      {"kimi_k2_5_debugmodel_muon_fsdp2_pp2_ep2", 1, 2, 1, 1, 2, 2, "selective"},
      {"muse_glimmer_debugmodel_mm_fsdp2_tp2", 1, 2, 1, 2, 1, 1, "none"},
  };
  for (const Degrees& d : expected) {
    CAPTURE(d.function);
    auto one = import_each(path + ":" + d.function, world(1, d.dpr * d.dps * d.cp * d.tp * d.pp));
    REQUIRE(one.size() == 1);
    const ImportResult& r = one.begin()->second;
    std::string why;
    for (const Unfollowed& u : r.unfollowed) why += u.file + ":" + std::to_string(u.line) + " " + u.construct + "; ";
    CHECK_MESSAGE(r.unfollowed.empty(), why);
    CHECK(shape_of(r) == expected_mesh(d));
    CHECK(r.plan["training"]["activation_checkpointing"] == d.checkpointing);
    // deepseek_v3_debugmodel_mtp: model_registry("debugmodel", num_mtp_layers=1) (config_registry.py).
    const bool mtp = std::string(d.function).find("_mtp_") != std::string::npos;
    CHECK(r.plan["training"].value("mtp_layers", 0) == (mtp ? 1 : 0));
    core::Diagnostics diags = verify(r);
    CHECK_FALSE(diags.has_rule("mesh-world-mismatch"));
  }
  CHECK(import_each(path, world(1, 8)).size() == std::size(expected));  // every function of the file
}

TEST_CASE("torchtitan_recipes_findings_located_where_each_value_was_set") {
  const std::string models = data_path(kPkg + "torchtitan_recipes/tests/models.py");
  const std::string base = data_path(kPkg + "torchtitan/models/deepseek_v3/config_registry.py");
  const std::string helper = data_path(kPkg + "torchtitan_recipes/tests/__init__.py");
  auto one = import_each(models + ":deepseek_v3_debugmodel_hsdp2x2_ep2", world(1, 4));
  const ImportResult& r = one.begin()->second;
  const std::string fn = "deepseek_v3_debugmodel_hsdp2x2_ep2";
  // The edits are in models.py (no entry in position_files = the config itself).
  CHECK(r.positions.at("/mesh/shape/1") == line_in(models, fn, "data_parallel_replicate_degree = 2"));
  CHECK(r.position_files.count("/mesh/shape/1") == 0);
  // The context length comes from the base function in the package.
  CHECK(r.positions.at("/training/seq_len") == line_in(base, "deepseek_v3_debugmodel", "max_context_length=2048"));
  CHECK(std::filesystem::equivalent(r.position_files.at("/training/seq_len"), base));
  // activation_checkpoint = None, written by the helper the config was passed to.
  CHECK(r.positions.at("/training/activation_checkpointing") ==
        line_in(helper, "_use_spmd_types", "config.activation_checkpoint = None"));
  CHECK(std::filesystem::equivalent(r.position_files.at("/training/activation_checkpointing"), helper));
  // A finding at a setting in the package (qwen35_debugmodel_moe's model_registry line, where its
  // Gated DeltaNet layers are said) names that file and line, in the finding, and in the warning
  // and plan note `planck import` prints from it (they carried the encoded line until 2026-11-28).
  auto q = import_each(models + ":qwen35_debugmodel_moe_fsdp2_tp2_pp2_ep4", world(1, 8));
  const ImportResult& qr = q.begin()->second;
  const std::string qbase = data_path(kPkg + "torchtitan/models/qwen3_5/config_registry.py");
  int said = 0;
  for (const ImportFinding& f : qr.findings) {
    if (f.rule != "model-unmodelled-layers") continue;
    ++said;
    CHECK(std::filesystem::equivalent(f.file, qbase));
    CHECK(f.line == line_in(qbase, "qwen35_debugmodel_moe", "model_registry("));
    const std::string text = f.file + ":" + std::to_string(f.line) + ": model-unmodelled-layers: " + f.message;
    CHECK(std::count(qr.warnings.begin(), qr.warnings.end(), text) == 1);
    CHECK(std::count(qr.notes.begin(), qr.notes.end(), "warning: " + text) == 1);
    CHECK(std::count(qr.plan["notes"].begin(), qr.plan["notes"].end(), "warning: " + text) == 1);
  }
  CHECK(said == 2);  // the Gated DeltaNet layers, the vision encoder
}

TEST_CASE("graph_trainer_registries_are_refused_naming_what_cannot_be_followed") {
  // to_graph_trainer_config (experiments/graph_trainer/configs.py) rebuilds the config with
  // GraphTrainer.Config(**d) from dataclasses.fields(): not something planck evaluates, so
  // every function is config-unfollowed, never torchtitan's defaults.
  const std::map<std::string, std::size_t> functions = {
      {"llama3", 10}, {"deepseek_v3", 9}, {"qwen3", 3}, {"muse_glimmer", 1}};  // `def`s in each file
  for (const auto& entry : functions) {
    const std::string path =
        data_path(kPkg + "torchtitan/experiments/graph_trainer/" + entry.first + "/config_registry.py");
    CAPTURE(path);
    auto plans = import_each(path, world(1, 8));
    CHECK(plans.size() == entry.second);
    for (const auto& p : plans) {
      const auto& name = p.first;
      CAPTURE(name);
      REQUIRE_FALSE(p.second.unfollowed.empty());
      const Unfollowed& u = p.second.unfollowed.back();
      CHECK(u.settings == "the whole config");
      // to_graph_trainer_config(...), or another graph_trainer function built on it.
      CHECK((u.construct.find("to_graph_trainer_config(") != std::string::npos ||
             u.construct.rfind("graph_trainer_", 0) == 0));
      CHECK(u.why.find("GraphTrainer.Config(**d)") != std::string::npos);
    }
  }
}

TEST_CASE("torchtitan_registry_base_imported_from_the_package_with_python_path") {
  // A recipe written as torchtitan's users write them (a base from the package, edits on top),
  // deliberately broken: tp 3 x HSDP 3 x 5 = 45 ranks on 64 GPUs.
  const auto dir = std::filesystem::temp_directory_path() / "planck_pkg_test";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "my_recipes.py").string();
  std::ofstream(path) << "from torchtitan.models.llama3.config_registry import llama3_8b\n"  // 1
                         "from torchtitan.trainer import Trainer\n"                          // 2
                         "\n"                                                                // 3
                         "def llama3_8b_tp3_hsdp() -> Trainer.Config:\n"                     // 4
                         "    config = llama3_8b()\n"                                        // 5
                         "    config.parallelism.tensor_parallel_degree = 3\n"               // 6
                         "    config.parallelism.data_parallel_replicate_degree = 3\n"       // 7
                         "    config.parallelism.data_parallel_shard_degree = 5\n"           // 8
                         "    return config\n";                                              // 9
  ImportOptions opts = world(8, 8);
  auto missing = import_each(path, opts);  // the package is not beside the file
  REQUIRE(missing.size() == 1);
  REQUIRE(missing.begin()->second.unfollowed.size() == 1);
  CHECK(missing.begin()->second.unfollowed[0].line == 5);
  CHECK(missing.begin()->second.unfollowed[0].why.find("torchtitan.models.llama3.config_registry") !=
        std::string::npos);

  opts.python_path = {data_path("torchtitan/pkg-b5bcd76c")};
  auto plans = import_each(path, opts);
  const ImportResult& r = plans.at("llama3_8b_tp3_hsdp");
  CHECK(r.unfollowed.empty());
  CHECK(shape_of(r) == Shape{1, 3, 5, 1, 3});
  CHECK(r.plan["model"] == "llama3-8b");  // model_registry("8B") of the package's llama3
  CHECK(r.positions.at("/mesh/shape/4") == 6);
  core::Diagnostics d = verify(r);
  CHECK(d.has_rule("mesh-world-mismatch"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace planck::import::test
