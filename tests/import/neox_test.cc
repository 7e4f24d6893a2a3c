// GPT-NeoX configs (EleutherAI/gpt-neox @ea7aefd configs/): recognised by their NeoXArgs keys and
// refused (config-unfollowed), never read as DeepSpeed JSON. NeoX's own reading: a YAML file
// (yaml.load, megatron/neox_arguments/arguments.py:242) whose keys may be spelt with dashes
// (arguments.py:251-253 turns '-' into '_'); pipe_parallel_size and model_parallel_size are
// NeoXArgs fields (megatron/neox_arguments/neox_args.py:60, :65).

#include <doctest/doctest.h>

#include <string>

#include "tests/import/import_test_util.h"

namespace planck::import::test {
namespace {

struct NeoxFile {
  const char* rel;
  const char* key;  // the first top-level NeoX parallelism key, as written
  int line;         // its line in the file
};

// Lines counted in the files as copied (tests/data/import/PROVENANCE.md).
constexpr NeoxFile kNeoxFiles[] = {
    {"neox/pythia_1B.yml", "pipe_parallel_size", 2},   {"neox/pythia_12B.yml", "pipe_parallel_size", 2},
    {"neox/pythia_14M.yml", "pipe-parallel-size", 3},  {"neox/llemma_7B.yml", "pipe_parallel_size", 2},
    {"neox/llemma_34B.yml", "pipe_parallel_size", 2},  {"neox/rwkv_170M.yml", "pipe_parallel_size", 3},
};

TEST_CASE("neox_configs_are_detected_as_neox_not_deepspeed") {
  for (const NeoxFile& f : kNeoxFiles) {
    CAPTURE(f.rel);
    CHECK(detect_framework(f.rel, read_data(f.rel)) == "neox");
  }
  // Block-style YAML, underscores or dashes.
  CHECK(detect_framework("a.yml", "model_parallel_size: 2\nnum_layers: 4\n") == "neox");
  CHECK(detect_framework("a.yml", "pipe-parallel-size: 1\n") == "neox");
  // The three sizes beside a NeoX training key; without one (a Hugging Face config.json) it is not NeoX.
  CHECK(detect_framework("a.yml", "num_layers: 2\nhidden_size: 64\nnum_attention_heads: 4\nseq_length: 128\n") ==
        "neox");
  CHECK(detect_framework("c.json", "{\"num_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4}") !=
        "neox");
  // The sizes nested under a section (NeMo's model:) are not NeoX's top level.
  CHECK(detect_framework("n.yaml", "model:\n  model_parallel_size: 2\n  num_layers: 2\n  hidden_size: 64\n"
                                   "  num_attention_heads: 4\n  seq_length: 128\n") != "neox");
  // DeepSpeed JSONs stay DeepSpeed's.
  CHECK(detect_framework("ds.json", "{\"train_micro_batch_size_per_gpu\": 4, \"zero_optimization\": {\"stage\": 1}}") ==
        "deepspeed");
  CHECK(detect_framework("ds.json", read_data("deepspeed/mics_shard8_from_docs.json")) == "deepspeed");
}

TEST_CASE("neox_configs_are_refused_naming_the_file_and_the_key") {
  for (const NeoxFile& f : kNeoxFiles) {
    CAPTURE(f.rel);
    const std::string path = data_path(f.rel);
    ImportResult r = import_ok(&import_neox, read_data(f.rel), world(2, 8), path);
    REQUIRE(r.unfollowed.size() == 1);
    CHECK(r.unfollowed[0].file == path);
    CHECK(r.unfollowed[0].line == f.line);
    CHECK(r.unfollowed[0].construct == f.key);
    CHECK(r.unfollowed[0].why.find("GPT-NeoX config") != std::string::npos);
    CHECK(r.unfollowed[0].why.find("write a planck plan") != std::string::npos);
    CHECK(findings(r, "unknown-key") == 0);
  }
}

TEST_CASE("neox_configs_given_to_the_deepspeed_importer_are_refused_not_misread") {
  // Read as DeepSpeed's JSON, pythia/1B.yml gave an unknown-key for each NeoX key and a tp 1, pp 1
  // layout although NeoX builds model_parallel_size x pipe_parallel_size; rwkv/170M.yml (`True`,
  // YAML) was "not valid JSON".
  for (const char* rel : {"neox/pythia_1B.yml", "neox/llemma_7B.yml", "neox/rwkv_170M.yml"}) {
    CAPTURE(rel);
    ImportResult r = import_ok(&import_deepspeed, read_data(rel), world(2, 8));
    REQUIRE(r.unfollowed.size() == 1);
    CHECK(r.unfollowed[0].why.find("GPT-NeoX config") != std::string::npos);
    CHECK(findings(r, "unknown-key") == 0);
  }
}

TEST_CASE("neox_importer_on_a_file_that_is_not_neox_says_so") {
  CHECK(import_error(&import_neox, "name: x\nsteps: 2\n", world(1, 8)).find("not a GPT-NeoX config") !=
        std::string::npos);
}

}  // namespace
}  // namespace planck::import::test
