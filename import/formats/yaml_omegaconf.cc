#include "import/formats/yaml_omegaconf.h"

#include <map>
#include <vector>

#include "core/base/utf8.h"

namespace planck::import {
namespace {

int line_of(const YAML::Node& n) { return n.Mark().line >= 0 ? n.Mark().line + 1 : 0; }

class OmegaConfPass {
 public:
  explicit OmegaConfPass(const PlanBuilder& b) : b_(b) {}

  core::Status walk(YAML::Node node, int depth = 0) {
    if (depth > kMaxYamlDepth) {
      return b_.error(line_of(node), "mappings and lists nested more than " + std::to_string(kMaxYamlDepth) +
                                         " deep, or an alias inside the node it names; planck reads YAML nested at "
                                         "most " + std::to_string(kMaxYamlDepth) + " deep");
    }
    if (++visits_ > kMaxYamlVisits) {
      return b_.error(line_of(node), "more than " + std::to_string(kMaxYamlVisits) +
                                         " YAML nodes (an alias counted each time it is used); planck reads configs "
                                         "of at most that many");
    }
    if (node.IsSequence()) {
      for (YAML::Node child : node) {
        if (auto st = walk(child, depth + 1); !st) return st;
      }
      return core::Status::ok();
    }
    if (!node.IsMap()) return core::Status::ok();
    // Duplicate keys first, against the mapping as written.
    std::map<std::string, int> seen;
    YAML::Node merge;
    for (const auto& kv : node) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
      if (key.empty() && !kv.first.IsScalar()) continue;
      const auto [it, fresh] = seen.emplace(key, line_of(kv.first));
      if (!fresh) {
        return b_.error(line_of(kv.first), "key '" + core::excerpt(core::valid_utf8(key), 60) +
                                               "' given twice in one mapping (first at line " +
                                               std::to_string(it->second) +
                                               "); OmegaConf, which Lingua reads configs with, refuses duplicate keys");
      }
      if (key == "<<" && kv.first.Tag() != "!") merge = kv.second;  // plain, not quoted "<<"
    }
    if (merge.IsDefined()) {
      if (auto st = apply_merge(node, merge, depth); !st) return st;
    }
    for (const auto& kv : node) {
      if (auto st = walk(kv.second, depth + 1); !st) return st;
    }
    return core::Status::ok();
  }

 private:
  // `<<: *a` or `<<: [*a, *b]`: keys the mapping lacks come from the sources, earlier first.
  core::Status apply_merge(YAML::Node& node, const YAML::Node& merge, int depth) {
    std::vector<YAML::Node> sources;
    if (merge.IsMap()) {
      sources.push_back(merge);
    } else if (merge.IsSequence()) {
      for (const YAML::Node& s : merge) sources.push_back(s);
    }
    for (const YAML::Node& s : sources) {
      if (!s.IsMap()) {
        return b_.error(line_of(merge), "a merge key '<<' takes a mapping or a list of mappings (OmegaConf's YAML "
                                        "loader refuses anything else)");
      }
      if (auto st = walk(s, depth + 1); !st) return st;  // the source's own merges first
    }
    node.remove("<<");
    const YAML::Node& view = node;
    for (const YAML::Node& s : sources) {
      for (const auto& kv : s) {
        if (!kv.first.IsScalar()) continue;
        const std::string key = kv.first.Scalar();
        if (!view[key].IsDefined()) node[key] = kv.second;
      }
    }
    return core::Status::ok();
  }

  const PlanBuilder& b_;
  long visits_ = 0;
};

}  // namespace

core::Result<YAML::Node> load_omegaconf_yaml(const std::string& text, const PlanBuilder& builder) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    // yaml-cpp marks are 0-based; DeepRecursion (nesting bomb) is a ParserException too.
    std::string where = e.mark.line >= 0 ? std::to_string(e.mark.line + 1) : std::string();
    if (e.mark.column >= 0 && !where.empty()) where += ":" + std::to_string(e.mark.column + 1);
    return core::Status::error(builder.path() + (where.empty() ? "" : ":" + where) +
                               ": not valid YAML: " + core::excerpt(e.msg, 200));
  }
  if (docs.size() > 1) {
    return builder.error(line_of(docs[1]), "a second YAML document; OmegaConf (Lingua's config loader) reads a file "
                                           "of one document and refuses more (split the file, or remove the '---')");
  }
  YAML::Node root = docs.empty() ? YAML::Node() : docs[0];
  OmegaConfPass pass(builder);
  if (auto st = pass.walk(root); !st) return st;
  return root;
}

}  // namespace planck::import
