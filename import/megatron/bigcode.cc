// bigcode-project/Megatron-LM launches (StarCoder, SantaCoder: examples/*.slurm, pretrain_gpt.py): a fork of
// Megatron-LM (megatron/arguments.py @7c325cd) that keeps Megatron-LM's flags (--use-distributed-optimizer
// :1066, --use-flash-attn :838, --sequence-parallel :861) and adds its own, among them multi-query attention.
// It shares --train-weighted-split-paths-path with BLOOM's fork, whose argparse lacks those upstream flags, so
// a flag only bigcode defines says the launch is bigcode's (bigscience.cc then does not take it for BLOOM's).

#include <string>

#include "import/megatron/deepspeed_fork.h"

namespace planck::import {
namespace {

// Flags of bigcode's megatron/arguments.py @7c325cd that Megatron-LM never defined (import/megatron/flags.h):
// :575 --attention-head-type, :586 --rotary-theta, :623 --glu-activation, :696 --wandb-entity-name, :698
// --wandb-project-name, :700 --transformer-timers, :703 --structured-logs, :705 --structured-logs-dir, :1068
// --distributed-timeout, :1152/1162/1172 --train/valid/test-weighted-split-paths, :1198-1200 their -path forms,
// :1224 --tokenizer-file, :1250 --valid-num-workers, :1283 --fragment-fim-rate,
// :1285 --sanity-check-dataloader-interval.
const char* const kBigcodeFlags[] = {"attention-head-type",
                                     "rotary-theta",
                                     "glu-activation",
                                     "wandb-entity-name",
                                     "wandb-project-name",
                                     "transformer-timers",
                                     "structured-logs",
                                     "structured-logs-dir",
                                     "distributed-timeout",
                                     "train-weighted-split-paths",
                                     "valid-weighted-split-paths",
                                     "test-weighted-split-paths",
                                     "train-weighted-split-paths-path",
                                     "valid-weighted-split-paths-path",
                                     "test-weighted-split-paths-path",
                                     "tokenizer-file",
                                     "valid-num-workers",
                                     "fragment-fim-rate",
                                     "sanity-check-dataloader-interval"};
// Of those, the ones no other fork planck knows defines (BLOOM's has the weighted split paths and
// --glu-activation).
const char* const kBigcodeOnly[] = {"attention-head-type", "wandb-entity-name",   "wandb-project-name",
                                    "structured-logs",     "structured-logs-dir", "tokenizer-file"};

}  // namespace

bool runs_bigcode_fork(const MegatronLaunch& launch) { return !first_listed_flag(launch, kBigcodeOnly).empty(); }

bool bigcode_defines(const std::string& name) { return flag_listed(kBigcodeFlags, name); }

core::Status rename_bigcode_flags(DeepSpeedFork& fork, MegatronLaunch& launch, PlanBuilder& b) {
  b.note("a bigcode-project/Megatron-LM launch (" + first_listed_flag(launch, kBigcodeOnly) +
         "): flags checked against Megatron-LM's and the fork's own (megatron/arguments.py @7c325cd)");
  const auto type = launch.flags.find("attention-head-type");
  if (type == launch.flags.end()) {
    // model/transformer.py:603, :666: ParallelAttention takes args.attention_head_type (default None,
    // arguments.py:575) and raises ValueError for anything but multihead / multiquery; only a checkpoint's
    // arguments (--use-checkpoint-args, checkpointing.py:488) set it otherwise.
    if (!launch.flags.count("use-checkpoint-args")) {
      return b.error(launch.line, "no --attention-head-type: bigcode's ParallelAttention raises ValueError('Invalid "
                                  "attention arguments') without it (megatron/model/transformer.py:666); pass "
                                  "--attention-head-type multihead or multiquery");
    }
  } else if (type->second.value == "multiquery") {
    // transformer.py:627-641: the query is column-parallel over tp, the keys and values one head of
    // kv_channels (get_linear_layer, not split), whole on every tensor-parallel rank: one query group.
    add_renamed_flag(fork, launch, "attention-head-type", "group-query-attention", "");
    add_renamed_flag(fork, launch, "attention-head-type", "num-query-groups", "1");
    b.note("--attention-head-type multiquery: one K/V head (kv_heads 1), whole on every tensor-parallel rank "
           "(bigcode's megatron/model/transformer.py:627-641)");
  } else if (type->second.value != "multihead") {
    return b.error(type->second.line, "--attention-head-type " + type->second.value +
                                          ": bigcode's argparse takes multihead or multiquery (arguments.py:575)");
  }
  if (const auto t = launch.flags.find("transformer-timers"); t != launch.flags.end()) {
    b.unmodelled("--transformer-timers", t->second.line,
                 "timers inside every transformer layer, which the fork says slow the model (arguments.py:700); "
                 "the step is priced without them");
  }
  return core::Status::ok();
}

}  // namespace planck::import
