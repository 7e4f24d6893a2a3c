#pragma once
// The GPT-NeoX importer's view of one YAML file (neox.cc, model.cc): its top-level keys with
// dashes turned into underscores, as NeoX does (megatron/neox_arguments/arguments.py:251-253
// @ea7aefd), typed reads naming file:line, and which keys were read.

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "import/plan_builder.h"

namespace planck::import::neox {

class NeoxKeys {
 public:
  NeoxKeys(const YAML::Node& root, PlanBuilder& b);

  bool has(const std::string& key) const { return values_.count(key) > 0; }
  int line(const std::string& key) const;
  // The value (null when absent or null), and the key counts as read.
  YAML::Node get(const std::string& key);
  core::Result<std::optional<std::int64_t>> integer(const std::string& key);
  core::Result<std::optional<double>> real(const std::string& key);
  core::Result<bool> boolean(const std::string& key, bool dflt);
  core::Result<std::optional<std::string>> string(const std::string& key);
  // `sub` of the mapping `key` ("enabled" of "fp16"), nullopt when either is absent.
  core::Result<std::optional<bool>> sub_boolean(const std::string& key, const std::string& sub);
  core::Result<std::optional<std::int64_t>> sub_integer(const std::string& key, const std::string& sub);
  // Marks keys read without a value planck uses (their silence is documented).
  void mark(const std::string& key) { read_.insert(key); }
  // unknown-key for each key no NeoXArgs class defines (import/neox/keys.h).
  void warn_unknown();
  // The keys neither read nor marked, in file order.
  std::vector<std::string> unread() const;

 private:
  std::map<std::string, YAML::Node> values_;
  std::map<std::string, int> lines_;
  std::vector<std::string> order_;
  std::set<std::string> read_;
  PlanBuilder& b_;
};

// Model sizes and recompute (model.cc): the plan's model when the vocabulary is known, else a note.
core::Status read_neox_model(NeoxKeys& k, PlanBuilder& b, std::int64_t mp, nlohmann::ordered_json& t);
// NeoX settings that change memory or time and that planck does not price (setting-unmodelled).
core::Status read_neox_unpriced(NeoxKeys& k, PlanBuilder& b, std::int64_t mp);

}  // namespace planck::import::neox
