#pragma once
// Cheap linear passes over JSON text, run before a parser (or a recursive copy of what it built)
// sees the input: nlohmann::json parses deep input iteratively but copies, compares and dumps it
// recursively, so 100,000 nested arrays overflowed the stack after a successful parse (issue 34).

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/base/status.h"

namespace planck::core {

// The deepest nesting of arrays and objects planck reads in any JSON input (as JsonDoc).
inline constexpr int kMaxJsonDepth = 512;

// An error "SOURCE:LINE:COLUMN: arrays and objects nested more than 512 deep ..." at the bracket
// that first goes past `max_depth` ('[' and '{' outside strings); ok when none does. Malformed
// text is left to the parser.
Status check_json_nesting(std::string_view text, const std::string& source, int max_depth = kMaxJsonDepth);

// The 1-based line of each member key of the object that is the value of the key starting at
// `key_at` (the offset of its opening quote), in one pass. Keys are the raw text between the
// quotes; the lines of keys that hold escapes are not indexed.
std::unordered_map<std::string, int> member_key_lines(std::string_view text, std::size_t key_at);

// One member of a JSON object found by top_level_members: where its key's opening quote is and
// the text of its value.
struct JsonMember {
  std::size_t key_at = 0;
  std::string_view value;
};

// The members of the object that is the whole of `text`, by raw key text (escaped keys as
// written), in one pass that skips over every value without building it; empty when `text` is
// not an object. Use on text a parser has accepted.
std::unordered_map<std::string, JsonMember> top_level_members(std::string_view text);

}  // namespace planck::core
