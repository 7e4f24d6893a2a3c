#pragma once
// A linear pre-scan of TOML text, run before toml++ parses it: toml++ recurses once per part of a
// dotted key or table header, so a key of 35,000 parts (70 KB) or a [a.a....b] header of 50,000
// overflowed the stack (issue 34). Real torchtitan configs use two or three parts and arrays one
// or two deep.

#include <string>
#include <string_view>

#include "core/base/status.h"

namespace planck::import {

// The most parts of one dotted key or table header, and the deepest nesting of arrays and inline
// tables, planck reads in TOML (docs/files.md, "Limits").
inline constexpr int kMaxTomlKeyParts = 128;
inline constexpr int kMaxTomlNesting = 128;

// An error "PATH:LINE: ..." naming the limit and quoting the start of the line when a key or
// header has more than kMaxTomlKeyParts parts or arrays / inline tables nest deeper than
// kMaxTomlNesting; ok otherwise. Malformed text is left to toml++.
core::Status check_toml_limits(std::string_view text, const std::string& path);

}  // namespace planck::import
