// alibaba/Megatron-LLaMA launches (examples/LLaMA/*.sh: pretrain_llama.py, --overlapped-distributed-optimizer):
// a fork of Megatron-LM (megatron/arguments.py @25306de) that keeps Megatron-LM's flags (--sequence-parallel
// :792, --swiglu :558, --recompute-activations :704, --use-flash-attn :769) and adds its own. It shares
// --tokenizer-name-or-path (:1105) with BLOOM's fork, whose argparse lacks those upstream flags, so a flag only
// Megatron-LLaMA defines says the launch is not BLOOM's fork, and its own flags are not unknown-key.

#include <string>

#include "import/megatron/deepspeed_fork.h"

namespace planck::import {
namespace {

// Flags of Megatron-LLaMA's arguments.py @25306de that Megatron-LM never defined (import/megatron/flags.h):
// :570 --RMSNorm, :572 --causal-lm, :799 --job-name, :901 --distributed-checkpointing, :905
// --checkpoint-dir-name, :1007 --overlapped-distributed-optimizer, :1009 --reduce-bucket-size, :1011
// --last-bucket-split-count, :1025 --verify-grad-order, :1105 --tokenizer-name-or-path.
const char* const kMegatronLlamaFlags[] = {"RMSNorm",
                                           "causal-lm",
                                           "job-name",
                                           "distributed-checkpointing",
                                           "checkpoint-dir-name",
                                           "overlapped-distributed-optimizer",
                                           "reduce-bucket-size",
                                           "last-bucket-split-count",
                                           "verify-grad-order",
                                           "tokenizer-name-or-path"};
// Of those, the ones no other fork planck knows defines (BLOOM's has --tokenizer-name-or-path).
const char* const kMegatronLlamaOnly[] = {"RMSNorm", "causal-lm", "overlapped-distributed-optimizer",
                                          "reduce-bucket-size", "last-bucket-split-count", "verify-grad-order"};

}  // namespace

bool runs_megatron_llama(const MegatronLaunch& launch) {
  return !first_listed_flag(launch, kMegatronLlamaOnly).empty();
}

bool megatron_llama_defines(const std::string& name) { return flag_listed(kMegatronLlamaFlags, name); }

void rename_megatron_llama_flags(DeepSpeedFork& fork, MegatronLaunch& launch, PlanBuilder& b) {
  b.note("an alibaba/Megatron-LLaMA launch (" + first_listed_flag(launch, kMegatronLlamaOnly) +
         "): flags checked against Megatron-LM's and the fork's own (megatron/arguments.py @25306de)");
  auto has = [&](const char* name) { return launch.flags.count(name) > 0; };
  // model/fused_layer_norm.py:89: --RMSNorm makes every layer norm an RMSNorm (upstream's --normalization RMSNorm).
  if (has("RMSNorm")) add_renamed_flag(fork, launch, "RMSNorm", "normalization", "RMSNorm");
  // arguments.py:425: --transformer-impl defaults to local, the fork's own ParallelTransformer (model/transformer.py),
  // whose --use-flash-attn runs flash-attn's FlashSelfAttention (:419-420, :475-476).
  if (!has("transformer-impl")) add_renamed_flag(fork, launch, "transformer-impl", "transformer-impl", "local");
  // optimizer/overlapped_dist_optimizer.py: the gradients and the optimizer's states and fp32 parameters of
  // each bucket split over the data-parallel ranks (README "OverlappedDistributedOptimizer").
  if (has("overlapped-distributed-optimizer")) {
    add_renamed_flag(fork, launch, "overlapped-distributed-optimizer", "use-distributed-optimizer", "");
    b.unmodelled("--overlapped-distributed-optimizer", launch.flags.at("overlapped-distributed-optimizer").line,
                 "priced as Megatron-LM's distributed optimizer (optimizer states sharded over dp, gradients kept "
                 "whole); its per-bucket gradient shards and the overlap of their reduce with the backward are not");
  }
  // model/llama_model.py:75-81 and language_model.py:440: --causal-lm drops the tied output layer for a
  // torch.nn.Linear(hidden, padded vocab) on every tensor-parallel rank, its logits gathered whole.
  if (has("causal-lm")) {
    if (!has("untie-embeddings-and-output-weights"))
      add_renamed_flag(fork, launch, "causal-lm", "untie-embeddings-and-output-weights", "");
    b.unmodelled("--causal-lm", launch.flags.at("causal-lm").line,
                 "its untied output layer (lm_head) is whole on every tensor-parallel rank; priced split over tp "
                 "as Megatron-LM's");
  }
}

}  // namespace planck::import
