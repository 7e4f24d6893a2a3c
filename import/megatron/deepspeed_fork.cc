// Megatron-DeepSpeed (microsoft/Megatron-DeepSpeed @f4157be) launches: detection, the fork's flag
// list, and its activation checkpointing and unpriced flags. ZeRO from the ds_config is
// deepspeed_zero.cc, DeepSpeed-MoE deepspeed_moe.cc.

#include "import/megatron/deepspeed_fork.h"

#include <algorithm>
#include <iterator>
#include <set>

#include "import/megatron/bigscience_flags.h"
#include "import/megatron/deepspeed_flags.h"
#include "import/megatron/flags.h"

namespace planck::import {

core::Status read_deepspeed_zero(const MegatronFlags& f, PlanBuilder& b, const MegatronDegrees& d,
                                 const MegatronLaunch& launch, const ShellScript& script, std::string_view text);
core::Status read_deepspeed_moe(const DeepSpeedFork& fork, const MegatronFlags& f, PlanBuilder& b,
                                const MegatronDegrees& d);

namespace {

// deepspeed/__init__.py _add_core_arguments (deepspeedai/DeepSpeed@edaa722 :285-297), added by the
// fork's parse_args (megatron/arguments.py:54 deepspeed.add_config_arguments).
const char* const kDeepSpeedCoreFlags[] = {"deepspeed", "deepspeed-config", "deepscale", "deepscale-config",
                                           "deepspeed-mpi"};

// Flags of the fork that change memory or time and that planck does not price, with what it
// assumes instead (the fork's megatron/arguments.py @f4157be defines each), and whether the flag
// saves GPU memory the price keeps (the peak is then an upper bound: PlanBuilder::unpriced_saving).
struct Unpriced {
  const char* name;
  const char* assumed;
  bool saves_memory;
};
const Unpriced kUnpriced[] = {
    {"partition-activations", "checkpointed activations priced whole on each tp rank, not partitioned over tp",
     true},
    {"checkpoint-in-cpu", "checkpointed activations priced in GPU memory, not moved to the host", true},
    {"contigious-checkpointing", "the contiguous checkpoint buffer is not priced", false},
    {"memory-centric-tiled-linear", "linear layers priced untiled (deepspeed.zero.TiledLinear not modelled)", true},
    {"split-transformers", "each layer checkpointed whole, not in two halves", false},
    {"scattered-embeddings", "embedding activations priced unscattered", true},
    {"use-tutel", "the MoE dispatch priced as DeepSpeed's own all-to-all, not Tutel's kernels", false},
    {"enable-zbh1-pipeline", "the pipeline priced with DeepSpeed's 1F1B schedule, not zero-bubble H1", false},
    {"ds-sequence-parallel-fpdt", "FPDT's chunked attention is not priced", true},
    {"ds-sequence-parallel-fpdt-offloading", "FPDT's host offload of attention chunks is not priced", true},
    {"random-ltd", "every layer priced on every token (random layerwise token dropping not modelled)", true},
    {"kd", "the teacher model of knowledge distillation is not priced (its weights and forward)", false},
    {"mos", "the teacher model of mixture-of-students distillation is not priced", false},
    {"use-pin-memory", "ZeRO-3 parameters priced in GPU memory", false},
    {"remote-device", "ZeRO-3 parameters priced in GPU memory (offload_param in the ds_config is read)", true},
};

// Read by this file or its siblings (so the generic checks leave them alone).
const char* const kRead[] = {"deepspeed",
                             "deepspeed-config",
                             "deepscale",
                             "deepscale-config",
                             "zero-stage",
                             "no-pipeline-parallel",
                             "deepspeed-activation-checkpointing",
                             "checkpoint-activations",
                             "checkpoint-num-layers",
                             "num-experts",
                             "moe-expert-parallel-size",
                             "topk",
                             "expert-interval",
                             "mlp-type",
                             "moe-train-capacity-factor",
                             "moe-eval-capacity-factor",
                             "moe-min-capacity",
                             "disable-moe-token-dropping",
                             "enable-expert-tensor-parallelism",
                             "ds-sequence-parallel-size",
                             "force-ds-sequence-parallel",
                             "cpu-optimizer",
                             "create-moe-param-group"};

std::string dashed(std::string s) {
  for (char& c : s) c = c == '_' ? '-' : c;
  return s;
}

// microsoft's fork spells grouped-query attention --num-key-value-heads N (arguments.py:442-448
// @f4157be: default the attention heads, which N must divide; transformer.py:566-572: K and V
// projections of kv_channels x N, N split over tp): upstream's --group-query-attention
// --num-query-groups N, read as those.
void rename_gqa(MegatronLaunch& launch, DeepSpeedFork& fork) {
  auto it = launch.flags.find("num-key-value-heads");
  if (fork.bigscience || it == launch.flags.end() || launch.flags.count("num-query-groups")) return;
  MegatronFlag on = it->second;
  launch.flags["num-query-groups"] = it->second;
  on.value.clear();
  on.has_value = false;
  launch.flags["group-query-attention"] = on;
  fork.renamed.emplace_back("num-key-value-heads", "num-query-groups");
  fork.renamed.emplace_back("num-key-value-heads", "group-query-attention");
}

}  // namespace

const std::vector<std::string>& deepspeed_fork_flags(const DeepSpeedFork& fork) {
  // Both forks' parse_args add DeepSpeed's core arguments (bigscience's arguments.py:53 too).
  auto sorted = [](const auto& generated) {
    std::set<std::string> s;
    for (const char* n : generated) s.insert(dashed(n));
    for (const char* n : kDeepSpeedCoreFlags) s.insert(n);
    return std::vector<std::string>(s.begin(), s.end());
  };
  static const std::vector<std::string> microsoft = sorted(kMegatronDeepSpeedFlags);
  static const std::vector<std::string> bigscience = sorted(kBigScienceFlags);
  if (fork.epfllm) return epfllm_flags();
  return fork.bigscience ? bigscience : microsoft;
}

bool deepspeed_fork_knows(const DeepSpeedFork& fork, const std::string& name) {
  const auto& v = deepspeed_fork_flags(fork);
  return std::binary_search(v.begin(), v.end(), name);
}

bool deepspeed_fork_reads(const DeepSpeedFork& fork, const std::string& name) {
  for (const auto& [from, to] : fork.renamed)
    if (name == to) return true;
  // A flag of the other fork is that fork's: this one's argparse rejects it (unknown-key).
  if (!deepspeed_fork_knows(fork, name)) return false;
  for (const char* n : kRead)
    if (name == n) return true;
  for (const Unpriced& u : kUnpriced)
    if (name == u.name) return true;
  return false;
}

DeepSpeedFork detect_deepspeed_fork(MegatronLaunch& launch, PlanBuilder& b) {
  DeepSpeedFork fork;
  // epfLLM never runs the DeepSpeed engine (its argparse has no --deepspeed).
  if (runs_epfllm_fork(launch)) {
    fork.epfllm = fork.flags = true;
    rename_epfllm_flags(fork, launch, b);
    return fork;
  }
  // Megatron-LLaMA never runs the DeepSpeed engine either; its flags are Megatron-LM's and its own.
  if (runs_megatron_llama(launch)) {
    fork.megatron_llama = true;
    rename_megatron_llama_flags(fork, launch, b);
    return fork;
  }
  // bigcode's fork has no --deepspeed either (megatron/arguments.py @7c325cd); its flags are read in
  // megatron.cc (rename_bigcode_flags), which can refuse the launch.
  if (runs_bigcode_fork(launch)) {
    fork.bigcode = true;
    return fork;
  }
  fork.bigscience = runs_bigscience_fork(launch);
  if (fork.bigscience) {
    fork.flags = true;
    rename_bigscience_flags(fork, launch, b);
  }
  if (!launch.flags.count("deepspeed") && !fork.bigscience) {
    // The fork run without its engine (examples_deepspeed/rebase/*.sh): Megatron's own DDP, the
    // fork's argparse. A flag only the fork defines says so.
    static const std::set<std::string> upstream(std::begin(kMegatronFlags), std::end(kMegatronFlags));
    for (const auto& [name, flag] : launch.flags) {
      if (deepspeed_fork_knows(fork, name) && !upstream.count(name) && deepspeed_fork_reads(fork, name)) {
        fork.flags = true;
        b.note("--" + name +
               " is a microsoft/Megatron-DeepSpeed flag: flags checked against the fork's "
               "megatron/arguments.py @f4157be; no --deepspeed, so Megatron's own data parallelism");
        break;
      }
    }
    if (fork.flags) rename_gqa(launch, fork);
    return fork;
  }
  if (!launch.flags.count("deepspeed")) return fork;
  fork.on = fork.flags = true;
  if (!fork.bigscience) {  // bigscience's is said by rename_bigscience_flags
    b.note(
        "--deepspeed: a microsoft/Megatron-DeepSpeed launch (the fork of Megatron-LM trained by the DeepSpeed "
        "engine); flags checked against the fork's megatron/arguments.py @f4157be, ZeRO and precision from its "
        "ds_config (megatron/training.py:606-625 passes config=args.deepspeed_config_dict)");
  }
  // --num-experts is nargs='+' with experts every --expert-interval (default 2) layers, and
  // --checkpoint-activations is the fork's live recompute switch: both differ from upstream.
  for (const char* name : {"num-experts", "checkpoint-activations"}) {
    auto it = launch.flags.find(name);
    if (it == launch.flags.end()) continue;
    fork.taken[name] = it->second;
    launch.flags.erase(it);
  }
  // DeepSpeed-Ulysses splits the sequence over --ds-sequence-parallel-size ranks taken from dp
  // (arguments.py:98-108: dp = world / (pp x tp x sp)): read as the cp dim, which does the same
  // to dp and to each rank's activations.
  if (auto it = launch.flags.find("ds-sequence-parallel-size");
      it != launch.flags.end() && it->second.value != "1" && !launch.flags.count("context-parallel-size")) {
    MegatronFlag cp = it->second;
    launch.flags["context-parallel-size"] = cp;
    fork.renamed.emplace_back("ds-sequence-parallel-size", "context-parallel-size");
  }
  rename_gqa(launch, fork);
  return fork;
}

namespace {

// The fork's recompute (megatron/model/transformer.py:2082-2090): --checkpoint-activations first,
// then --recompute-granularity full, each through _checkpointed_forward; GPTModelPipe's
// activation_checkpoint_interval is --checkpoint-num-layers (gpt_model.py:446-452).
// --deepspeed-activation-checkpointing picks DeepSpeed's checkpoint function (transformer.py:1910,
// initialize.py:266) and changes nothing on its own.
void read_recompute(const DeepSpeedFork& fork, const MegatronFlags& f, PlanBuilder& b) {
  auto& t = b.plan()["training"];
  auto ca = fork.taken.find("checkpoint-activations");
  if (ca != fork.taken.end()) {
    t["activation_checkpointing"] = "full";
    t.erase("recompute_num_layers");
    b.locate("/training/activation_checkpointing", ca->second.line);
    b.note(
        "--checkpoint-activations: every layer's input kept and the layer recomputed (the fork's "
        "transformer.py:2082 takes it before --recompute-granularity)" +
        std::string(f.has("deepspeed-activation-checkpointing") ? ", through deepspeed.checkpointing" : ""));
    if (auto n = f.string("checkpoint-num-layers"); n && *n != "1")
      b.note("--checkpoint-num-layers " + *n + ": planck keeps each layer's input, not one per group of " + *n);
  } else if (f.has("deepspeed-activation-checkpointing")) {
    b.note(
        "--deepspeed-activation-checkpointing without --checkpoint-activations: it only selects DeepSpeed's "
        "checkpoint function for the layers recomputed (transformer.py:1910)" +
        std::string(t.value("activation_checkpointing", std::string("none")) != "none" ? "" : "; none are"));
  }
}

}  // namespace

core::Status apply_deepspeed_fork(const DeepSpeedFork& fork, const MegatronFlags& f, PlanBuilder& b,
                                  const MegatronDegrees& d, const MegatronLaunch& launch, const ShellScript& script,
                                  std::string_view text) {
  if (!fork.on) return fork.bigscience ? apply_bigscience(f, b, d, launch) : core::Status::ok();
  if (f.has("no-pipeline-parallel") && d.pp > 1) {
    return b.error(f.line("no-pipeline-parallel"), "--no-pipeline-parallel with --pipeline-model-parallel-size " +
                                                       str(d.pp) + ": the fork asserts pp == 1 (arguments.py:94-96)");
  }
  for (const auto& [r, to] : fork.renamed) {
    if (r != "ds-sequence-parallel-size") continue;  // bigscience's renames are said by bigscience.cc
    b.note("--" + r + " " + f.string(r).value_or("") +
           " (DeepSpeed-Ulysses): the sequence split over that many ranks taken from dp, read as the cp dim");
    b.unmodelled("--" + r, f.line(r),
                 "priced as context parallelism (ring attention's send/receive), not "
                 "Ulysses' all-to-alls of q, k, v and the output");
  }
  if (auto st = read_deepspeed_zero(f, b, d, launch, script, text); !st) return st;
  if (auto st = read_deepspeed_moe(fork, f, b, d); !st) return st;
  if (fork.bigscience) {
    if (auto st = apply_bigscience(f, b, d, launch); !st) return st;
  }
  read_recompute(fork, f, b);
  for (const Unpriced& u : kUnpriced) {
    if (!f.has(u.name)) continue;
    if (std::string(u.name) == "remote-device" && f.string(u.name).value_or("none") == "none") continue;
    if (u.saves_memory)
      b.unpriced_saving("--" + std::string(u.name), f.line(u.name), u.assumed);
    else
      b.unmodelled("--" + std::string(u.name), f.line(u.name), u.assumed);
  }
  return core::Status::ok();
}

}  // namespace planck::import
