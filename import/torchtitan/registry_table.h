#pragma once
// A torchtitan registry function's settings (the reader's "a.b" paths with their files and lines)
// laid out as the TOML-era [section] key table that import_torchtitan_table reads, and the
// readers of the registry-only settings that map onto it (registry_settings.cc).

#include <toml++/toml.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "import/importer.h"
#include "import/plan_builder.h"

namespace planck::import::registry {

// Positions of settings written in another file than the registry (a base function imported from
// the package) are kept apart from the registry's own lines: line + index x kFileStride, split
// again in locate_files() once the plan is built.
inline constexpr int kFileStride = 1 << 20;

class Table {
 public:
  explicit Table(std::string main_file) : main_(std::move(main_file)) {}
  toml::table& root() { return root_; }
  const std::map<std::string, int>& lines() const { return lines_; }
  const std::vector<std::string>& files() const { return files_; }

  // The position of a setting: its line, encoded with its file when that is not the registry.
  int position(const nlohmann::json& setting);
  void set(const std::string& dotted, const nlohmann::json& value, int line);
  // `section` may be dotted ("quantize.linear.float8"): a path of nested tables, as TOML writes it.
  void set_in(const std::string& section, const std::string& key, const nlohmann::json& value, int line);
  // A setting that is a value (one the reader could not evaluate is an Unfollowed, see
  // python_unfollowed), or nullptr.
  const nlohmann::json* value(const nlohmann::json& settings, const std::string& dotted) const;
  int line_of(const nlohmann::json& settings, const std::string& dotted);

 private:
  std::string main_;
  toml::table root_;
  std::map<std::string, int> lines_;
  std::vector<std::string> files_;
};

// Splits the positions Table::position encoded into line and file.
void locate_files(ImportResult& r, const std::vector<std::string>& files);

// The registry-only settings (registry_settings.cc), each onto the TOML-era keys of `t`.
// num_tokens_per_microbatch_per_dp_rank / max_context_length / num_tokens_per_train_step.
core::Status read_tokens(const nlohmann::json& s, Table& t, PlanBuilder& b);
// activation_checkpoint = FullAC.Config() / SelectiveAC.Config() / MemoryBudgetAC.Config() / None.
void read_checkpointing(const nlohmann::json& s, Table& t, PlanBuilder& b);
// model_spec = model_registry(flavor, converters=[...]); `*args` = the flavour's literal sizes.
void read_model(const nlohmann::json& s, const std::string& path, Table& t, PlanBuilder& b,
                const nlohmann::json** args);
// optimizer = OptimizersContainer.Config(name=...) or a helper naming its optimizers.
void read_optimizer(const nlohmann::json& s, Table& t, PlanBuilder& b);
// A setting or flavour size beyond 64 bits: an error at its line.
core::Status check_int_range(const nlohmann::json& s, PlanBuilder& b);

}  // namespace planck::import::registry
