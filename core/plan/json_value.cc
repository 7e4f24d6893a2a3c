#include "core/plan/json_value.h"

#include "core/base/utf8.h"

namespace planck::core {

std::string json_excerpt(const nlohmann::json& v, std::size_t max_bytes) {
  return excerpt(v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), max_bytes);
}

}  // namespace planck::core
