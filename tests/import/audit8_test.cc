// Audit 8: launches and configs of sources not read before (bigcode-project/Megatron-LM,
// databricks/megablocks, IEIT-Yuan/Yuan-2.0, argonne-lcf/Megatron-DeepSpeed, ROCm/torchtitan, axolotl,
// MiniCPM, FastChat, stanford_alpaca, peft). Expected values from each framework's code, cited per case.

#include <doctest/doctest.h>

#include <string>

#include "tests/import/import_test_util.h"

namespace planck::import::test {

TEST_CASE("megatron_bigcode_launch_is_not_blooms_fork") {
  // bigcode-project/Megatron-LM's examples/finetune_starcoderplus.slurm (@7c325cd) passes
  // --train-weighted-split-paths-path, which the bigcode fork defines (megatron/arguments.py:1198) as
  // BLOOM's fork does, with flags only bigcode defines (--attention-head-type :575, --structured-logs
  // :703, --tokenizer-file :1224) and Megatron-LM's own --use-flash-attn (:838), --sequence-parallel
  // (:861) and --use-distributed-optimizer (:1066), which BLOOM's fork lacks. Read as BLOOM's fork,
  // those three were "unknown, argparse refuses at start-up": false.
  auto r = import_file("megatron", data_path("megatron-lm/audit8/bigcode_finetune_starcoderplus.slurm"), world(64, 8));
  REQUIRE_MESSAGE(r.is_ok(), (r.is_ok() ? std::string() : r.message()));
  for (const char* flag : {"--sequence-parallel is not a key", "--use-flash-attn is not a key"}) {
    CHECK_FALSE(finding_says(*r, "unknown-key", flag));
  }
  for (const auto& n : r->plan["notes"]) CHECK(n.get<std::string>().find("BLOOM's fork") == std::string::npos);
  CHECK(r->plan["parallelism"]["sequence_parallel"] == true);
  // The bigcode-only flag is still not Megatron-LM's: said, naming it.
  CHECK(finding_says(*r, "unknown-key", "--attention-head-type"));

  // pretrain_bigcode_7b.slurm: --use-distributed-optimizer is read (ZeRO-1 over dp), not unknown.
  auto s = import_file("megatron", data_path("megatron-lm/audit8/bigcode_pretrain_bigcode_7b.slurm"), world(64, 8));
  REQUIRE_MESSAGE(s.is_ok(), (s.is_ok() ? std::string() : s.message()));
  CHECK_FALSE(finding_says(*s, "unknown-key", "--use-distributed-optimizer"));
}

}  // namespace planck::import::test
