// torchtitan Python registries (tests/data/import/torchtitan/registry/, see its README): every
// function of the llama3, deepseek_v3 and qwen3 registries at b5bcd76c (2026-08-21) and 26181968
// (2026-03-31) imports without running Python code of torchtitan's, and the layouts asserted
// here were read off the files by hand (the function's ParallelismConfig / TrainingConfig /
// activation_checkpoint lines, the flavour's builder in __init__.py), with torchtitan's rules
// (ParallelDims: dp_shard = -1 takes the ranks left over) written as formulas.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "core/plan/presets.h"
#include "tests/import/import_test_util.h"

namespace planck::import::test {
namespace {

std::string registry(const std::string& commit, const std::string& model) {
  if (commit == "b5bcd76c") return data_path("torchtitan/pkg-b5bcd76c/torchtitan/models/" + model + "/config_registry.py");
  return data_path("torchtitan/registry/" + commit + "/" + model + "/config_registry.py");
}

std::map<std::string, ImportResult> import_registry(const std::string& path, const ImportOptions& opts) {
  auto all = import_all("torchtitan", path, opts);
  REQUIRE_MESSAGE(all.is_ok(), (all.is_ok() ? std::string() : all.message()));
  std::map<std::string, ImportResult> out;
  for (NamedImport& n : *all) out.emplace(n.name, std::move(n.result));
  return out;
}

// The 1-based line of the first line containing `needle` after `def function(` in `path`:
// where the setting is written, found without planck.
int line_in(const std::string& path, const std::string& function, const std::string& needle) {
  std::ifstream in(path);
  std::string line;
  int n = 0;
  bool inside = false;
  while (std::getline(in, line)) {
    ++n;
    if (line.rfind("def " + function + "(", 0) == 0) inside = true;
    if (inside && line.find(needle) != std::string::npos) return n;
  }
  return 0;
}

struct Layout {
  const char* function;
  Shape shape;  // [pp, dp_replicate, dp_shard, cp, tp] on 2 nodes x 8 GPUs; [.., dp_shard, ep, cp, tp] with EP
  std::int64_t micro_batch, seq_len;
  const char* checkpointing;
};

void check_layouts(std::map<std::string, ImportResult>& plans, const std::vector<Layout>& expected) {
  for (const Layout& e : expected) {
    CAPTURE(e.function);
    REQUIRE(plans.count(e.function) == 1);
    const ImportResult& r = plans.at(e.function);
    CHECK(shape_of(r) == e.shape);
    CHECK(r.plan["training"]["micro_batch"] == e.micro_batch);
    CHECK(r.plan["training"]["seq_len"] == e.seq_len);
    CHECK(r.plan["training"]["activation_checkpointing"] == e.checkpointing);
    // No pp in these functions, so the global batch is micro-batch rows x dp (train.py, -1 default);
    // torchtitan's dp_shard holds planck's ep (its EP borrows dp_shard ranks, the batch keeps them).
    const std::int64_t ep = e.shape.size() == 6 ? e.shape[3] : 1;
    CHECK(r.plan["training"]["global_batch"] == e.micro_batch * e.shape[1] * e.shape[2] * ep);
  }
}

TEST_CASE("import_torchtitan_registry_llama3_at_b5bcd76c_every_function") {
  auto plans = import_registry(registry("b5bcd76c", "llama3"), world(2, 8));
  CHECK(plans.size() == 14);  // every `def NAME() -> Trainer.Config` in the file
  // Rows = num_tokens_per_microbatch_per_dp_rank / max_context_length as written (8 * 8192 / 8192).
  check_layouts(plans, {{"llama3_8b", {1, 1, 16, 1, 1}, 1, 8192, "selective"},
                        {"llama3_70b", {1, 1, 16 / 8, 1, 8}, 8, 8192, "full"},
                        {"llama3_405b", {1, 1, 16 / 8, 1, 8}, 2, 8192, "full"},
                        {"llama3_debugmodel", {1, 1, 16, 1, 1}, 8, 2048, "selective"},
                        // config = llama3_debugmodel(); config.model_spec = ...: inherits the rest.
                        {"llama3_debugmodel_varlen_attn", {1, 1, 16, 1, 1}, 8, 2048, "selective"},
                        {"sft_debugmodel", {1, 1, 16, 1, 1}, 8, 2048, "selective"}});
  CHECK(plans.at("llama3_8b").plan["model"] == "llama3-8b");
  CHECK(plans.at("llama3_70b").plan["model"] == "llama3-70b");
  CHECK(plans.at("llama3_405b").plan["model"] == "llama3-405b");
  CHECK(plans.at("llama3_8b_mxfp8").plan["model"] == "llama3-8b");  // config = llama3_8b(); model_spec replaced
  // Named, not structured bindings: clang 14 cannot capture those in doctest's CAPTURE lambda.
  for (auto& entry : plans) {
    const auto& name = entry.first;
    CAPTURE(name);
    core::Diagnostics d = verify(entry.second);
    CHECK_MESSAGE(!d.has_errors(), error_rules(d));
  }
}

TEST_CASE("import_torchtitan_registry_records_the_line_of_each_setting") {
  const std::string path = registry("b5bcd76c", "llama3");
  auto plans = import_registry(path, world(2, 8));
  const ImportResult& r = plans.at("llama3_70b");
  CHECK(r.positions.at("/mesh/shape/4") == line_in(path, "llama3_70b", "tensor_parallel_degree=8"));
  CHECK(r.positions.at("/training/micro_batch") ==
        line_in(path, "llama3_70b", "num_tokens_per_microbatch_per_dp_rank=8 * 8192"));
  CHECK(r.positions.at("/training/seq_len") == line_in(path, "llama3_70b", "max_context_length=8192"));
  CHECK(r.positions.at("/training/activation_checkpointing") ==
        line_in(path, "llama3_70b", "activation_checkpoint=FullAC.Config()"));
  CHECK(r.positions.at("/model") == line_in(path, "llama3_70b", "model_registry(\"70B\")"));
  CHECK(r.positions.at("") == line_in(path, "llama3_70b", "def llama3_70b"));
  CHECK(r.source_path == path);
}

TEST_CASE("import_torchtitan_registry_deepseek_v3_and_qwen3_at_b5bcd76c") {
  auto ds = import_registry(registry("b5bcd76c", "deepseek_v3"), world(2, 8));
  CHECK(ds.size() == 10);
  // expert_parallel_degree=8 / =2 borrowed from dp_shard 16: mesh dp_shard 16/8 x ep 8, 16/2 x 2.
  check_layouts(ds, {{"deepseek_v3_16b", {1, 1, 16 / 8, 8, 1, 1}, 4, 4096, "selective"},
                     {"deepseek_v3_671b", {1, 1, 16 / 2, 2, 1, 1}, 4, 4096, "selective"}});
  CHECK(ds.at("deepseek_v3_671b").plan["model"] == "deepseek-v3");
  CHECK(any_contains(ds.at("deepseek_v3_16b").notes, "expert parallel ep=8"));
  CHECK(any_contains(ds.at("deepseek_v3_671b").notes, "expert parallel ep=2"));
  // ParallelismConfig(all degrees 1): dp_shard=1 written, so 1 != 16 ranks reaches verify.
  CHECK(shape_of(ds.at("deepseek_v3_debugmodel_minimal_async_ep")) == Shape{1, 1, 1, 1, 1});
  CHECK(any_contains(ds.at("deepseek_v3_debugmodel_minimal_async_ep").warnings, "Invalid parallel dims"));

  auto qw = import_registry(registry("b5bcd76c", "qwen3"), world(2, 8));
  CHECK(qw.size() == 15);
  check_layouts(qw, {{"qwen3_32b", {1, 1, 16, 1, 1}, 2, 4096, "full"},
                     {"qwen3_30b_a3b", {1, 1, 16, 1, 1}, 2, 4096, "full"},
                     {"qwen3_14b", {1, 1, 16, 1, 1}, 4, 4096, "full"},
                     {"qwen3_0_6b", {1, 1, 16, 1, 1}, 4, 4096, "selective"}});
  // qwen3/__init__.py _32b: dim 5120, 64 layers, n_heads=64, n_kv_heads=8, head_dim 128,
  // hidden_dim=25600, vocab 151936 (Qwen/Qwen3-32B's config.json has the same): the qwen3-32b
  // preset, which moe_groups_test.cc checks against that config.json.
  CHECK(qw.at("qwen3_32b").plan["model"] == "qwen3-32b");
  const core::ModelSpec m = *core::model_preset("qwen3-32b");
  CHECK(m.layers == 64);
  CHECK(m.hidden == 5120);
  CHECK(m.heads == 64);
  CHECK(m.kv_heads == 8);
  CHECK(m.head_dim == 128);
  CHECK(m.ffn_hidden == 25600);
  CHECK(m.vocab == 151936);
}

TEST_CASE("import_torchtitan_registry_at_26181968_local_batch_and_mode_strings") {
  auto ll = import_registry(registry("26181968", "llama3"), world(2, 8));
  // TrainingConfig(local_batch_size=8, seq_len=8192), ActivationCheckpointConfig(mode="full").
  check_layouts(ll, {{"llama3_70b", {1, 1, 2, 1, 8}, 8, 8192, "full"},
                     {"llama3_8b", {1, 1, 16, 1, 1}, 1, 8192, "selective"}});
  auto ds = import_registry(registry("26181968", "deepseek_v3"), world(2, 8));
  check_layouts(ds, {{"deepseek_v3_671b", {1, 1, 16, 1, 1}, 4, 4096, "selective"}});
  auto qw = import_registry(registry("26181968", "qwen3"), world(2, 8));
  check_layouts(qw, {{"qwen3_32b", {1, 1, 16, 1, 1}, 2, 4096, "full"}});
  for (auto* set : {&ll, &ds, &qw}) {
    for (auto& entry : *set) {
      const auto& name = entry.first;
      const auto& r = entry.second;
      CAPTURE(name);
      CHECK_MESSAGE(!verify(r).has_errors(), error_rules(verify(r)));
    }
  }
}

// A registry written for this test: edits, local names, what cannot be followed.
TEST_CASE("import_torchtitan_registry_edits_locals_and_notes_for_what_it_cannot_follow") {
  const auto dir = std::filesystem::temp_directory_path() / "planck_registry_test" / "llama3";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "__init__.py") << "llama3_configs = {\"8B\": None}\n";
  const std::string path = (dir / "config_registry.py").string();
  std::ofstream(path) << "def base() -> Trainer.Config:\n"                                   // 1
                         "    tokens = 4 * 1024\n"                                          // 2
                         "    return Trainer.Config(\n"                                     // 3
                         "        model_spec=model_registry(\"8B\"),\n"                    // 4
                         "        training=TrainingConfig(num_tokens_per_microbatch_per_dp_rank=tokens,\n"  // 5
                         "                                max_context_length=1024),\n"     // 6
                         "        parallelism=ParallelismConfig(tensor_parallel_degree=2),\n"  // 7
                         "    )\n"                                                          // 8
                         "def edited() -> Trainer.Config:\n"                                // 9
                         "    config = base()\n"                                            // 10
                         "    config.parallelism.tensor_parallel_degree = 4\n"              // 11
                         "    config.parallelism.pipeline_parallel_degree = compute_pp()\n"  // 12
                         "    if big:\n"                                                    // 13
                         "        config.parallelism.tensor_parallel_degree = 8\n"          // 14
                         "    return config\n";                                             // 15
  auto plans = import_registry(path, world(1, 8));
  REQUIRE(plans.size() == 2);
  CHECK(shape_of(plans.at("base")) == Shape{1, 1, 8 / 2, 1, 2});
  CHECK(plans.at("base").plan["training"]["micro_batch"] == 4);  // tokens 4096 / 1024
  CHECK(plans.at("base").positions.at("/training/micro_batch") == 5);
  CHECK(plans.at("base").unfollowed.empty());
  const ImportResult& e = plans.at("edited");
  CHECK(e.positions.at("/mesh/shape/4") == 11);  // the edit on line 11 wins over base()'s line 7
  // pp from a call planck cannot follow, tp maybe changed under `if big:`: refused, never the
  // defaults (config-unfollowed), each at its line with the setting it may change.
  REQUIRE(e.unfollowed.size() == 2);
  CHECK(e.unfollowed[0].line == 13);
  CHECK(e.unfollowed[0].construct == "if big:");
  CHECK(e.unfollowed[0].settings == "parallelism.tensor_parallel_degree");
  CHECK(e.unfollowed[1].line == 12);
  CHECK(e.unfollowed[1].construct == "compute_pp()");
  CHECK(e.unfollowed[1].settings == "parallelism.pipeline_parallel_degree");
  // --set gives both values (the names torchtitan's CLI takes): followed, the command line wins.
  ImportOptions set = world(1, 8);
  set.sets = {{"parallelism.pipeline_parallel_degree", "2"}, {"parallelism.tensor_parallel_degree", "4"}};
  auto given = import_all("torchtitan", path + ":edited", set);
  REQUIRE(given.is_ok());
  CHECK(given->front().result.unfollowed.empty());
  CHECK(shape_of(given->front().result) == Shape{2, 1, 8 / (2 * 4), 1, 4});

  auto one = import_all("torchtitan", path + ":edited", world(1, 8));
  REQUIRE(one.is_ok());
  CHECK(one->size() == 1);
  auto missing = import_all("torchtitan", path + ":nope", world(1, 8));
  REQUIRE(!missing.is_ok());
  CHECK(missing.message().find("no function nope; config functions: base, edited") != std::string::npos);
  std::ofstream(path) << "def broken(:\n";
  auto bad = import_all("torchtitan", path, world(1, 8));
  REQUIRE(!bad.is_ok());
  CHECK(bad.message().find("config_registry.py:1: not valid Python") != std::string::npos);
  std::filesystem::remove_all(dir.parent_path());
}

TEST_CASE("detect_framework_from_content") {
  CHECK(detect_framework("x.toml", read_data("torchtitan/llama3_70b_2025-12.toml")) == "torchtitan");
  CHECK(detect_framework("config_registry.py:llama3_70b", "") == "torchtitan");
  CHECK(detect_framework("c.yaml", read_data("lingua/debug.yaml")) == "lingua");
  CHECK(detect_framework("a.sh", read_data("megatron-lm/train_llama3_8b_fsdp_h100_fp8.sh")) == "megatron");
  CHECK(detect_framework("ds.json", read_data("deepspeed/ds_config_autotp_zero2.json")) == "deepspeed");
  CHECK(detect_framework("p.json", "{\"format\": \"planck/1\", \"mesh\": {}}") == "plan");
  CHECK(detect_framework("n.txt", "hello\n") == "");
}

TEST_CASE("import_torchtitan_toml_70b_of_2025_12_with_inline_comments") {
  auto plans = import_registry(data_path("torchtitan/llama3_70b_2025-12.toml"), world(2, 8));
  REQUIRE(plans.size() == 1);
  const ImportResult& r = plans.begin()->second;
  // [parallelism] tensor_parallel_degree = 8  # 8-way TP, data_parallel_shard_degree = -1.
  CHECK(shape_of(r) == Shape{1, 1, 16 / 8, 1, 8});
  CHECK(r.plan["training"]["micro_batch"] == 8);
  CHECK(r.plan["training"]["activation_checkpointing"] == "full");
  CHECK(r.positions.at("/mesh/shape/4") == 41);  // the file's line 41
}

}  // namespace
}  // namespace planck::import::test
