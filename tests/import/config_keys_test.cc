// Key lists generated from the frameworks' own config classes (scripts/config_keys.py, issue 30):
// a setting torchtitan's registries or Lingua's TrainArgs do not define is unknown-key at its line
// with the closest field; a real one stays silent, across the generations the list covers.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "import/config_keys.h"
#include "import/lingua/keys.h"
#include "import/torchtitan/keys.h"
#include "tests/import/import_test_util.h"

namespace planck::import::test {
namespace {

std::vector<ImportFinding> unknown(const ImportResult& r) {
  std::vector<ImportFinding> out;
  for (const ImportFinding& f : r.findings) {
    if (f.rule == "unknown-key") out.push_back(f);
  }
  return out;
}

TEST_CASE("config_keys_torchtitan_registry_typos_are_unknown_key_at_their_line") {
  // A registry in the form of torchtitan's (torchtitan/models/llama3/config_registry.py): a
  // misspelt ParallelismConfig field passed to the constructor, one edited in place on the
  // default sub-config, and early-2026 TrainingConfig fields (local_batch_size, seq_len, from
  // 9810191's configs.py) that later commits renamed.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "planck_config_keys_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "__init__.py") << "";
  const std::string registry = (dir / "config_registry.py").string();
  std::ofstream(registry) << "from torchtitan.config import ParallelismConfig, TrainingConfig\n"
                             "from torchtitan.trainer import Trainer\n"
                             "\n"
                             "def tiny() -> Trainer.Config:\n"
                             "    config = Trainer.Config(\n"
                             "        parallelism=ParallelismConfig(tensor_paralel_degree=2),\n"
                             "        training=TrainingConfig(local_batch_size=2, seq_len=2048),\n"
                             "    )\n"
                             "    config.parallelism.pipeline_parallel_degre = 2\n"
                             "    config.compile.enable = True\n"
                             "    return config\n";
  auto all = import_all("torchtitan", registry + ":tiny", world(1, 8));
  REQUIRE_MESSAGE(all.is_ok(), (all.is_ok() ? std::string() : all.message()));
  const std::vector<ImportFinding> u = unknown((*all)[0].result);
  REQUIRE(u.size() == 2);
  CHECK(u[0].message.find("parallelism.pipeline_parallel_degre") != std::string::npos);
  CHECK(u[0].message.find("did you mean 'pipeline_parallel_degree'") != std::string::npos);
  CHECK(u[0].line == 9);
  CHECK(u[1].message.find("parallelism.tensor_paralel_degree") != std::string::npos);
  CHECK(u[1].message.find("did you mean 'tensor_parallel_degree'") != std::string::npos);
  CHECK(u[1].line == 6);
  // --set takes the same names torchtitan's CLI does: a typo there is said too.
  ImportOptions o = world(1, 8);
  o.sets.push_back({"training.max_norn", "1.0"});
  auto set = import_all("torchtitan", registry + ":tiny", o);
  REQUIRE(set.is_ok());
  CHECK(unknown((*set)[0].result).size() == 3);
  std::filesystem::remove_all(dir);
}

TEST_CASE("config_keys_torchtitan_registries_of_both_generations_are_silent") {
  // Every function of the llama3 registry at 26181968 (2026-03, local_batch_size era) and at
  // b5bcd76c (2026-08): every field they set is one torchtitan defined then.
  for (const std::string& path : {data_path("torchtitan/registry/26181968/llama3/config_registry.py"),
                                 data_path("torchtitan/pkg-b5bcd76c/torchtitan/models/llama3/config_registry.py")}) {
    CAPTURE(path);
    auto all = import_all("torchtitan", path, world(8, 8));
    REQUIRE(all.is_ok());
    for (const NamedImport& n : *all) {
      for (const ImportFinding& f : unknown(n.result)) {
        const std::string what = n.name + ": " + f.message;
        CHECK_MESSAGE(false, what);
      }
    }
  }
  // The table is torchtitan's: ParallelismConfig holds its degrees, Trainer.Config types its
  // parallelism section with it.
  CHECK(config_fields(torchtitan_classes(), "ParallelismConfig").count("tensor_parallel_degree") == 1);
  CHECK(config_fields(torchtitan_classes(), "Trainer.Config").at("parallelism") == "ParallelismConfig");
  CHECK(config_class(torchtitan_classes(), "config.ParallelismConfig") == "ParallelismConfig");
}

TEST_CASE("config_keys_lingua_train_args_typos_are_unknown_key") {
  // facebookresearch/lingua@437d680 apps/main/configs/debug.yaml with distributed.tp_size
  // misspelt: DistributedArgs (lingua/distributed.py) has no tp_sise.
  std::string text = read_data("lingua/debug.yaml");
  ImportResult clean = import_ok(import_lingua, text, world(1, 8));
  CHECK(unknown(clean).empty());
  text.replace(text.find("tp_size:"), 8, "tp_sise:");
  ImportResult r = import_ok(import_lingua, text, world(1, 8));
  const std::vector<ImportFinding> u = unknown(r);
  REQUIRE(u.size() == 1);
  CHECK(u[0].message.find("distributed.tp_sise") != std::string::npos);
  CHECK(u[0].message.find("did you mean 'tp_size'") != std::string::npos);
  CHECK(u[0].line == 20);
  CHECK(config_fields(lingua_classes(), "TrainArgs").at("distributed") == "DistributedArgs");
}

}  // namespace
}  // namespace planck::import::test
