#pragma once
// Megatron-LM's pipeline split (docs/plan-format.md "Pipeline split"): which transformer layers,
// and where the embedding and the loss, each of the pp x v pipeline stages holds when a plan sets
// parallelism.account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split,
// first_stage_layers / last_stage_layers or pipeline_layout. The rules and their refusals are
// Megatron-LM's (NVIDIA/Megatron-LM@d98e8a64dd):
//   - megatron/core/transformer/transformer_config.py:2229-2259 (the options exclude each other),
//     :2294-2368 (uneven first / last stage), :2370-2405 (embedding / loss counted as layers);
//   - megatron/core/transformer/transformer_block.py:95-202 get_num_layers_to_build;
//   - megatron/core/transformer/pipeline_parallel_layer_layout.py (layout strings: parse_str_to_list
//     :284-322, the stage order :40-80, validate_layer_layout :86-150).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/plan/plan.h"

namespace planck::core {

struct PipelineSplit {
  std::vector<std::int64_t> layers;  // transformer layers of each stage, model order (stage = chunk x pp + rank)
  std::int64_t embedding_stage = 0;  // the stage that holds the embedding
  std::int64_t loss_stage = 0;       // the stage that holds the output head and the loss
  std::int64_t mtp_layers = 0;       // 'm' entries of a layout (multi-token prediction)
  std::int64_t mtp_stage = -1;       // the stage holding them (-1: none in the layout)
  std::int64_t virtual_stages = 1;   // chunks per rank (a layout implies it)
};

// Multi-token prediction layers the plan trains: training.mtp_layers, else the 'm' entries of its
// pipeline_layout (Megatron asserts the two agree; verify's layers-indivisible reports a mismatch).
std::int64_t trained_mtp_layers(const Plan& plan);

// True when the plan sets any of Megatron's split options.
bool has_megatron_split(const Parallelism& p);

// The split of `layers` transformer layers over pp ranks x v chunks as Megatron builds it; an
// error Status quoting the check Megatron fails. v is parallelism.virtual_stages (1: none).
Result<PipelineSplit> megatron_split(const Parallelism& p, std::int64_t layers, std::int64_t pp, std::int64_t v);

// A --pipeline-model-parallel-layout string unrolled as Megatron's parse_str_to_list does
// (commas dropped, "(...)*n" then "x*n" expanded once each, left to right): one string of layer
// characters (E embedding, L loss, t transformer layer, m MTP layer) per stage.
Result<std::vector<std::string>> parse_pipeline_layout(const std::string& layout);

}  // namespace planck::core
