#pragma once
// Integers in Megatron launch scripts: parsing a value, and bash's $(( )) arithmetic.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "import/formats/shell_script.h"

namespace planck::import {

// The integer in `s` (blanks around it allowed), or nullopt.
std::optional<std::int64_t> parse_shell_int(std::string_view s);

// + - * / % and parentheses over integers and variable names (unset = 0, as bash); nullopt on a
// syntax error, overflow or division by zero.
std::optional<std::int64_t> shell_arith(std::string_view expr,
                                        const std::map<std::string, std::vector<ShellField>>& vars);

}  // namespace planck::import
