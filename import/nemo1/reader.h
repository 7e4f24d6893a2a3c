#pragma once
// The NeMo 1.x reader's pieces (nemo1.cc, model.cc): typed reads of a Hydra config's keys with
// their interpolations resolved, and the Megatron-LM args file the config means.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "import/importer.h"
#include "import/nemo1/interp.h"
#include "import/plan_builder.h"

namespace planck::import {

// The Megatron-LM flags a NeMo config means, one a line, and the config line each came from.
struct Nemo1Args {
  std::string text{};
  std::vector<int> lines{0};  // args-file line n (1-based) -> config line; [0] unused
  std::set<std::string> flags{};
  void add(const std::string& flag, const std::string& value, int line);
};

class Nemo1Reader {
 public:
  Nemo1Reader(const Nemo1Config& cfg, PlanBuilder& b) : cfg_(cfg), b_(b) {}

  // `key`'s resolved value; an interpolation that cannot be resolved (or `???`) becomes an
  // Unfollowed at the key's line, naming `key` as what it may set, and nullopt.
  std::optional<Nemo1Value> value(const std::string& key);
  // A scalar's text; nullopt when absent, null or unresolved. A mapping or list is an error.
  core::Result<std::optional<std::string>> text(const std::string& key);
  core::Result<std::optional<std::int64_t>> integer(const std::string& key);
  // YAML 1.1 booleans (true/false/yes/no/on/off, any case), as OmegaConf's SafeLoader reads them.
  core::Result<std::optional<bool>> boolean(const std::string& key);
  int line(const std::string& key) const { return cfg_.line(key); }
  bool set(const std::string& key) const;  // written with a non-null value
  std::vector<std::string> keys(const std::string& section) const;  // a mapping's keys, as written
  PlanBuilder& builder() { return b_; }
  std::vector<Unfollowed>& unfollowed() { return unfollowed_; }

 private:
  const Nemo1Config& cfg_;
  PlanBuilder& b_;
  std::vector<Unfollowed> unfollowed_;
};

// model: the layout, model, batch, precision, optimizer and recompute keys -> Megatron-LM flags
// (model.cc); an error names file:line where NeMo itself would refuse the config.
core::Status nemo1_layout(Nemo1Reader& r, Nemo1Args& args);
core::Status nemo1_model(Nemo1Reader& r, Nemo1Args& args);
core::Status nemo1_precision(Nemo1Reader& r, Nemo1Args& args);
// What NeMo reads that planck does not price: setting-unmodelled (settings.cc).
core::Status nemo1_unmodelled(Nemo1Reader& r);

}  // namespace planck::import
