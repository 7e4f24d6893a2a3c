// Inputs the fuzzers found crashing, kept as the smallest reproducer each (scripts/fuzz.sh).
#include <doctest/doctest.h>

#include <string>

#include "import/importer.h"

TEST_CASE("fuzz_regression: a shell script with 'elif' before any 'if' is an error, not a crash") {
  // fuzz_import found it (2026-11-22): Runner::statement took frames_.back() of an empty stack
  // (import/shell_script.cc), undefined behaviour that UBSan reported as a null-pointer offset.
  planck::import::ImportOptions options;
  auto result = planck::import::import_megatron("#!/bin/bash\nelif [ 1 ]; then\n  X=1\nfi\n", "train.sh", options);
  REQUIRE_FALSE(result.is_ok());
  CHECK(result.status().message().find("'elif' without 'if'") != std::string::npos);
  CHECK(result.status().message().find("train.sh:2") != std::string::npos);
}
