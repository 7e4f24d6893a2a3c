#pragma once
// A JSON document that remembers where each value stood in its file.
//
// nlohmann-json 3.11 (Debian 12) reports no source positions, and every planck diagnostic must
// name the line and column of the value it is about. So planck parses JSON itself: a small
// recursive-descent parser (RFC 8259) that builds an nlohmann::json value and, beside it, an index
// from JSON pointer to the 1-based line/column (bytes) where that value starts.
// It also bounds nesting depth and rejects NUL bytes and invalid UTF-8 with a position, so hostile
// input is an error value, never a stack overflow.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

namespace planck::core {

struct SourcePos {
  int line = 0;    // 1-based; 0 = unknown
  int column = 0;  // 1-based, in bytes
};

struct JsonParseError {
  std::string message;  // what was wrong, e.g. "expected ',' or '}' after object member"
  SourcePos pos;
  // Valid JSON (RFC 8259 allows repeated names) that a plan refuses as ambiguous: a key given twice
  // in one object, whose value parsers choose differently (first or last wins).
  bool duplicate_key = false;
};

class JsonDoc {
 public:
  static constexpr int kMaxDepth = 512;

  // Parses `text`. On failure returns nullopt and fills `error`.
  static std::optional<JsonDoc> parse(std::string_view text, JsonParseError* error);

  const nlohmann::json& root() const { return root_; }
  nlohmann::json& root() { return root_; }

  // Position of the value at `pointer` ("" is the root; "/mesh/shape/2"). Falls back to the
  // nearest ancestor that has a position; {0,0} when nothing is known.
  SourcePos position(std::string_view pointer) const;
  // Position of the key of object member `pointer` (for "unknown key" diagnostics).
  SourcePos key_position(std::string_view pointer) const;

  void set_position(std::string pointer, SourcePos pos) { values_[std::move(pointer)] = pos; }
  void set_key_position(std::string pointer, SourcePos pos) { keys_[std::move(pointer)] = pos; }

 private:
  nlohmann::json root_;
  std::unordered_map<std::string, SourcePos> values_;
  std::unordered_map<std::string, SourcePos> keys_;
};

// Escapes one reference token for a JSON pointer (RFC 6901: '~' -> "~0", '/' -> "~1").
std::string json_pointer_escape(std::string_view token);

}  // namespace planck::core
