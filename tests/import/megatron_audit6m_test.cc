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

TEST_CASE("megatron_spec_of_the_scripts_own_module_is_model_unmodelled_layers") {
  // gpt_builders.py:32-33@d98e8a6: with --spec the layers come from import_module(args.spec), not
  // from the flags; slime's get_qwen3_next_spec builds gated delta-net layers. The launch sources
  // slime's model file, whose MODEL_ARGS begin with --spec.
  ImportResult r = import_data_ok("megatron", "megatron-lm/spec_qwen3_next_excerpt.sh", world(1, 8));
  CHECK(findings(r, "model-unmodelled-layers", "--spec slime_plugins.models.qwen3_next get_qwen3_next_spec") ==
        1);
  CHECK(r.plan["model"]["layers"] == 48);
  // Megatron's own spec (megatron.*, as examples/mamba/train.sh names) is the layers the flags
  // describe: nothing is said.
  const std::string own = replace(read_data("megatron-lm/spec_qwen3_next_excerpt.sh"),
                                  "source ../slime/models/qwen3-next-80B-A3B.sh",
                                  "MODEL_ARGS=( --spec megatron.core.models.gpt.gpt_layer_specs "
                                  "get_gpt_layer_local_spec --num-layers 4 --hidden-size 256 "
                                  "--num-attention-heads 8 --vocab-size 1024 )");
  ImportResult m = import_ok(&import_megatron, own, world(1, 8), "t.sh");
  CHECK(findings(m, "model-unmodelled-layers") == 0);
}

TEST_CASE("megatron_deepspeed_num_key_value_heads_is_gqa") {
  // examples_deepspeed/pretrain_llama2_distributed.sh passes --num-key-value-heads $NUM_KV_HEADS
  // (NUM_KV_HEADS=4, 16 heads): the fork's GQA (arguments.py:442-448, 623@f4157be;
  // transformer.py:566-572: K and V projections of kv_channels x 4). The script names no vocabulary
  // (its tokenizer's); one is added so that the model is built.
  const std::string text = replace(read_data("megatron-deepspeed/pretrain_llama2_distributed.sh"),
                                   "--num-key-value-heads $NUM_KV_HEADS \\",
                                   "--num-key-value-heads $NUM_KV_HEADS --vocab-size 32000 \\");
  ImportResult r = import_ok(&import_megatron, text, world(1, 8), "pretrain_llama2_distributed.sh");
  REQUIRE(r.plan["model"].is_object());
  CHECK(r.plan["model"]["heads"] == 16);
  CHECK(r.plan["model"]["kv_heads"] == 4);
  // The fork defines --num-key-value-heads and not upstream's GQA flags: none is unknown-key.
  CHECK(findings(r, "unknown-key") == 0);
}

}  // namespace planck::import::test
