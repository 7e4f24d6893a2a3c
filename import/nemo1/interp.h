#pragma once
// A NeMo 1.x Hydra config's values with OmegaConf's interpolations resolved (omegaconf 2.3 grammar,
// the subset NeMo's own configs write): `${a.b.c}` (a key of the same file from its root),
// `${.x}` / `${..x}` (relative to the key's own mapping, one more dot a mapping further up), a string
// holding several (`${a}_${b}`), and NeMo's two arithmetic resolvers, `${multiply:X,Y}` and
// `${sum:X,Y}` (NVIDIA/NeMo@8cfedd7 nemo/core/config/hydra_runner.py:48-51: x * y, x + y).
// Anything else (`${oc.env:...}`, another resolver, a key the file does not hold, a `???` mandatory
// value, a cycle, nesting deeper than kNemo1MaxDepth) is refused with the reason, for the importer
// to report at the key's file:line; nothing is guessed.

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace planck::import {

// The most interpolations one value may pass through (a cycle stops here too) and the longest
// string a resolution may build (`a: ${b}${b}`, `b: ${c}${c}`, ... doubles at each step).
inline constexpr int kNemo1MaxDepth = 32;
inline constexpr std::size_t kNemo1MaxText = 65536;

struct Nemo1Value {
  YAML::Node node;     // the resolved node: a scalar, a mapping, a sequence or null
  std::string text;    // a scalar's resolved text ("" otherwise)
  bool null = true;    // absent, `null` or `~`
  bool scalar = false;
  int line = 0;        // where the key is written, 1-based (0: absent)
  bool interpolated = false;  // its text held ${...}
};

class Nemo1Config {
 public:
  explicit Nemo1Config(YAML::Node root) : root_(std::move(root)) {}

  // The node at the dotted `key` as written (a null node when absent).
  YAML::Node raw(const std::string& key) const;
  // The 1-based line `key` is written at (0 when absent).
  int line(const std::string& key) const;
  // `key`'s value with its interpolations resolved; the error is why it cannot be (no file:line).
  core::Result<Nemo1Value> get(const std::string& key) const;

 private:
  YAML::Node root_;
};

// Splits "a.b.c" at its dots.
std::vector<std::string> nemo1_split_key(const std::string& key);

}  // namespace planck::import
