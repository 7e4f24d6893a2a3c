// The flags of a Megatron launch: read, unknown, or known and unread (flag_check.h).

#include "import/megatron/flag_check.h"

#include <algorithm>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "import/megatron/flags.h"

namespace planck::import {

namespace {

const std::vector<std::string> kInterpreted = {"tensor-model-parallel-size",
                                               "pipeline-model-parallel-size",
                                               "context-parallel-size",
                                               "expert-model-parallel-size",
                                               "expert-tensor-parallel-size",
                                               "num-layers-per-virtual-pipeline-stage",
                                               "num-virtual-stages-per-pipeline-rank",
                                               "sequence-parallel",
                                               "use-distributed-optimizer",
                                               "num-distributed-optimizer-instances",
                                               "use-megatron-fsdp",
                                               "use-torch-fsdp2",
                                               "data-parallel-sharding-strategy",
                                               "outer-dp-sharding-strategy",
                                               "use-tp-pp-dp-mapping",
                                               "use-custom-fsdp",
                                               "ddp-bucket-size",
                                               "num-layers",
                                               "hidden-size",
                                               "ffn-hidden-size",
                                               "num-attention-heads",
                                               "group-query-attention",
                                               "num-query-groups",
                                               "kv-channels",
                                               "vocab-size",
                                               "padded-vocab-size",
                                               "use-flash-attn",
                                               "make-vocab-size-divisible-by",
                                               "untie-embeddings-and-output-weights",
                                               "swiglu",
                                               "num-experts",
                                               "moe-router-topk",
                                               "moe-ffn-hidden-size",
                                               "moe-shared-expert-intermediate-size",
                                               "moe-layer-freq",
                                               "moe-expert-capacity-factor",
                                               "moe-pad-expert-input-to-capacity",
                                               "overlap-moe-expert-parallel-comm",
                                               "account-for-embedding-in-pipeline-split",
                                               "account-for-loss-in-pipeline-split",
                                               "decoder-first-pipeline-num-layers",
                                               "decoder-last-pipeline-num-layers",
                                               "pipeline-model-parallel-layout",
                                               "moe-token-dispatcher-type",
                                               "moe-enable-deepep",
                                               "moe-flex-dispatcher-backend",
                                               "micro-batch-size",
                                               "batch-size",
                                               "global-batch-size",
                                               "seq-length",
                                               "rampup-batch-size",
                                               "step-batch-size-schedule",
                                               "bf16",
                                               "fp16",
                                               "grad-reduce-in-bf16",
                                               "megatron-fsdp-grad-comm-dtype",
                                               "megatron-fsdp-main-grads-dtype",
                                               "accumulate-allreduce-grads-in-fp32",
                                               "fp8-format",
                                               "fp8-recipe",
                                               "fp8-param-gather",
                                               "cuda-graph-impl",
                                               "cuda-graph-modules",
                                               "cuda-graph-scope",
                                               "enable-cuda-graph",
                                               "external-cuda-graph",
                                               "mtp-num-layers",
                                               "recompute-granularity",
                                               "recompute-method",
                                               "recompute-num-layers",
                                               "recompute-activations",
                                               "recompute-modules",
                                               "checkpoint-activations",
                                               "activations-checkpoint-method",
                                               "activations-checkpoint-num-layers",
                                               "decoder-seq-length",
                                               "freeze-LM",
                                               "freeze-ViT",
                                               "freeze-all-layers",
                                               "optimizer-cpu-offload",
                                               "use-precision-aware-optimizer",
                                               "main-grads-dtype",
                                               "main-params-dtype",
                                               "exp-avg-dtype",
                                               "exp-avg-sq-dtype",
                                               "optimizer"};
// Flags whose names look parallel but change no group, size or strategy planck models.
const std::vector<std::string> kBenignParallel = {"overlap-grad-reduce",
                                                  "overlap-param-gather",
                                                  "fsdp-double-buffer",
                                                  "fsdp-manual-registration",
                                                  "overlap-p2p-communication",
                                                  "align-param-gather",
                                                  "align-grad-reduce",
                                                  "tp-comm-overlap",
                                                  "defer-embedding-wgrad-compute",
                                                  "distributed-backend",
                                                  "distributed-timeout-minutes",
                                                  "init-model-with-meta-device",
                                                  "use-precision-aware-optimizer",
                                                  "overlap-param-gather-with-optimizer-step",
                                                  "sequence-parallel-inference",
                                                  "expert-model-parallel-overlap",
                                                  "moe-router-enable-expert-bias",  // a routing bias, no layout
                                                  "moe-shared-expert-overlap",      // said by megatron/layers.cc
                                                  // The async all-reduce of TP input gradients (gone from
                                                  // Megatron-LM since 2024): planck prices that all-reduce
                                                  // unoverlapped unless --tp-comm-overlap, as this asks.
                                                  "no-async-tensor-model-parallel-allreduce"};
const std::vector<std::string> kParallelWords = {
    "parallel", "fsdp", "distributed-optimizer", "expert", "virtual", "pipeline", "context-", "sharding"};

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Every flag Megatron-LM defined (import/megatron/flags.h, the union of its generations).
const std::set<std::string>& upstream_flags() {
  static const std::set<std::string> flags(std::begin(kMegatronFlags), std::end(kMegatronFlags));
  return flags;
}

}  // namespace

bool megatron_interprets(const std::string& name) { return contains(kInterpreted, name); }

std::optional<Unfollowed> wrapper_launch(const MegatronLaunch& launch, const DeepSpeedFork& fork,
                                         const std::string& path) {
  // A Python wrapper that builds its own launch (krafton-ai/Megatron-Dion's speedrun script takes
  // --fs-size / --rp-size / --tp-size and runs torchrun pretrain_gpt.py itself): most of its flags
  // are no Megatron-LM or DeepSpeed-fork flag and none of the model's sizes is given, so reading
  // them as Megatron's would say what Megatron never sees.
  const auto known_flag = [&fork](const std::string& name) {
    return upstream_flags().count(name) || (fork.flags && deepspeed_fork_knows(fork, name));
  };
  const auto megatron_count = std::count_if(launch.flags.begin(), launch.flags.end(),
                                            [&](const auto& flag) { return known_flag(flag.first); });
  const bool sizes = launch.flags.count("num-layers") || launch.flags.count("hidden-size") ||
                     launch.flags.count("micro-batch-size");
  if (launch.script.empty() || sizes || 2 * static_cast<std::size_t>(megatron_count) >= launch.flags.size()) {
    return std::nullopt;
  }
  std::string some;
  for (auto it = launch.flags.begin(); it != launch.flags.end() && some.size() < 60; ++it) {
    if (known_flag(it->first)) continue;
    some += (some.empty() ? "--" : ", --") + it->second.written;
  }
  return Unfollowed{path, launch.line, launch.script + " ...",
                    "most of its flags (" + some + ") are no Megatron-LM flag and it gives no model size: a wrapper "
                    "that builds its own launch, which planck does not follow; verify the command it runs (its "
                    "pretrain_*.py line)",
                    "the whole config"};
}

std::optional<Unfollowed> hf_accelerate_launch(const MegatronLaunch& launch, const std::string& path) {
  // huggingface/accelerate@16cb6eb8 commands/launch.py: `accelerate launch` takes its own options
  // (--config_file, --num_processes, --num_machines, ...) before the training script, and the
  // layout (DDP, FSDP, DeepSpeed ZeRO) is the config file's distributed_type and its sections
  // (commands/config/config_args.py). The script's own arguments (open-r1's src/open_r1/sft.py
  // --config X.yaml, TRL's sft.py) are no Megatron-LM flags: read as Megatron's they would give a
  // Megatron default for every setting.
  const auto is_accelerate = [](const ShellField& w) {
    const std::string base = w.text.substr(w.text.rfind('/') + 1);
    return base == "accelerate";
  };
  const auto at = std::find_if(launch.before.begin(), launch.before.end(), is_accelerate);
  if (at == launch.before.end() || at + 1 == launch.before.end() || (at + 1)->text != "launch") return std::nullopt;
  std::string config;
  for (auto it = at + 2; it != launch.before.end(); ++it) {
    const std::string& w = it->text;
    if (w.rfind("--config_file=", 0) == 0 || w.rfind("--config-file=", 0) == 0) {
      config = w.substr(w.find('=') + 1);
    } else if ((w == "--config_file" || w == "--config-file") && it + 1 != launch.before.end()) {
      config = (it + 1)->text;
    }
  }
  const std::string names = config.empty() ? "the accelerate config it runs (accelerate's default config file, "
                                             "~/.cache/huggingface/accelerate/default_config.yaml)"
                                           : "the accelerate config it names (--config_file " + config + ")";
  return Unfollowed{path, launch.line, "accelerate launch ... " + launch.script + " ...",
                    "a Hugging Face accelerate launch: the layout is in " + names + " and the model, sequence "
                    "length and batch in " + launch.script + "'s own arguments, not in Megatron-LM flags; verify "
                    "that config with the run's facts (`planck verify CONFIG --nodes N --gpus-per-node G --model "
                    "MODEL --seq-len S --micro-batch B`)",
                    "the whole config"};
}

std::optional<Unfollowed> rl_trainer_launch(const MegatronLaunch& launch, const std::string& path) {
  // THUDM/slime's train.py parses Megatron-LM's flags with its own added (slime/utils/arguments.py
  // @624b824: --actor-num-nodes, --rollout-batch-size, --hf-checkpoint, ...) and its own defaults:
  // --micro-batch-size 1 (:717), --global-batch-size from the rollout (:1971-1979), the distributed
  // optimizer and bf16 always, seq_length 4096 as a placeholder (backends/megatron_utils/
  // arguments.py:153-165), world = actor nodes x GPUs (:206); --use-dynamic-batch-size packs
  // micro-batches by --max-tokens-per-gpu and --colocate shares the GPUs with SGLang's engines.
  // Read as Megatron-LM's own launch, all of these would be other defaults.
  static const char* const kSlime[] = {"actor-num-nodes", "actor-num-gpus-per-node", "rollout-batch-size",
                                       "hf-checkpoint", "rollout-num-gpus-per-engine", "n-samples-per-prompt"};
  const std::string entry = launch.script.substr(launch.script.rfind('/') + 1);
  if (entry != "train.py" && entry != "train_async.py") return std::nullopt;
  std::string some;
  for (const char* name : kSlime) {
    if (launch.flags.count(name) && some.size() < 40) some += (some.empty() ? "--" : ", --") + std::string(name);
  }
  if (some.empty()) return std::nullopt;
  return Unfollowed{path, launch.line, launch.script + " ...",
                    "a slime RL launch (" + some + "): slime's train.py adds its own flags and defaults to "
                    "Megatron-LM's (micro batch 1, the distributed optimizer and bf16 always, micro-batches packed "
                    "by --max-tokens-per-gpu, the GPUs shared with SGLang under --colocate), which planck does not "
                    "read; write a planck plan for its training layout",
                    "the whole config"};
}

void check_flags(const MegatronFlags& f, const DeepSpeedFork& fork, PlanBuilder& b) {
  // Flags Megatron-LM never defined (import/megatron/flags.h, the union of its generations) are
  // unknown-key; known flags that look parallel and that planck does not interpret are warned.
  static const std::vector<std::string> known(std::begin(kMegatronFlags), std::end(kMegatronFlags));
  const std::set<std::string>& known_set = upstream_flags();
  for (const auto& [name, flag] : f.all()) {
    // Megatron-LM's parser (arguments.py parse_args: argparse, allow_abbrev=False) has no underscore
    // aliases: `--tensor_model_parallel_size` stops it at start-up. planck reads it as the dashed flag
    // a fork spelling it so defines (epfLLM/Megatron-LLM), and says so.
    if (!fork.flags && flag.written.find('_') != std::string::npos && known_set.count(name) &&
        !known_set.count(flag.written)) {
      b.finding("unknown-key", flag.line,
                "--" + flag.written + " is not a flag Megatron-LM defines: it spells it --" + name +
                    " and its argparse refuses the underscore spelling at start-up; read as --" + name +
                    (epfllm_spelling(name) == flag.written ? ", as epfLLM/Megatron-LLM, which spells it so, would"
                                                           : ", though no fork planck knows spells it so"));
      continue;
    }
    // epfLLM's argparse (allow_abbrev=False) defines underscore names only: a dashed spelling of
    // one stops it at start-up. Flags renamed to upstream's (fork.renamed) are planck's, not written.
    const std::string& key = name;  // clang 14 cannot capture a structured binding
    const bool renamed = std::any_of(fork.renamed.begin(), fork.renamed.end(),
                                     [&key](const auto& r) { return r.second == key; });
    if (fork.epfllm && !renamed && !epfllm_spelling(name).empty() && epfllm_spelling(name) != flag.written) {
      b.finding("unknown-key", flag.line,
                "--" + flag.written + " is not a flag epfLLM/Megatron-LLM defines: it spells it --" +
                    epfllm_spelling(name) + " and its argparse refuses this spelling at start-up; read as --" +
                    epfllm_spelling(name));
      continue;
    }
    if (fork.megatron_llama && megatron_llama_defines(name)) continue;  // said by megatron_llama.cc
    if (fork.bigcode && bigcode_defines(name)) continue;                // said by bigcode.cc
    const bool read = contains(kInterpreted, name) || contains(kBenignParallel, name);
    // an upstream-only flag the fork rejects
    if (read && (!fork.flags || deepspeed_fork_knows(fork, name))) continue;
    if (fork.flags && deepspeed_fork_reads(fork, name)) continue;
    if (fork.flags ? !deepspeed_fork_knows(fork, name) : !known_set.count(name)) {
      b.unknown_key("--" + name, flag.line, fork.flags ? deepspeed_fork_flags(fork) : known);
      continue;
    }
    // Checkpoint save / load (--ckpt-fully-parallel-load, ...): no step, memory or layout effect.
    if (name.rfind("ckpt-", 0) == 0) continue;
    for (const std::string& w : kParallelWords) {
      if (name.find(w) != std::string::npos) {
        b.unmodelled("--" + name, flag.line,
                     "it looks parallelism-related but planck does not interpret it; the layout is what the other "
                     "flags say");
        break;
      }
    }
  }
}

}  // namespace planck::import
