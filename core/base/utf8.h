#pragma once
// Text that must be valid UTF-8 (JSON, XML, logs read from other machines): every byte that does
// not start or continue a well-formed sequence (RFC 3629: no overlong forms, no surrogates,
// nothing past U+10FFFF) is replaced, so a Latin-1 host name or a path with raw bytes never
// makes a written document invalid.

#include <cstddef>
#include <string>
#include <string_view>

namespace planck::core {

// U+FFFD REPLACEMENT CHARACTER in UTF-8.
inline constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";

// Length of the well-formed UTF-8 sequence starting at s[i], or 0 when s[i] starts none.
std::size_t utf8_sequence_length(std::string_view s, std::size_t i);

// `s` with every invalid byte replaced by U+FFFD.
std::string valid_utf8(std::string_view s);

// `s` with every invalid byte written as the four characters \xHH (uppercase hex): the raw
// bytes of a non-UTF-8 file name kept readable beside its U+FFFD form.
std::string escape_invalid_utf8(std::string_view s);

// At most `max_bytes` of `text` for a message, cut on a UTF-8 boundary, with "... (N bytes)"
// after it when cut: errors quote the start of a bad value, never all of it.
std::string excerpt(std::string_view text, std::size_t max_bytes = 80);

}  // namespace planck::core
