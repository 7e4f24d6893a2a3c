#pragma once
// microsoft/Megatron-DeepSpeed launches (pretrain_gpt.py ... --deepspeed --deepspeed_config ds.json):
// the fork of Megatron-LM whose training runs under the DeepSpeed engine. Its flags are checked
// against the fork's own argparse (deepspeed_flags.h), and what the engine decides (ZeRO stage and
// offload from the ds_config, DeepSpeed-MoE, DeepSpeed activation checkpointing) is read over the
// upstream reading (docs/import.md "Megatron-DeepSpeed").

#include <algorithm>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "import/megatron/args.h"

namespace planck::import {

struct DeepSpeedFork {
  bool on = false;     // --deepspeed: the DeepSpeed engine trains it
  bool flags = false;  // the fork's argparse reads the flags (--deepspeed, or a flag only the fork has)
  // The fork is bigscience-workshop/Megatron-DeepSpeed (BLOOM's, bigscience.cc), not microsoft's:
  // its entry scripts (finetune_t0.py, ...) or a flag only it defines (--pad-vocab-size-to, ...).
  bool bigscience = false;
  // Not a DeepSpeed fork: epfLLM/Megatron-LLM (epfllm.cc), whose argparse reads the flags
  // (underscore spellings) and whose model flags are renamed to upstream's.
  bool epfllm = false;
  // Not a DeepSpeed fork: alibaba/Megatron-LLaMA (megatron_llama.cc), Megatron-LM's flags and its own.
  bool megatron_llama = false;
  // Not a DeepSpeed fork: bigcode-project/Megatron-LM (bigcode.cc), Megatron-LM's flags and its own.
  bool bigcode = false;
  // Fork flags whose meaning differs from upstream's, taken out of the launch before the upstream
  // readers run (a --num-experts list, --checkpoint-activations); apply_deepspeed_fork reads them.
  std::map<std::string, MegatronFlag> taken;
  // Fork flags read as an upstream flag added to the launch: {"ds-sequence-parallel-size",
  // "context-parallel-size"}.
  std::vector<std::pair<std::string, std::string>> renamed;
};

// `launch` is a Megatron-DeepSpeed run when --deepspeed is among its flags; says so.
DeepSpeedFork detect_deepspeed_fork(MegatronLaunch& launch, PlanBuilder& b);

// bigscience.cc: whether the launch runs bigscience-workshop/Megatron-DeepSpeed, and its flags
// read as the upstream flags that mean the same (--pad-vocab-size-to is the vocabulary as given,
// --position-embedding-type absolute is upstream's learned_absolute), recorded in fork.renamed.
bool runs_bigscience_fork(const MegatronLaunch& launch);
void rename_bigscience_flags(DeepSpeedFork& fork, MegatronLaunch& launch, PlanBuilder& b);
// The bigscience fork's settings over the plan: --pad-vocab-size-to's checks, the pipeline split
// of --pp-partition-method, what --position-embedding-type leaves unpriced.
core::Status apply_bigscience(const MegatronFlags& f, PlanBuilder& b, const MegatronDegrees& d,
                              const MegatronLaunch& launch);

// epfllm.cc: whether the launch runs epfLLM/Megatron-LLM (a flag only it defines: --use_rms_norm,
// --num_attention_heads_kv, ...); its model flags added to the launch as the upstream flags that
// mean the same (recorded in fork.renamed) and the shapes planck does not build said; its flags,
// dashed, and how its argparse spells a dashed name ("" when it does not define it).
bool runs_epfllm_fork(const MegatronLaunch& launch);
void rename_epfllm_flags(DeepSpeedFork& fork, MegatronLaunch& launch, PlanBuilder& b);
const std::vector<std::string>& epfllm_flags();
std::string epfllm_spelling(const std::string& name);

// megatron_llama.cc: whether the launch runs alibaba/Megatron-LLaMA (a flag only it defines:
// --overlapped-distributed-optimizer, --RMSNorm, ...); its flags read as the upstream flags that mean the
// same (recorded in fork.renamed) and what planck prices otherwise said; whether it defines `name`
// (dashed) beyond Megatron-LM's flags.
bool runs_megatron_llama(const MegatronLaunch& launch);
void rename_megatron_llama_flags(DeepSpeedFork& fork, MegatronLaunch& launch, PlanBuilder& b);
bool megatron_llama_defines(const std::string& name);

// bigcode.cc: whether the launch runs bigcode-project/Megatron-LM (a flag only it defines:
// --attention-head-type, --tokenizer-file, --structured-logs, ...); whether it defines `name` (dashed)
// beyond Megatron-LM's flags; its --attention-head-type read (multiquery: one query group, recorded in
// fork.renamed), refused when absent or not one of its choices, and what planck does not price said.
bool runs_bigcode_fork(const MegatronLaunch& launch);
bool bigcode_defines(const std::string& name);
core::Status rename_bigcode_flags(DeepSpeedFork& fork, MegatronLaunch& launch, PlanBuilder& b);

// Whether `name` is one of the flag names (dashed, no "--") of `list`, an array of C strings.
template <typename List>
bool flag_listed(const List& list, const std::string& name) {
  return std::any_of(std::begin(list), std::end(list), [&](const char* n) { return name == n; });
}

// The first flag of `launch` that `list` names, as the launch writes it ("--flag"); "" when none.
template <typename List>
std::string first_listed_flag(const MegatronLaunch& launch, const List& list) {
  for (const auto& entry : launch.flags)
    if (flag_listed(list, entry.first)) return "--" + entry.second.written;
  return "";
}

// Adds `to` (with `value`, or bare) to the launch as a flag the upstream readers take, at `from`'s line
// (the launch's when `from` is a default the launch does not write); recorded in fork.renamed.
void add_renamed_flag(DeepSpeedFork& fork, MegatronLaunch& launch, const std::string& from, const std::string& to,
                      const std::string& value);

// The launch's entry script builds GPTModelPipe, a DeepSpeed PipelineModule trained by the
// PipelineEngine, under --deepspeed (unless --no-pipeline-parallel): the forks' pretrain_gpt.py,
// microsoft's finetune_llama.py, bigscience's pretrain_prefix_lm.py, finetune_t0.py and
// finetune_t0_non_causal_decoder.py.
bool builds_gpt_model_pipe(const MegatronLaunch& launch);

// The DeepSpeed engine's settings over the upstream plan: ZeRO stage, offload and precision from
// the ds_config (written by the script or beside it) and --zero-stage; DeepSpeed-MoE (experts per
// layer, ep, top-k, capacity); activation checkpointing as the fork applies it; the fork's
// unpriced flags said.
core::Status apply_deepspeed_fork(const DeepSpeedFork& fork, const MegatronFlags& f, PlanBuilder& b,
                                  const MegatronDegrees& d, const MegatronLaunch& launch, const ShellScript& script,
                                  std::string_view text);

// The fork's flags (its argparse and deepspeed.add_config_arguments), dashes for underscores:
// microsoft's (deepspeed_flags.h) or, for fork.bigscience, bigscience's (bigscience_flags.h); for
// fork.epfllm, epfllm_flags().
const std::vector<std::string>& deepspeed_fork_flags(const DeepSpeedFork& fork);
bool deepspeed_fork_knows(const DeepSpeedFork& fork, const std::string& name);
// A fork flag apply_deepspeed_fork reads or says (the generic checks leave it alone).
bool deepspeed_fork_reads(const DeepSpeedFork& fork, const std::string& name);

// The ds_config the launch names, as JSON text: written by a `cat <<TAG > FILE` here-document of
// the script (variables expanded; padded with newlines so its lines are the script's) or a file
// beside the script (deepspeed_config.cc).
struct DsConfigText {
  std::string text;
  std::string path;  // where its lines are: the script, or the JSON file
  std::string why;   // when text is empty: why it was not read
};
DsConfigText find_ds_config(const std::string& name, const ShellScript& script, std::string_view script_text,
                            const std::string& script_path);

}  // namespace planck::import
