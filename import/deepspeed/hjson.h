#pragma once
// DeepSpeed reads a config file with hjson (deepspeed/runtime/config.py:699 @edaa722,
// `hjson.load(open(config))`), so a file that is JSON plus comments and trailing commas runs.
// planck keeps its own positioned JSON parser and blanks those constructs out first, byte for
// byte, so every line and column it reports is still the file's.

#include <string>
#include <string_view>

#include "core/plan/json_doc.h"

namespace planck::import {

struct HjsonStripped {
  std::string text;         // the same length as the input, comments and trailing commas blanked
  core::SourcePos error;    // line 0: none; else where an unterminated /* comment starts
};

// `#` and `//` comments to the end of the line, `/* ... */` comments (newlines kept), and a comma
// followed only by whitespace or comments before `}` or `]` (hjson-py decoder.py JSONObject /
// JSONArray skip it), outside double-quoted strings. Hjson's quoteless strings, optional commas
// and ''' strings are not read: such a file stays a JSON error at its position.
HjsonStripped strip_hjson(std::string_view text);

}  // namespace planck::import
