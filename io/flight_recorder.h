#pragma once
// Process groups from a PyTorch flight-recorder dump (docs/sources/ecosystem.md §5): one file
// per rank, named <prefix><global rank> (default prefix /tmp/nccl_trace_rank_). Read from the
// dump: `pg_config` {pg name: {name, desc, ranks}} where ranks are GLOBAL ranks written as a
// string "[0, 1, 2]" (a list is accepted too) and desc is "default_pg" or "mesh_<dim>" for
// DeviceMesh groups. Everything else (entries, pg_status, stack frames) is skipped. Keys are
// looked for by presence, not by the dump's version (1.x to 2.10).

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/observed/observed.h"
#include "core/base/status.h"

namespace planck::io {

// `text` is the JSON form (torch's _dump_nccl_trace_json). `source` is the file path: its
// trailing digits name the dumping rank (fr_trace's convention), else the one rank common to
// every group in the dump.
core::Result<core::Observed> read_flight_recorder_json(std::string_view text, const std::string& source);

// The default pickle form, read with pickle_reader.h (executes nothing).
core::Result<core::Observed> read_flight_recorder_pickle(std::string_view bytes, const std::string& source);

// Shared by both: the dump as a JSON value. `text` (may be empty) gives line numbers: the
// groups' keys in the object whose key starts at `pg_config_at` (else the first "pg_config").
core::Result<core::Observed> flight_recorder_to_observed(const nlohmann::json& dump, const std::string& source,
                                                         std::string_view text,
                                                         std::size_t pg_config_at = std::string_view::npos);

// True when a parsed JSON object looks like a flight-recorder dump.
bool looks_like_flight_recorder(const nlohmann::json& doc);

}  // namespace planck::io
