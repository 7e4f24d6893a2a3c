// A GPT-NeoX run is several YAML files merged (`deepy.py train.py -d configs 125M.yml
// local_setup.yml`, EleutherAI/gpt-neox @ea7aefd README): NeoXArgs.from_ymls
// (megatron/neox_arguments/arguments.py:234-262) loads them in order, raises on a key an earlier
// file gave (as written, before dashes become underscores) and on two files of one name. The
// tokenizer's vocabulary, padded to make_vocab_size_divisible_by x model_parallel_size
// (megatron/tokenizer/tokenizer.py:72-86), is the model's embedding size.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/import/import_test_util.h"

namespace planck::import::test {
namespace {

ImportOptions merged(std::vector<std::string> files) {
  ImportOptions o = world(1, 8);
  for (std::string& f : files) f = data_path(f);
  o.merge_files = std::move(files);
  return o;
}

std::string write_temp(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "planck_neox_merge_test";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST_CASE("neox_125m_with_local_setup_reads_the_gpt2_vocabulary") {
  // Alone, 125M.yml names no tokenizer file: NeoX's default GPT2BPETokenizer reads vocab_file, which
  // local_setup.yml gives (data/gpt2-vocab.json). GPT-2's encoder has 50257 entries (the NeoX
  // repo's tests/data/hf_cache/tokenizer/gpt2.json: ids 0-50256), padded to a multiple of 128 x 1:
  // ceil(50257 / 128) x 128 = 50304.
  ImportResult alone = import_data_ok("neox", "neox/125M.yml", world(1, 8));
  CHECK(!alone.plan.contains("model"));
  CHECK(any_contains(alone.notes, "--with FILE"));
  ImportResult r = import_data_ok("neox", "neox/125M.yml", merged({"neox/local_setup.yml"}));
  REQUIRE(r.plan["model"].is_object());
  CHECK(r.plan["model"]["vocab"] == 50304);
  CHECK(r.plan["model"]["layers"] == 12);
  CHECK(r.plan["model"]["hidden"] == 768);
  CHECK(findings(r, "unknown-key") == 0);  // local_setup.yml's data paths are NeoXArgs fields
  CHECK(any_contains(r.notes, "merged"));
  core::Diagnostics d = verify(r);
  CHECK_MESSAGE(!d.has_errors(), error_rules(d));
}

TEST_CASE("neox_llama_7b_takes_its_batch_and_zero_stage_from_train_config") {
  // configs/llama/7B.yml has the model; train_config.yml the batch, ZeRO and precision: alone the
  // model file is refused (NeoX asserts a batch size, arguments.py:858-862).
  auto alone = import_file("neox", data_path("neox/llama_7B.yml"), world(1, 8));
  CHECK(!alone.is_ok());
  ImportResult r = import_data_ok("neox", "neox/llama_7B.yml", merged({"neox/llama_train_config.yml"}));
  CHECK(r.plan["training"]["micro_batch"] == 4);                  // train_micro_batch_size_per_gpu
  CHECK(r.plan["parallelism"]["data_parallel"] == "zero1");       // zero_optimization.stage 1
  CHECK(r.plan["training"]["param_dtype"] == "fp16");             // fp16.enabled
  CHECK(r.plan["training"]["activation_checkpointing"] == "full");  // checkpoint_activations
  // The plan's fields are placed at the file and line their key is written at.
  REQUIRE(r.position_files.count("/training/micro_batch") == 1);
  CHECK(r.position_files.at("/training/micro_batch").find("llama_train_config.yml") != std::string::npos);
  CHECK(r.positions.at("/training/micro_batch") == 33);
  CHECK(r.position_files.count("/mesh/shape/2") == 0);  // model_parallel_size: llama_7B.yml itself
  // So is a finding about a key of a merged file: a misspelt key (NeoX raises on it).
  ImportOptions o = world(1, 8);
  o.merge_files = {data_path("neox/llama_train_config.yml"),
                   write_temp("typo.yml", "{\n  \"data_impll\": \"mmap\",\n}\n")};
  ImportResult t = import_data_ok("neox", "neox/llama_7B.yml", o);
  REQUIRE(findings(t, "unknown-key", "data_impll") == 1);
  for (const ImportFinding& f : t.findings) {
    if (f.message.find("data_impll") == std::string::npos) continue;
    CHECK(f.file.find("typo.yml") != std::string::npos);
    CHECK(f.line == 2);
  }
}

TEST_CASE("neox_merge_refuses_what_neox_refuses") {
  // A key an earlier file gave, spelt the same: from_ymls raises ValueError.
  const std::string twice = write_temp("batch.yml", "{\n  \"train_micro_batch_size_per_gpu\": 8,\n}\n");
  ImportOptions o = world(1, 8);
  o.merge_files = {twice};
  auto r = import_file("neox", data_path("neox/125M.yml"), o);
  REQUIRE(!r.is_ok());
  CHECK(r.message().find("batch.yml:2") != std::string::npos);
  CHECK(r.message().find("train_micro_batch_size_per_gpu") != std::string::npos);
  CHECK(r.message().find("125M.yml:54") != std::string::npos);
  // Its dashed spelling passes NeoX's check (it compares the name as written) and replaces it.
  const std::string dashed = write_temp("batch_dashed.yml", "{\n  \"train-micro-batch-size-per-gpu\": 8,\n}\n");
  o.merge_files = {dashed};
  ImportResult d = import_data_ok("neox", "neox/125M.yml", o);
  CHECK(d.plan["training"]["micro_batch"] == 8);
  CHECK(any_contains(d.notes, "replaces train_micro_batch_size_per_gpu"));
  // Two files of one name: from_ymls asserts (it saves each under its file name).
  o.merge_files = {write_temp("125M.yml", "{}\n")};
  auto same = import_file("neox", data_path("neox/125M.yml"), o);
  REQUIRE(!same.is_ok());
  CHECK(same.message().find("two files of the run are named 125M.yml") != std::string::npos);
  // A missing file is said, naming it.
  o.merge_files = {"/nonexistent/local_setup.yml"};
  auto missing = import_file("neox", data_path("neox/125M.yml"), o);
  REQUIRE(!missing.is_ok());
  CHECK(missing.message().find("--with /nonexistent/local_setup.yml") != std::string::npos);
  // Other frameworks read one config.
  o.merge_files = {data_path("neox/local_setup.yml")};
  auto ds = import_file("deepspeed", data_path("deepspeed/mics_shard8_from_docs.json"), o);
  REQUIRE(!ds.is_ok());
  CHECK(ds.message().find("only a GPT-NeoX run merges") != std::string::npos);
}

TEST_CASE("neox_pythia_vocabulary_from_the_20b_tokenizer") {
  // Pythia's configs name HFTokenizer; the run's setup file names EleutherAI's 20B_tokenizer.json,
  // whose ids run 0-50276 (50277 tokens). Padded: pythia-1b (mp 1, x128) 50304, pythia-12b
  // (mp 4, x512) 50688: EleutherAI/pythia-1b's and pythia-12b's config.json vocab_size.
  const std::string setup = write_temp("pythia_setup.yml", "{\n  \"vocab_file\": \"data/20B_tokenizer.json\",\n}\n");
  ImportOptions o = world(2, 8);
  o.merge_files = {setup};
  ImportResult one = import_data_ok("neox", "neox/pythia_1B.yml", o);
  REQUIRE(one.plan["model"].is_object());
  CHECK(one.plan["model"]["vocab"] == 50304);
  ImportResult twelve = import_data_ok("neox", "neox/pythia_12B.yml", o);
  REQUIRE(twelve.plan["model"].is_object());
  CHECK(twelve.plan["model"]["vocab"] == 50688);
}

TEST_CASE("neox_vocabulary_read_from_a_tokenizer_file_beside_the_config") {
  // A Hugging Face tokenizers JSON: model.vocab ids 0-299 and added tokens 300-302 (and 0 again):
  // Tokenizer.get_vocab_size() counts each id once, 303; padded to x128: 384.
  std::string vocab = "{";
  for (int i = 0; i < 300; ++i) vocab += (i ? ",\"t" : "\"t") + std::to_string(i) + "\":" + std::to_string(i);
  vocab += "}";
  write_temp("tok.json", "{\"added_tokens\": [{\"id\": 0}, {\"id\": 300}, {\"id\": 301}, {\"id\": 302}], "
                         "\"model\": {\"type\": \"BPE\", \"vocab\": " + vocab + "}}");
  const std::string config = write_temp(
      "tiny.yml", "{\n  \"num_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, \"seq_length\": 128,\n"
                  "  \"train_micro_batch_size_per_gpu\": 1,\n  \"tokenizer_type\": \"HFTokenizer\",\n"
                  "  \"vocab_file\": \"tok.json\",\n}\n");
  auto r = import_file("neox", config, world(1, 8));
  REQUIRE_MESSAGE(r.is_ok(), (r.is_ok() ? std::string() : r.message()));
  REQUIRE(r->plan["model"].is_object());
  CHECK(r->plan["model"]["vocab"] == 384);
  // CharLevelTokenizer: 512 (tokenizer.py:56-57).
  const std::string chars = write_temp(
      "chars.yml", "{\n  \"num_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, \"seq_length\": 128,\n"
                   "  \"train_micro_batch_size_per_gpu\": 1,\n  \"tokenizer_type\": \"CharLevelTokenizer\",\n}\n");
  auto c = import_file("neox", chars, world(1, 8));
  REQUIRE(c.is_ok());
  CHECK(c->plan["model"]["vocab"] == 512);
}

}  // namespace
}  // namespace planck::import::test
