// Which launches the Megatron-LM importer reads as training: Megatron-LM's own example scripts
// that generate text (NVIDIA/Megatron-LM@d98e8a64 examples/academic_paper_scripts/detxoify_lm/
// generate-1.3b.sh runs generate_samples_gpt.py; examples/mamba/run_text_gen_server_8b.sh runs
// tools/run_mamba_text_generation_server.py) take the training flags but run no optimizer step:
// verified as training, one was "ok" and the other a false memory-exceeds (micro-batch 400).

#include <doctest/doctest.h>

#include <string>

#include "tests/import/import_test_util.h"

namespace planck::import::test {

TEST_CASE("megatron_generation_launches_are_not_read_as_training") {
  for (const char* file : {"megatron-lm/detxoify_generate-1.3b.sh", "megatron-lm/mamba_run_text_gen_server_8b.sh"}) {
    CAPTURE(file);
    const std::string why = import_error(&import_megatron, read_data(file), world(1, 8), file);
    CHECK(why.find("does not train") != std::string::npos);
    CHECK(why.find(std::string(file) + ":") != std::string::npos);  // located at the launch line
  }
  // A training entry point is still read (examples/gpt3/train_gpt3_175b_distributed.sh runs pretrain_gpt.py).
  ImportResult r = import_ok(&import_megatron, read_data("megatron-lm/train_gpt3_175b_distributed.sh"), world(16, 8),
                             "train_gpt3_175b_distributed.sh");
  CHECK(r.plan["parallelism"].contains("sequence_parallel"));
}

}  // namespace planck::import::test
