#pragma once
// GPU and model presets (docs/plan-format.md; figures and sources in docs/sources/simulator.md §5-6).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/plan/plan.h"

namespace planck::core {

std::optional<GpuSpec> gpu_preset(std::string_view name);
// A Blackwell preset (b200, gb200, b300, gb300): MX tensor cores (MXFP8).
bool blackwell(const GpuSpec& gpu);
// The AMD Instinct presets (mi300x, mi325x, mi355x): no published run of them is fitted.
bool amd_instinct(const GpuSpec& gpu);
// MX (block-scaled) FP8 tensor cores: Blackwell, and CDNA4's MI355X.
bool mx_tensor_cores(const GpuSpec& gpu);
// The GPUs one rack's NVLink reaches for a rack-scale preset (gb200, gb300: NVL72, 72); 0 for the
// others, whose NVLink ends at the node.
std::int64_t rack_nvlink_gpus(const GpuSpec& gpu);
std::optional<ModelSpec> model_preset(std::string_view name);
// The model preset with exactly these layers, hidden size, heads and KV heads (an importer whose
// config leaves the vocabulary to a tokenizer file takes the preset's), or nullopt.
std::optional<ModelSpec> model_preset_by_shape(std::int64_t layers, std::int64_t hidden, std::int64_t heads,
                                               std::int64_t kv_heads);
std::vector<std::string> gpu_preset_names();
std::vector<std::string> model_preset_names();

// Parameter counts derived from the shape (untied embeddings unless tied_embeddings, no biases,
// RMSNorm). Dense: attention + MLP per layer plus embedding and head.
struct ParamCounts {
  double total = 0;          // every parameter
  double per_layer_dense = 0;   // attention + dense MLP + norms of one dense layer
  double per_layer_moe = 0;     // attention + experts + router + norms of one MoE layer
  double expert = 0;            // one routed expert's MLP
  double embedding = 0;         // input embedding
  double head = 0;              // output projection (0 when tied)
  double attention = 0;         // one layer's attention
  double active = 0;            // parameters used per token
};
ParamCounts param_counts(const ModelSpec& m);

}  // namespace planck::core
