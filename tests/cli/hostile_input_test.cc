// Hostile input, round 2 (issue 34): each case feeds the input shape the probe used, generated
// here, and asserts the clear error (exit 2, the file, the line, the limit) or the documented
// result. Sizes and limits: docs/files.md, "Limits".

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cli/hostile_util.h"

namespace fs = std::filesystem;

namespace {

using namespace planck_test::hostile;

std::string plans(const char* name) { return std::string(PLANCK_PLANS_DIR) + "/" + name; }

}  // namespace

// --- 7: integers past int64 are errors, never wrapped -------------------------------------

TEST_CASE("a registry degree of 2**64 - 1 is an error at its line, not -1 inferred as 8") {
  const fs::path reg = write("wrap/llama3/config_registry.py",
                             "def big() -> Trainer.Config:\n"
                             "    return Trainer.Config(\n"
                             "        parallelism=ParallelismConfig(\n"
                             "            data_parallel_shard_degree=18446744073709551615,\n"
                             "        ),\n"
                             "    )\n");
  Run r = planck("verify " + reg.string() + " --nodes 1 --gpus-per-node 8 --model llama3-8b");
  CAPTURE(r.out);
  CHECK(r.code == 2);
  CHECK(has(r, "config_registry.py:4"));
  CHECK(has(r, "18446744073709551615 does not fit in a signed 64-bit integer"));
  CHECK(!has(r, ": ok"));
}

TEST_CASE("a DeepSpeed batch size past int64 is named as given, not printed as -1") {
  const fs::path ds = write("wrap/ds.json", "{\n  \"train_micro_batch_size_per_gpu\": 18446744073709551615\n}\n");
  Run r = planck("import deepspeed " + ds.string() + " --nodes 1 --gpus-per-node 8 --model llama3-8b");
  CAPTURE(r.out);
  CHECK(r.code == 2);
  CHECK(has(r, "ds.json:2"));
  CHECK(has(r, "18446744073709551615 does not fit"));
  CHECK(!has(r, "= -1"));
}

TEST_CASE("a Hugging Face config size past int64 is named as given") {
  const fs::path hf = write("wrap/config.json",
                            R"({"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 18446744073709551615,
                                "num_attention_heads": 32, "vocab_size": 128256, "intermediate_size": 14336})");
  Run r = planck("verify " + std::string(PLANCK_TEST_DATA_DIR) + "/import/torchtitan/llama3_8b.toml --nodes 1 "
                 "--gpus-per-node 8 --model " + hf.string());
  CAPTURE(r.out);
  CHECK(r.code == 2);
  CHECK(has(r, "'hidden_size' = 18446744073709551615 does not fit"));
}

// --- 8: every float option refuses NaN and infinities ------------------------------------

TEST_CASE("diff --threshold nan is refused, so the CI gate cannot be switched off") {
  for (const char* bad : {"nan", "NaN", "inf", "-1", "1e999", "5x"}) {
    CAPTURE(bad);
    Run r = planck("diff " + plans("torchtitan-hsdp-2x8.json") + " " + plans("torchtitan-hsdp-2x8-flattened.json") +
                   " --fail-on regression --threshold " + bad);
    CHECK(r.code == 2);
    CHECK(has(r, "percent, a finite number from 0 to"));
  }
  // The documented result with a real threshold: the flattened mesh is a regression (exit 1).
  Run ok = planck("diff " + plans("torchtitan-hsdp-2x8.json") + " " + plans("torchtitan-hsdp-2x8-flattened.json") +
                  " --fail-on regression --threshold 5");
  CHECK(ok.code == 1);
}

TEST_CASE("report --threshold and simulate --measured-step-s refuse nan") {
  Run r = planck("report " + plans("ddp-8.json") + " --threshold nan -o " + (temp_dir() / "r.html").string());
  CHECK(r.code == 2);
  CHECK(has(r, "'nan' is not percent"));
  const fs::path calib = temp_dir() / "calib.json";
  Run s = planck("simulate " + plans("ddp-8.json") + " --measured-step-s nan -o " + calib.string());
  CHECK(s.code == 2);
  CHECK(has(s, "'nan' is not seconds"));
  CHECK(!fs::exists(calib));
  Run z = planck("simulate " + plans("ddp-8.json") + " --measured-step-s 0 -o " + calib.string());
  CHECK(z.code == 2);
}

// --- 9: JUnit stays well-formed XML for any path and any plan text -----------------------

TEST_CASE("junit of a non-UTF-8 path and U+FFFE / U+FFFF plan text is well-formed XML") {
  // The plan: ddp-8 with an unknown key "\uFFFE\uFFFF" (plan-schema names it in the failure text),
  // at a path holding the Latin-1 byte 0xE9.
  std::ifstream in(plans("ddp-8.json"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.insert(text.find('{') + 1, "\"\\uFFFEx\\uFFFF\": 1,");
  const fs::path plan = write("caf\xe9-plan.json", text);
  const fs::path xml = temp_dir() / "junit.xml";
  Run r = planck_test::run_command(std::string(PLANCK_BIN) + " verify '" + plan.string() + "' --format junit > " +
                                   xml.string() + " 2>/dev/null");
  CHECK(r.code == 2);
  std::ifstream x(xml, std::ios::binary);
  const std::string doc((std::istreambuf_iterator<char>(x)), std::istreambuf_iterator<char>());
  CAPTURE(doc);
  CHECK(doc.find("\xEF\xBF\xBE") == std::string::npos);
  CHECK(doc.find("\xEF\xBF\xBF") == std::string::npos);
  CHECK(doc.find("caf\xEF\xBF\xBD-plan.json") != std::string::npos);  // the suite name, U+FFFD for the byte
  CHECK(doc.find("caf\\xE9-plan.json") != std::string::npos);         // the raw byte, escaped, as a property
  // Expat (Python's XML parser) refuses invalid UTF-8 and characters outside XML's Char.
  Run p = planck_test::run_command("python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' " +
                                   xml.string() + " 2>&1");
  CAPTURE(p.out);
  CHECK(p.code == 0);
  // SARIF of the same input stays valid JSON (nlohmann writes invalid bytes as U+FFFD).
  Run s = planck_test::run_command(std::string(PLANCK_BIN) + " verify '" + plan.string() +
                                   "' --format sarif | python3 -c 'import sys, json; json.load(sys.stdin)' 2>&1");
  CAPTURE(s.out);
  CHECK(s.code == 0);
}

// --- lesser: render and report of a 2^30-rank world cost what the drawing costs --------------

TEST_CASE("render and report of one 2^30-rank FSDP group finish in seconds, naming the span") {
  // One group of 1,073,741,824 ranks on 134,217,728 nodes of 8: counting its nodes member by
  // member took render 9 min and 3.4 GB; the summary now reads the span from the mesh's strides.
  const fs::path plan = write("world30.json", R"({"format": "planck/1", "name": "w30",
    "cluster": {"nodes": 134217728, "gpus_per_node": 8, "gpu": "h100-sxm"},
    "mesh": {"dims": ["dp_shard"], "shape": [1073741824]}, "parallelism": {"data_parallel": "fsdp"},
    "model": {"preset": "llama3-8b"}, "training": {"global_batch": 1073741824, "micro_batch": 1, "seq_len": 4096}})");
  Run r = planck("render " + plan.string() + " -o -");
  CHECK(r.code == 0);
  CHECK(r.seconds < seconds_limit(30));  // 0.25 s measured
  // 2^30 consecutive ranks over nodes of 8: 2^30 / 8 = 134217728 nodes.
  CHECK(has(r, "span up to 134217728 nodes"));
  Run h = planck("report " + plan.string() + " -o " + (temp_dir() / "w30.html").string());
  CHECK(h.code == 0);
  CHECK(h.seconds < seconds_limit(30));  // 0.34 s measured; stopped at 3 min before
}
