#pragma once
// Reads a plan's "training" object into plan.training; schema errors go through the reader.

#include <cstdint>

#include <nlohmann/json.hpp>

#include "core/plan/plan.h"
#include "core/plan/schema_reader.h"

namespace planck::core {

inline constexpr std::int64_t kMaxCount = std::int64_t{1} << 40;  // batches, sequence lengths

void load_training(SchemaReader& r, const nlohmann::json& v, Plan& plan);

}  // namespace planck::core
