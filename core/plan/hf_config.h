#pragma once
// A Hugging Face config.json (a JSON object with "model_type") read as a planck model: the
// fields that fix the shape (docs/plan-format.md "Hugging Face config.json"), and what of the
// config's layers the planck model prices as something else.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/status.h"

namespace planck::core {

// True when `v` is an object with a string "model_type" (the Hugging Face marker).
bool is_hf_config(const nlohmann::json& v);

// JSON text as Python's json module writes it: besides JSON, the bare tokens NaN, Infinity and
// -Infinity (Nemotron-H's "time_step_limit": [0.0, Infinity]), read as null. Discarded (see
// nlohmann's is_discarded) when the text is not that.
nlohmann::json parse_python_json(std::string_view text);

// Layers or blocks of the config that the planck model prices as something else (Gated DeltaNet
// linear attention, Mamba-2 mixers, sliding-window attention, an output gate, MTP layers, a vision
// encoder): `key` is the config key that declares them, `message` names them and what planck
// assumed (the rule model-unmodelled-layers).
struct HfUnmodelled {
  std::string key;
  std::string message;
};

struct HfModel {
  nlohmann::json model;  // the keys of a plan's "model"
  std::vector<HfUnmodelled> unmodelled;
};

// The planck model for a Hugging Face config; an error naming the missing field when the shape
// cannot be determined. Multimodal configs read their "text_config".
Result<HfModel> read_hf_config(const nlohmann::json& config);
// read_hf_config's model alone.
Result<nlohmann::json> model_from_hf_config(const nlohmann::json& config);

}  // namespace planck::core
