// Inputs the fuzzers found crashing, kept as the smallest reproducer each (scripts/fuzz.sh).
#include <doctest/doctest.h>

#include <string>

#include "io/pickle_reader.h"
#include "import/importer.h"

TEST_CASE("fuzz_regression: a shell script with 'elif' before any 'if' is an error, not a crash") {
  // fuzz_import found it (2026-11-22): Runner::statement took frames_.back() of an empty stack
  // (import/formats/shell_script.cc), undefined behaviour that UBSan reported as a null-pointer offset.
  planck::import::ImportOptions options;
  auto result = planck::import::import_megatron("#!/bin/bash\nelif [ 1 ]; then\n  X=1\nfi\n", "train.sh", options);
  REQUIRE_FALSE(result.is_ok());
  CHECK(result.status().message().find("'elif' without 'if'") != std::string::npos);
  CHECK(result.status().message().find("train.sh:2") != std::string::npos);
}

TEST_CASE("fuzz_regression: a bare commented '# --num-distributed-optimizer-instances' is a hint, not a crash") {
  // fuzz_import found it (2026-11-22): with no value after the flag, import/megatron/megatron.cc added
  // 1 to std::string::npos past the text's pointer, which UBSan reported as pointer overflow.
  const std::string head =
      "#!/bin/bash\nARGS=(\n    --tensor-model-parallel-size 2\n"
      "    --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096\n"
      "    --micro-batch-size 1 --global-batch-size 16\n";
  const std::string tail = ")\ntorchrun --nproc_per_node 8 pretrain_gpt.py \"${ARGS[@]}\"\n";
  planck::import::ImportOptions options;
  auto bare = planck::import::import_megatron(head + "    # --num-distributed-optimizer-instances\n" + tail, "t.sh", options);
  REQUIRE(bare.is_ok());
  bool found = false;
  for (const auto& h : bare->hints) {
    if (h.find("commented out, not applied: --num-distributed-optimizer-instances") == std::string::npos) continue;
    found = true;
    CHECK(h.find("HFSDP") == std::string::npos);  // no value: nothing to explain
  }
  CHECK(found);
  // With a value the hint explains the split: 8 ranks / tp 2 = dp 4, split in 2 shard groups of 2.
  auto two = planck::import::import_megatron(head + "    # --num-distributed-optimizer-instances 2\n" + tail, "t.sh", options);
  REQUIRE(two.is_ok());
  bool explained = false;
  for (const auto& h : two->hints) explained |= h.find("group of 4 ranks into 2 contiguous shard groups of 2") != std::string::npos;
  CHECK(explained);
}

TEST_CASE("fuzz_regression: a pickle memo index past the input's size is an error, not a 400 MB memo") {
  // fuzz_flight_recorder found it (2026-11-22): LONG_BINPUT 99,999,999 resized the dense memo
  // to 10^8 entries (0.25 s, 400 MB) for a 300-byte dump. Protocol 2: None, LONG_BINPUT n, STOP.
  const std::string big = std::string("\x80\x02N") + "r" + std::string("\xff\xe0\xf5\x05", 4) + ".";
  auto r = planck::io::read_pickle(big);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.message().find("memo index 99999999 out of range for a pickle of 9 bytes") != std::string::npos);
  // A real index (BINPUT 0) still reads.
  auto ok = planck::io::read_pickle(std::string("\x80\x02Nq\x00.", 6));
  REQUIRE(ok.is_ok());
  CHECK(ok->is_null());
}
