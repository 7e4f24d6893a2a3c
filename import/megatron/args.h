#pragma once
// Megatron-LM command lines: finding the `pretrain_*.py` launch in an interpreted script (or
// taking a plain args file), and typed access to its argparse-style flags with their lines.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "import/plan_builder.h"
#include "import/formats/shell_script.h"

namespace planck::import {

struct MegatronFlag {
  std::string value;
  bool has_value = false;
  int line = 0;
  std::string written;  // the name as the script spells it ("tensor_model_parallel_size"); keys are dashed
};

struct MegatronLaunch {
  std::map<std::string, MegatronFlag> flags;     // argparse semantics: the last occurrence wins
  std::map<std::string, MegatronFlag> launcher;  // torchrun flags before the script (--nnodes ...)
  std::vector<ShellField> before;                // every word before the script (mpirun -np N ...)
  std::string script;                            // "pretrain_gpt.py", or "" for an args file
  int line = 0;
  std::vector<int> earlier;  // lines of other runs of the same script (a loop over configs): not read
};

// The cluster the launch states (world.cc): torchrun's --nproc_per_node / --nnodes, mpirun's -np /
// --npernode, the script's GPUS_PER_NODE / NNODES / WORLD_SIZE, else its #SBATCH lines.
ConfigWorld config_world(const MegatronLaunch& launch, const ShellScript& script, std::string_view text);

// The first variable the script sets that only ROCm reads (HSA_*, HIP_*, RCCL_*, NVTE_CK_*, ...),
// with the line it is set at (0 = unknown): the launch runs on AMD Instinct GPUs.
std::optional<ShellField> rocm_variable(const ShellScript& script);

// The launch command of `script` (the last one naming a .py file), else every command made only
// of --flags (an args file). Error when neither exists.
core::Result<MegatronLaunch> find_megatron_launch(const ShellScript& script, const PlanBuilder& b);

// A flag that reached the launch through a string (`bash -c "${CMD}"`, a sourced file) carries
// the line of the command that ran it; when the script writes the flag itself on another line
// (an array element, a continuation line), that line is where the setting is, for diagnostics.
void relocate_flags(MegatronLaunch& launch, std::string_view script_text);

class MegatronFlags {
 public:
  MegatronFlags(const MegatronLaunch& launch, PlanBuilder& b) : launch_(launch), b_(b) {}

  bool has(const std::string& name) const { return launch_.flags.count(name) > 0; }
  int line(const std::string& name) const;
  // The line of the launch command (0 for an args file).
  int launch_line() const { return launch_.line; }
  std::optional<std::string> string(const std::string& name) const;
  // Every value of an nargs='+' flag (empty when absent or bare).
  std::vector<std::string> strings(const std::string& name) const;
  // An integer flag (absent: nullopt); a missing or non-integer value is an error naming the line.
  core::Result<std::optional<std::int64_t>> integer(const std::string& name) const;
  // As integer(), and >= 1 (a parallel size or a batch).
  core::Result<std::int64_t> positive(const std::string& name, std::int64_t dflt) const;
  const std::map<std::string, MegatronFlag>& all() const { return launch_.flags; }
  // The launched entry script as written ("pretrain_gpt.py", "examples/multimodal/train.py"; ""
  // for an args file).
  const std::string& script() const { return launch_.script; }

 private:
  const MegatronLaunch& launch_;
  PlanBuilder& b_;
};

// Parallel sizes after Megatron's own inference; dp is -1 when the world does not divide.
struct MegatronDegrees {
  std::int64_t tp = 1, pp = 1, cp = 1, ep = 1, etp = 1, dp = -1, instances = 1;
  // The mesh's ep dim: the part of Megatron's expert-parallel group taken from dp, ep / (cp x
  // tp/etp) (docs/plan-format.md "Mixture of experts").
  std::int64_t mesh_ep = 1;
};

// Model flags -> "model", batch / precision / recompute / virtual-pipeline flags -> "training"
// and the parallelism's pipeline keys (model.cc).
core::Status megatron_model_and_training(const MegatronFlags& f, PlanBuilder& b, const MegatronDegrees& d);
// The model's flags beyond its shape (layers.cc): MLA, router groups, the MoE layer
// pattern, normalization, learned positions; MTP and sliding windows said.
core::Status read_model_details(const MegatronFlags& f, PlanBuilder& b, core::ModelSpec& m);
// What planck prices as something else, with or without a model: MTP layers, sliding-window
// attention, the shared experts' overlap (layers.cc).
core::Status say_unpriced_layers(const MegatronFlags& f, PlanBuilder& b);

// yuan.cc: IEIT-Yuan/Yuan-2.0's --pipeline-model-parallel-method block with --pipeline-model-parallel-blocks
// (layers per stage) added to the launch as the --pipeline-model-parallel-layout that means the same;
// an error quoting the fork's assertion when the list does not fit the layers or pp.
core::Status read_yuan_pipeline_blocks(MegatronLaunch& launch, PlanBuilder& b);

// --pipeline-model-parallel-layout's chunks per rank (stages / pp), or nullopt without it
// (moe.cc).
core::Result<std::optional<std::int64_t>> megatron_layout_chunks(const MegatronFlags& f, PlanBuilder& b,
                                                                 const MegatronDegrees& d);
// Megatron's start-up check that the layers (with the embedding / loss under the account-for
// flags) divide over pp when no uneven split or layout is given: an error at --num-layers (moe.cc;
// megatron/training/arguments.py:984-998@d98e8a6, transformer_block.py get_num_layers_to_build).
core::Status megatron_layers_divide(const MegatronFlags& f, PlanBuilder& b, const MegatronDegrees& d,
                                    std::optional<std::int64_t> layers);
// The pipeline-split and MoE token-dispatcher flags -> parallelism (moe.cc).
core::Status megatron_split_and_dispatch(const MegatronFlags& f, PlanBuilder& b);
// CUDA graphs, FP8 weight gathers, multi-token prediction and the attention kernel -> training
// `t` and parallelism (runtime.cc).
void megatron_runtime_flags(const MegatronFlags& f, PlanBuilder& b, nlohmann::ordered_json& t);
// --bf16 / --fp16 and the gradients' dtype -> training.param_dtype / reduce_dtype; returns the
// parameters' dtype. A dtype Megatron refuses at start-up is an error (precision.cc).
core::Result<std::string> read_precision(const MegatronFlags& f, PlanBuilder& b, nlohmann::ordered_json& t);
// --optimizer, the precision-aware optimizer's dtypes and --optimizer-cpu-offload -> training
// (precision.cc).
void read_optimizer(const MegatronFlags& f, PlanBuilder& b, nlohmann::ordered_json& t);
// --freeze-all-layers / --freeze-LM -> training.frozen; a vision encoder said (runtime.cc).
void megatron_frozen_flags(const MegatronFlags& f, PlanBuilder& b, nlohmann::ordered_json& t);

}  // namespace planck::import
