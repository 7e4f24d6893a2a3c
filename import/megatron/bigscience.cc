// bigscience-workshop/Megatron-DeepSpeed launches (BLOOM's fork of Megatron-DeepSpeed, docs/import.md
// "Megatron-DeepSpeed"): which launches run it, its flags read as the upstream flags that mean the
// same, and its own pipeline split. Sources: the fork @8387ae17 (main) and @a1d9317d (lumi_mtf,
// BLOOMZ's finetune_t0.py); DeepSpeed's PipelineModule (deepspeedai/DeepSpeed @edaa722).

#include <algorithm>
#include <cctype>
#include <string>

#include "import/megatron/deepspeed_fork.h"

namespace planck::import {
namespace {

// Entry scripts of the bigscience fork that microsoft's (@f4157be) does not have.
const char* const kBigScienceEntries[] = {"finetune_t0.py", "finetune_t0_non_causal_decoder.py",
                                          "pretrain_prefix_lm.py"};

// Entry scripts whose model_provider builds GPTModelPipe under --deepspeed: microsoft @f4157be
// pretrain_gpt.py:51 and finetune_llama.py:46 (`args.deepspeed and not args.no_pipeline_parallel`);
// bigscience @8387ae17 pretrain_gpt.py:56, pretrain_prefix_lm.py:49,
// finetune_t0_non_causal_decoder.py:35 and @a1d9317d finetune_t0.py:35 (`if args.deepspeed:`).
const char* const kPipeEntries[] = {"pretrain_gpt.py", "finetune_llama.py", "pretrain_prefix_lm.py",
                                    "finetune_t0.py", "finetune_t0_non_causal_decoder.py"};

// Flags of the bigscience fork's own megatron/arguments.py @8387ae17 that neither microsoft's fork
// nor Megatron-LM defines (so they say which fork runs): 372 --pad-vocab-size-to, 386, 390, 408,
// 576, 578 --pp-partition-method, and the data and logging flags of BLOOM's runs.
const char* const kBigScienceOnly[] = {"pad-vocab-size-to",
                                       "pp-partition-method",
                                       "embed-layernorm",
                                       "sync-tp-duplicated-parameters",
                                       "abort-on-unmet-fused-kernel-constraints",
                                       "kill-switch-path",
                                       "codecarbon-dir",
                                       "train-weighted-split-paths",
                                       "train-weighted-split-paths-path",
                                       "valid-weighted-split-paths",
                                       "valid-weighted-split-paths-path",
                                       "tokenizer-name-or-path",
                                       "reset-progress",
                                       "norm-target-loss",
                                       "loss-on-targets-only",
                                       "reweight-loss-based-on-position-frequency"};

std::string entry_of(const MegatronLaunch& launch) { return launch.script.substr(launch.script.rfind('/') + 1); }

// What says the launch runs the bigscience fork (its entry script or a flag), "" when nothing does.
std::string bigscience_sign(const MegatronLaunch& launch) {
  const std::string entry = entry_of(launch);
  if (flag_listed(kBigScienceEntries, entry)) return entry;
  // bigcode-project/Megatron-LM (StarCoder's fork) took --train/valid-weighted-split-paths-path from
  // BLOOM's fork but keeps Megatron-LM's own flags, which BLOOM's fork lacks (bigcode.cc).
  if (runs_bigcode_fork(launch)) return "";
  for (const auto& [name, flag] : launch.flags)
    if (flag_listed(kBigScienceOnly, name)) return "--" + name;
  // --glu-activation is also epfLLM/Megatron-LLM's, which never runs DeepSpeed; microsoft's fork
  // lacks it. absolute | rotary | alibi are this fork's --position-embedding-type values
  // (arguments.py:398-402); Megatron-LM's are learned_absolute, rope, ...
  if (launch.flags.count("deepspeed") && launch.flags.count("glu-activation")) return "--glu-activation";
  // epfLLM/Megatron-LLM spells the same absolute | rotary values (megatron/arguments.py:461@806a833) and
  // keeps Megatron-LM's --sequence_parallel, --recompute_granularity, --use_flash_attn, which BLOOM's
  // fork lacks: a flag only epfLLM defines says the launch is not BLOOM's fork.
  if (runs_epfllm_fork(launch)) return "";
  // alibaba/Megatron-LLaMA shares --tokenizer-name-or-path and keeps Megatron-LM's flags (megatron_llama.cc).
  if (runs_megatron_llama(launch)) return "";
  if (auto it = launch.flags.find("position-embedding-type"); it != launch.flags.end()) {
    for (const char* v : {"absolute", "rotary", "alibi"})
      if (it->second.value == v) return "--position-embedding-type " + it->second.value;
  }
  return "";
}

// --pp-partition-method (gpt_model.py:310-319@8387ae17; 'type:transformer' when absent) as DeepSpeed
// reads it (pipe/module.py:396-421@edaa722): 'type:REGEX' balances the specs whose class or function
// name the regex finds (case-insensitive, :322-340) over the stages. GPTModelPipe's specs
// (gpt_model.py:222-291) are _to_float16, EmbeddingPipe, a <lambda>, the ParallelTransformerLayerPipe
// layers, undo, LayerNorm, the tied EmbeddingPipe of the output and float16_to_fp32. Two embedding
// units and the layers, equal per stage, are Megatron-LM's account-for-embedding / account-for-loss
// split: the first and the last stage each hold one embedding in place of a layer.
core::Status read_partition_method(const MegatronFlags& f, PlanBuilder& b, const MegatronDegrees& d) {
  const std::string method = *f.string("pp-partition-method");
  const int line = f.line("pp-partition-method");
  std::string lower = method;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "uniform" || lower == "parameters") {
    b.unmodelled("--pp-partition-method " + method, line,
                 lower == "uniform" ? "every spec (casts and norms too) counted as a unit; priced as the even split "
                                      "of the transformer layers"
                                    : "stages balanced by parameter count; priced as the even split of the "
                                      "transformer layers");
    return core::Status::ok();
  }
  if (lower.rfind("type:", 0) != 0) {
    return b.error(line, "--pp-partition-method " + method + ": DeepSpeed's PipelineModule knows uniform, parameters "
                         "and type:REGEX and raises NotImplementedError (deepspeed/runtime/pipe/module.py:419-421)");
  }
  // The patterns BLOOM's scripts write are words joined by '|' (re.search of any of them, ignoring
  // case); only those are evaluated, as substring searches: no regex engine runs on a config's text.
  const std::string pattern = lower.substr(5);
  const bool words_only = !pattern.empty() && pattern.front() != '|' && pattern.back() != '|' &&
                          pattern.find("||") == std::string::npos &&
                          std::all_of(pattern.begin(), pattern.end(), [](char c) {
                            return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '|';
                          });
  if (!words_only) {
    b.unmodelled("--pp-partition-method " + method, line,
                 "a regex beyond words joined by '|', which planck does not evaluate; priced as the even split of "
                 "the transformer layers");
    return core::Status::ok();
  }
  const auto search = [&pattern](std::string name) {
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (std::size_t at = 0; at <= pattern.size();) {
      const std::size_t end = std::min(pattern.find('|', at), pattern.size());
      if (name.find(pattern.substr(at, end - at)) != std::string::npos) return true;
      at = end + 1;
    }
    return false;
  };
  const bool emb = search("EmbeddingPipe"), layer = search("ParallelTransformerLayerPipe");
  bool other = false;
  for (const char* n : {"_to_float16", "<lambda>", "undo", "LayerNorm", "float16_to_fp32"}) other = other || search(n);
  if (!emb && !layer && !other) {
    return b.error(line, "--pp-partition-method " + method + " matches none of GPTModelPipe's layers: DeepSpeed "
                         "raises \"found no valid layers to partition\" (deepspeed/runtime/pipe/module.py:340)");
  }
  PLANCK_IMPORT_TRY(layers, f.integer("num-layers"));
  if (layer && !emb && !other) {
    b.note("--pp-partition-method " + method + ": the transformer layers balanced over the stages, as the default");
    return core::Status::ok();
  }
  if (layer && emb && !other && layers && (*layers + 2) % d.pp == 0) {
    auto& par = b.plan()["parallelism"];
    par["account_for_embedding_in_pipeline_split"] = true;
    par["account_for_loss_in_pipeline_split"] = true;
    b.locate("/parallelism/account_for_embedding_in_pipeline_split", line);
    b.locate("/parallelism/account_for_loss_in_pipeline_split", line);
    b.note("--pp-partition-method " + method + ": " + str(*layers) + " layers + 2 embeddings = " +
           str(*layers + 2) + " units, " + str((*layers + 2) / d.pp) + " on each of pp " + str(d.pp) +
           " stages (DeepSpeed's partition_balanced); the first and last stage hold the input and the tied output "
           "embedding in place of a layer, as Megatron-LM's --account-for-embedding/loss-in-pipeline-split");
    return core::Status::ok();
  }
  b.unmodelled("--pp-partition-method " + method, line,
               "DeepSpeed balances the matching specs over pp " + str(d.pp) +
                   " stages unevenly; priced as the even split of the transformer layers");
  return core::Status::ok();
}

}  // namespace

bool builds_gpt_model_pipe(const MegatronLaunch& launch) {
  return launch.flags.count("deepspeed") && !launch.flags.count("no-pipeline-parallel") &&
         flag_listed(kPipeEntries, entry_of(launch));
}

bool runs_bigscience_fork(const MegatronLaunch& launch) { return !bigscience_sign(launch).empty(); }

void rename_bigscience_flags(DeepSpeedFork& fork, MegatronLaunch& launch, PlanBuilder& b) {
  b.note("a bigscience-workshop/Megatron-DeepSpeed launch (BLOOM's fork, " + bigscience_sign(launch) +
         "): flags checked against its megatron/arguments.py @8387ae1 and @a1d9317" +
         (launch.flags.count("deepspeed") ? "; --deepspeed: ZeRO and precision from its ds_config"
                                          : "; no --deepspeed, so Megatron's own data parallelism"));
  // _vocab_size_with_padding (megatron/tokenizer/tokenizer.py:72-82): --pad-vocab-size-to is the
  // vocabulary, as Megatron-LM's --padded-vocab-size.
  if (auto it = launch.flags.find("pad-vocab-size-to");
      it != launch.flags.end() && !launch.flags.count("padded-vocab-size")) {
    launch.flags["padded-vocab-size"] = it->second;
    fork.renamed.emplace_back("pad-vocab-size-to", "padded-vocab-size");
  }
  // PositionEmbeddingType absolute | rotary | alibi (arguments.py:398-402): a learned table only for
  // absolute (language_model.py:138), upstream's learned_absolute.
  if (auto it = launch.flags.find("position-embedding-type"); it != launch.flags.end()) {
    if (it->second.value == "absolute") it->second.value = "learned_absolute";
    if (it->second.value == "rotary") it->second.value = "rope";
  }
}

core::Status apply_bigscience(const MegatronFlags& f, PlanBuilder& b, const MegatronDegrees& d,
                              const MegatronLaunch& launch) {
  if (auto to = f.string("pad-vocab-size-to")) {
    PLANCK_IMPORT_TRY(multiple, f.positive("make-vocab-size-divisible-by", 128));
    PLANCK_IMPORT_TRY(padded, f.integer("pad-vocab-size-to"));
    if (padded && *padded % multiple != 0) {
      return b.error(f.line("pad-vocab-size-to"), "--pad-vocab-size-to " + *to + " is not divisible by " +
                                                      "--make-vocab-size-divisible-by " + str(multiple) +
                                                      ": the fork raises ValueError (tokenizer.py:79-80)");
    }
    b.note("--pad-vocab-size-to " + *to + ": the vocabulary, the tokenizer's padded to it (tokenizer.py:72-82)");
  }
  if (auto pos = f.string("position-embedding-type"); pos && (*pos == "alibi" || *pos == "rope")) {
    b.note("--position-embedding-type " + std::string(*pos == "rope" ? "rotary" : "alibi") +
           ": no position-embedding table (language_model.py:138); " +
           (*pos == "rope" ? "rotating q and k" : "ALiBi's bias on the attention scores (transformer.py:491)") +
           " is not priced, as planck prices attention the same either way");
  }
  if (f.has("pp-partition-method") && builds_gpt_model_pipe(launch) && d.pp > 1) return read_partition_method(f, b, d);
  return core::Status::ok();
}

}  // namespace planck::import
