// Audit 6m: Megatron-family launch scripts not read before (THUDM/slime, microsoft/Megatron-DeepSpeed
// examples_deepspeed/, a --spec layer module). Expected values from each framework's code, cited per case.

#include <doctest/doctest.h>

#include <string>

#include "tests/import/import_test_util.h"

namespace planck::import::test {

TEST_CASE("megatron_slime_rl_launch_is_unfollowed") {
  // slime's train.py (THUDM/slime@624b824) parses Megatron-LM's flags with its own added and its own
  // defaults: --micro-batch-size defaults to 1 (slime/utils/arguments.py:717), so Megatron-LM's "no
  // --micro-batch-size" refusal would be false; the distributed optimizer and bf16 are forced
  // (slime/backends/megatron_utils/arguments.py:153,157) and the world is actor nodes x GPUs (:206).
  ImportResult r = import_data_ok("megatron", "slime/run-qwen3-next-80B-A3B.sh", world(1, 8));
  REQUIRE(r.unfollowed.size() == 1);
  CHECK(r.unfollowed[0].why.find("slime RL launch") != std::string::npos);
  CHECK(r.unfollowed[0].line == 183);  // `-- python3 train.py \`
  // A Megatron-LM launch named train.py without slime's flags is still read.
  ImportResult plain = import_ok(&import_megatron,
                                 "torchrun --nproc_per_node 8 train.py --num-layers 2 --hidden-size 64 "
                                 "--num-attention-heads 4 --seq-length 128 --max-position-embeddings 128 "
                                 "--micro-batch-size 1 --global-batch-size 8 --vocab-size 512\n",
                                 world(1, 8), "t.sh");
  CHECK(plain.unfollowed.empty());
}

}  // namespace planck::import::test
