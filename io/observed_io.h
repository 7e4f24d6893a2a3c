#pragma once
// Reading and writing observed communicators (docs/observed.md, "planck-observed/1").
//
// `planck verify --observed FILE` and `planck observe FILE...` accept three kinds of evidence of
// what a run really created, told apart by their content (never by extension):
//   - a planck-observed/1 JSON document (as written by `planck observe` or python/planck_observe.py),
//   - an NCCL_DEBUG=INFO log (nccl_log.h),
//   - a PyTorch flight-recorder dump, JSON or pickle (flight_recorder.h).

#include <string>
#include <string_view>
#include <vector>

#include "core/observed/observed.h"
#include "core/base/status.h"

namespace planck::io {

enum class ObservedFormat { kPlanckObserved, kNcclLog, kFlightRecorderJson, kFlightRecorderPickle };
const char* format_name(ObservedFormat f);  // "planck-observed/1", "nccl-log", ...

// Looks at the first bytes: pickle opcode 0x80 -> flight-recorder pickle; a JSON object whose
// "format" is planck-observed/1 -> planck JSON; one with "pg_config" or "entries" -> flight-recorder
// JSON; anything else is read as an NCCL log (which may then hold no communicator: an error).
ObservedFormat detect_format(std::string_view head);

// Reads one file of any supported kind. Errors name the path, the line where known, and the fix.
core::Result<core::Observed> read_observed_file(const std::string& path);

// Parses a planck-observed/1 document (`source` names it in errors and in core::ObservedGroup::source).
core::Result<core::Observed> parse_observed_json(std::string_view text, const std::string& source);

// Serialises to planck-observed/1 (sorted ranks, hosts keyed by decimal rank), newline-terminated.
std::string observed_to_json(const core::Observed& o);

}  // namespace planck::io
