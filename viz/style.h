#pragma once
// Colours, line styles and text helpers shared by every view, so one look means one thing in
// all diagrams.

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/format.h"

namespace planck::viz {

// Fill colour of group g: ColorBrewer "Set3" (12 pastel classes, colorbrewer2.org), repeating
// every kGroupColours groups (the legend says so when it happens).
inline constexpr int kGroupColours = 12;
const char* group_fill(std::int64_t group);

// Edge colour of the k-th dim set in a comm view with several sets: ColorBrewer "Dark2".
const char* set_colour(int set_index);

// Link classes: a hop between two ranks of one node (NVLink / PCIe) or across nodes (network).
inline constexpr const char* kIntraColour = "#1f78b4";
inline constexpr const char* kCrossColour = "#e31a1c";
inline constexpr const char* kIntraStyle = "solid";
inline constexpr const char* kCrossStyle = "dashed";
inline constexpr const char* kIntraWidth = "1.5";
inline constexpr const char* kCrossWidth = "3";

// Observed-vs-expected marks.
inline constexpr const char* kMatchedColour = "#33a02c";
inline constexpr const char* kMissingColour = "#808080";
inline constexpr const char* kUnexpectedColour = "#e31a1c";
inline constexpr const char* kMatchedFill = "#ccebc5";
inline constexpr const char* kMissingFill = "#fbb4ae";
inline constexpr const char* kNeutralFill = "#ffffff";

inline constexpr const char* kFont = "DejaVu Sans";

// "r3"; "node1"; the ids every view uses.
std::string rank_id(std::int64_t rank);
std::string node_id(std::int64_t node);

// Bytes with decimal units: the one formatter (core/base/format.h).
using core::format_bytes;

// A compact rank list: runs of step 1 as "r0–r7", otherwise listed; long lists elided
// ("r0 r8 r16 … r120 (16 ranks)").
std::string format_ranks(const std::vector<std::int64_t>& ranks);

// "(dp_replicate, dp_shard)" style tuple of names or numbers.
std::string tuple(const std::vector<std::string>& items);

}  // namespace planck::viz
