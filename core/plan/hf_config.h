#pragma once
// A Hugging Face config.json (a JSON object with "model_type") read as a planck model: the
// fields that fix the shape (docs/plan-format.md "Hugging Face config.json").

#include <string>

#include <nlohmann/json.hpp>

#include "core/base/status.h"

namespace planck::core {

// True when `v` is an object with a string "model_type" (the Hugging Face marker).
bool is_hf_config(const nlohmann::json& v);

// The planck model object (the keys of a plan's "model") for a Hugging Face config; an error
// naming the missing field when the shape cannot be determined. Multimodal configs read their
// "text_config".
Result<nlohmann::json> model_from_hf_config(const nlohmann::json& config);

}  // namespace planck::core
