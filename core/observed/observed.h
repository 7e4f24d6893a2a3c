#pragma once
// Observed communicators: what a real run created (docs/observed.md, "planck-observed/1").

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace planck::core {

struct ObservedGroup {
  std::vector<std::int64_t> ranks;  // global ranks seen, sorted
  std::int64_t size = 0;            // the communicator's size (>= ranks.size())
  bool complete = false;            // ranks.size() == size
  std::string id;                   // commId / pg name, when known
  std::string name;                 // e.g. "mesh_dp_shard", when known
  std::string source;               // file it came from
  int line = 0;                     // first line in that file, 0 when unknown
};

// Something in the input that was not taken as evidence, and why (a stray line, an implausible size).
struct ObservedNote {
  std::string source;
  int line = 0;  // 0 when unknown
  std::string message;
};

struct Observed {
  std::vector<std::string> sources;
  std::optional<std::int64_t> world;
  std::vector<std::int64_t> ranks_seen;       // sorted
  std::map<std::int64_t, std::string> hosts;  // rank -> host
  std::vector<ObservedGroup> groups;
  std::vector<ObservedNote> notes;
};

}  // namespace planck::core
