#pragma once
// The numeric flag checks every command uses: one validator for whole numbers and one for real
// numbers, so no option accepts NaN, an infinity or a value out of range, and every refusal says
// what was expected in words ("--threshold nan: 'nan' is not percent, a finite number from 0 to
// 1e+06"). A NaN once switched off diff's CI gate (issue 34): every comparison with NaN is false.

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace planck::cli {

// A whole number from `lo` to `hi`: "--gpus-per-node 0: must be a whole number from 1 to
// 2147483647". Use as ->check(whole_number(1, kMax)).
CLI::Validator whole_number(std::int64_t lo, std::int64_t hi);
// A finite real number from `lo` to `hi` ("nan", "inf", "1e999" and trailing text refused);
// `unit` names it in the message ("percent", "seconds").
CLI::Validator finite_number(double lo, double hi, const std::string& unit);
// A finite number of seconds from `lo` to `hi`.
CLI::Validator finite_seconds(double lo, double hi);

// The parse behind finite_number, for values inside other flags (--inject perturb:F): the
// number when `text` is all of a finite number within [lo, hi], else nullopt.
std::optional<double> parse_finite(const std::string& text, double lo, double hi);

}  // namespace planck::cli
