#pragma once
// Which flags of a Megatron launch planck reads, and what it says of the others: unknown-key for a
// flag the framework (or the detected fork) never defined or an underscore spelling Megatron-LM
// refuses, setting-unmodelled for a known flag that looks parallel and is not read; and a Python
// wrapper whose flags are not Megatron's at all.

#include <optional>
#include <string>

#include "import/importer.h"
#include "import/megatron/args.h"
#include "import/megatron/deepspeed_fork.h"
#include "import/plan_builder.h"

namespace planck::import {

// A flag the importer reads into the plan (a commented-out one is hinted with --explain).
bool megatron_interprets(const std::string& name);

// The launch runs a Python wrapper that builds its own Megatron launch: most of its flags are no
// Megatron-LM (or detected fork) flag and none gives a model size. Unfollowed, or nullopt.
std::optional<Unfollowed> wrapper_launch(const MegatronLaunch& launch, const DeepSpeedFork& fork,
                                         const std::string& path);

// The launch is an RL trainer's entry script that extends Megatron-LM's argparse with its own
// flags and defaults (THUDM/slime's train.py / train_async.py). Unfollowed, or nullopt.
std::optional<Unfollowed> rl_trainer_launch(const MegatronLaunch& launch, const std::string& path);

// The launch is Hugging Face accelerate's (`accelerate launch [--config_file FILE] SCRIPT ...`): its
// layout is the accelerate config, not Megatron-LM flags. Unfollowed (naming FILE), or nullopt.
std::optional<Unfollowed> hf_accelerate_launch(const MegatronLaunch& launch, const std::string& path);

// unknown-key and setting-unmodelled for the launch's flags (docs/import.md "Megatron-LM").
void check_flags(const MegatronFlags& f, const DeepSpeedFork& fork, PlanBuilder& b);

}  // namespace planck::import
