#pragma once
// Diagnostics: what every check reports. Rule names and JSON shapes: docs/verify.md.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace planck::core {

enum class Severity { kError, kWarning, kNote };
const char* severity_name(Severity s);  // "error", "warning", "note"

// A coordinate: (dim name, index) pairs in mesh order.
using Coord = std::vector<std::pair<std::string, std::int64_t>>;

struct Witness {
  std::vector<std::int64_t> ranks;
  std::vector<Coord> coords;                                   // one per rank, same order
  std::vector<std::pair<std::string, std::int64_t>> values;    // e.g. {"dp_rank", 59}
  bool empty() const { return ranks.empty() && coords.empty() && values.empty(); }
};

struct Diagnostic {
  std::string rule;       // e.g. "rank-out-of-range"
  Severity severity = Severity::kError;
  std::string message;    // names the values: ranks, dims, sizes
  std::string pointer;    // JSON pointer into the plan ("" = whole document)
  int line = 0;           // 1-based; 0 = unknown
  int column = 0;         // 1-based, bytes
  std::string file;       // set when the diagnostic comes from an observed file
  std::optional<Witness> witness;
  std::string hint;       // the fix
  std::string role;       // for group rules: the role it is about (keeps the most specific rule)
  std::vector<std::string> skipped_rules;  // checks-skipped: the rules that could not run
};

class Diagnostics {
 public:
  Diagnostic& add(Diagnostic d) {
    items_.push_back(std::move(d));
    return items_.back();
  }
  Diagnostic& add(std::string rule, Severity severity, std::string message, std::string pointer = {},
                  std::string hint = {}) {
    Diagnostic d;
    d.rule = std::move(rule);
    d.severity = severity;
    d.message = std::move(message);
    d.pointer = std::move(pointer);
    d.hint = std::move(hint);
    return add(std::move(d));
  }
  const std::vector<Diagnostic>& items() const { return items_; }
  std::vector<Diagnostic>& items() { return items_; }
  int count(Severity s) const;
  bool has_errors() const { return count(Severity::kError) > 0; }
  bool has_rule(const std::string& rule) const;
  void append(const Diagnostics& other);

 private:
  std::vector<Diagnostic> items_;
};

}  // namespace planck::core
