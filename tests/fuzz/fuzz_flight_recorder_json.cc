// Fuzz target: the flight-recorder JSON path as `planck observe FILE.json` takes it: the format
// detection, the nesting pre-scan, nlohmann's parse keeping pg_config, the one-pass key-line
// index and the group reading; a dump that reads is written back as planck-observed/1 and read
// again (the strings it carries must stay valid JSON). Deep nesting, 10^5 groups and hostile
// keys are the hostile tests' (tests/fuzz/hostile_test.cc); this target looks for the rest.
#include "io/flight_recorder.h"
#include "io/observed_io.h"
#include "tests/fuzz/fuzz_entry.h"

PLANCK_FUZZ_TARGET(flight_recorder_json) {
  using namespace planck::io;
  std::string_view text = planck::fuzz::as_text(data, size);
  if (detect_format(text) != ObservedFormat::kFlightRecorderJson) {
    auto other = parse_observed_json(text, "fuzz_rank_1.json");
    (void)other;
  }
  auto observed = read_flight_recorder_json(text, "fuzz_rank_1.json");
  if (observed) {
    const std::string back = observed_to_json(*observed);
    auto again = parse_observed_json(back, "fuzz-roundtrip");
    if (!again) __builtin_trap();  // planck's own output must read back
  }
  return 0;
}
