#pragma once
// The GPT-NeoX importer's view of a run's YAML files (neox.cc, model.cc): their top-level keys
// with dashes turned into underscores, merged as NeoX merges `deepy.py train.py a.yml b.yml`
// (megatron/neox_arguments/arguments.py from_ymls:234-262 @ea7aefd), typed reads naming the
// file:line each key is written at, and which keys were read.

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

// A NeoX key as NeoXArgs holds it: dashes turned into underscores (arguments.py:251-253).
std::string neox_key(std::string key);
// The 1-based line of a YAML node, 0 when unknown.
int neox_line_of(const YAML::Node& n);
// ASCII lower case (NeoX compares tokenizer and optimizer names case-insensitively).
std::string neox_lower(std::string s);

class NeoxKeys {
 public:
  explicit NeoxKeys(PlanBuilder& b) : b_(b) {}
  // The top-level keys of one file of the run (`file` "" = the config itself), after those added
  // before: an error where NeoX raises (a key the earlier files gave, as written; two files of one
  // name); a dashed spelling of an earlier key replaces it, as NeoX's check misses it (noted).
  core::Status add(const YAML::Node& root, const std::string& file);

  bool has(const std::string& key) const { return values_.count(key) > 0; }
  Where line(const std::string& key) const;
  // The file `key` is written in ("" = the config).
  const std::string& file(const std::string& key) const;
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
  std::map<std::string, std::string> files_;
  std::set<std::string> basenames_;
  std::vector<std::string> order_;
  std::set<std::string> read_;
  PlanBuilder& b_;
};

// The tokenizer's vocabulary before padding (tokenizer.cc), when tokenizer_type and vocab_file
// say it: CharLevelTokenizer's 512, HFGPT2Tokenizer's GPT-2 + pad, a GPT-2 encoder or Hugging Face
// tokenizer JSON read from the path the run reads (or beside the config), else the GPT-2 and
// GPT-NeoX-20B files by name; nullopt when none of these says it. `how`: for the note.
struct TokenizerVocab {
  std::int64_t size = 0;
  std::string how;
};
core::Result<std::optional<TokenizerVocab>> neox_tokenizer_vocab(NeoxKeys& k, const std::string& config_path);
// `size` padded up to a multiple of `multiple` (_vocab_size_with_padding), nullopt when either is
// below 1 or the product overflows.
std::optional<std::int64_t> neox_padded_vocab(std::int64_t size, std::int64_t multiple);

// Model sizes and recompute (model.cc): the plan's model when the vocabulary is known, else a note.
core::Status read_neox_model(NeoxKeys& k, PlanBuilder& b, std::int64_t mp, nlohmann::ordered_json& t);
// NeoX settings that change memory or time and that planck does not price (setting-unmodelled).
core::Status read_neox_unpriced(NeoxKeys& k, PlanBuilder& b, std::int64_t mp);

}  // namespace planck::import::neox
