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

// bash's arithmetic over integers and variable names (unset = 0, as bash): + - * / % **,
// comparisons, ! && || ?: and parentheses; nullopt on a syntax error, overflow, division by zero,
// an operator planck does not evaluate, or an assignment (which changes nothing here).
std::optional<std::int64_t> shell_arith(std::string_view expr,
                                        const std::map<std::string, std::vector<ShellField>>& vars);
// The same with assignments (= += -= *= /= %=, ++ and -- on a name) made in `vars`, written as of
// `line`: `(( i++ ))`, `for ((i=0; i<N; i++))`, `$(( n += 2 ))`. Nothing changes when it fails.
std::optional<std::int64_t> shell_arith_assign(std::string_view expr,
                                               std::map<std::string, std::vector<ShellField>>& vars, int line);

}  // namespace planck::import
