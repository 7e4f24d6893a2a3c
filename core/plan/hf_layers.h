#pragma once
// The layer kinds of a Hugging Face config that a planck model (every layer attention + MLP)
// does not have: hybrid token mixers (Qwen3-Next / Qwen3.5 Gated DeltaNet, Nemotron-H Mamba-2),
// sliding-window attention, Qwen's attention output gate, multi-token-prediction layers and a
// vision encoder. Each is mapped onto the planck model as the message says, and said.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/status.h"
#include "core/plan/hf_config.h"

namespace planck::core {

// `config` is the whole config.json, `c` the text model's part of it (text_config or config),
// `m` the planck model read so far (hf_config.cc), which a Nemotron-H block pattern rewrites.
Status read_hf_layers(const nlohmann::json& config, const nlohmann::json& c, const std::string& type,
                      nlohmann::json& m, std::vector<HfUnmodelled>& unmodelled);

// Parameters of one Gated DeltaNet token mixer (transformers' Qwen3NextGatedDeltaNet: in_proj_qkvz,
// in_proj_ba, the depthwise conv1d, dt_bias, A_log, the gated RMSNorm, out_proj) and of one
// Mamba-2 mixer (NemotronHMamba2Mixer: in_proj, conv1d, dt_bias, A_log, D, the gated RMSNorm,
// out_proj), from the config's linear_* / mamba_* keys.
double gated_deltanet_params(const nlohmann::json& c);
double mamba2_params(const nlohmann::json& c);

}  // namespace planck::core
