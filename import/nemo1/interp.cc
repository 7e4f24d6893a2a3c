// OmegaConf interpolation for NeMo 1.x configs (interp.h). OmegaConf 2.3's grammar
// (omegaconf/grammar/OmegaConfGrammarParser.g4): an interpolation is `${` a key or a resolver call
// `}`; a key with leading dots is relative to the node's parent container (one dot: the mapping
// holding the key; each further dot: one container up); a value that is exactly one interpolation
// takes the target's type, one with text around it is a string.

#include "import/nemo1/interp.h"

#include <charconv>
#include <cstdlib>
#include <optional>
#include <set>
#include <utility>

#include "import/plan_builder.h"

namespace planck::import {

namespace {

constexpr int kNemo1MaxSteps = 10000;  // lookups a single get() may make (a wide fan-out of references)

std::string nemo1_trim(const std::string& s) {
  const std::size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const std::size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

std::string nemo1_join(const std::vector<std::string>& path) {
  std::string out;
  for (const std::string& p : path) out += (out.empty() ? "" : ".") + p;
  return out;
}

// The index one past the `}` closing the `${` at `open`, or npos when it is not closed.
std::size_t nemo1_close(const std::string& s, std::size_t open) {
  int depth = 0;
  for (std::size_t i = open; i < s.size(); ++i) {
    if (s.compare(i, 2, "${") == 0) {
      ++depth;
      ++i;
    } else if (s[i] == '}' && --depth == 0) {
      return i + 1;
    }
  }
  return std::string::npos;
}

// `s` split at `sep` outside nested ${...}.
std::vector<std::string> nemo1_split_top(const std::string& s, char sep) {
  std::vector<std::string> out(1);
  int depth = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s.compare(i, 2, "${") == 0) ++depth;
    if (s[i] == '}' && depth > 0) --depth;
    if (s[i] == sep && depth == 0) {
      out.emplace_back();
      continue;
    }
    out.back() += s[i];
  }
  return out;
}

struct Nemo1Number {
  bool integer = true;
  std::int64_t i = 0;
  double d = 0;
};

std::optional<Nemo1Number> nemo1_number(const std::string& text) {
  Nemo1Number n;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, n.i);
  if (ec == std::errc() && p == end && !text.empty()) return n;
  if (text.empty() || text.find_first_not_of("0123456789.eE+-") != std::string::npos) return std::nullopt;
  char* stop = nullptr;
  n.d = std::strtod(text.c_str(), &stop);
  if (stop != text.c_str() + text.size()) return std::nullopt;
  n.integer = false;
  return n;
}

class Nemo1Resolver {
 public:
  explicit Nemo1Resolver(const YAML::Node& root) : root_(root) {}

  core::Result<Nemo1Value> value_at(const std::vector<std::string>& path, int depth) {
    if (depth > kNemo1MaxDepth) {
      return core::Status::error("more than " + std::to_string(kNemo1MaxDepth) +
                                 " interpolations deep (a chain or cycle planck does not follow)");
    }
    if (++steps_ > kNemo1MaxSteps) {
      return core::Status::error("more than " + std::to_string(kNemo1MaxSteps) + " interpolation lookups");
    }
    const std::string key = nemo1_join(path);
    YAML::Node node = lookup(path);
    Nemo1Value v;
    if (!node.IsDefined()) return core::Status::error("no key `" + key + "` in the file");
    v.node = node;
    v.line = node.Mark().line >= 0 ? node.Mark().line + 1 : 0;
    if (!node.IsScalar()) {
      v.null = node.IsNull();
      return v;
    }
    v.scalar = true;
    v.null = false;
    v.text = node.Scalar();
    if (v.text == "???") return core::Status::error("`" + key + ": ???` is a mandatory value the file leaves unset");
    if (v.text.find("${") == std::string::npos) return v;
    if (visiting_.count(key)) return core::Status::error("an interpolation cycle through `" + key + "`");
    visiting_.insert(key);
    auto r = resolve_text(v.text, path, depth);
    visiting_.erase(key);
    if (!r) return r.status();
    r->line = v.line;
    r->interpolated = true;
    return r;
  }

 private:
  // YAML::Node's operator= writes through to the node it refers to: the walk moves with reset().
  YAML::Node lookup(const std::vector<std::string>& path) const {
    YAML::Node cur = root_;
    for (const std::string& p : path) {
      if (cur.IsMap()) {
        const YAML::Node& c = cur;
        YAML::Node next = c[p];
        if (!next.IsDefined()) return YAML::Node(YAML::NodeType::Undefined);
        cur.reset(next);
      } else if (cur.IsSequence() && !p.empty() && p.find_first_not_of("0123456789") == std::string::npos &&
                 p.size() < 9 && std::stoul(p) < cur.size()) {
        const YAML::Node& c = cur;
        YAML::Node next = c[std::stoul(p)];
        cur.reset(next);
      } else {
        return YAML::Node(YAML::NodeType::Undefined);
      }
    }
    return cur;
  }

  core::Result<Nemo1Value> resolve_text(const std::string& s, const std::vector<std::string>& at, int depth) {
    Nemo1Value out;
    out.scalar = true;
    out.null = false;
    std::size_t i = 0;
    while (i < s.size()) {
      const std::size_t open = s.find("${", i);
      if (open == std::string::npos) {
        out.text += s.substr(i);
        break;
      }
      if (open > 0 && s[open - 1] == '\\') return core::Status::error("an escaped \\${ (not followed)");
      const std::size_t close = nemo1_close(s, open);
      if (close == std::string::npos) return core::Status::error("`" + s + "` does not close its ${");
      PLANCK_IMPORT_TRY(part, resolve_one(s.substr(open + 2, close - open - 3), at, depth));
      if (open == 0 && close == s.size()) return part;  // the whole value: the target's own type
      if (!part.scalar) return core::Status::error("`" + s + "` puts a mapping or list inside a string");
      out.text += s.substr(i, open - i) + part.text;
      if (out.text.size() > kNemo1MaxText) {
        return core::Status::error("the resolved string exceeds " + std::to_string(kNemo1MaxText) + " characters");
      }
      i = close;
    }
    return out;
  }

  core::Result<Nemo1Value> resolve_one(const std::string& raw, const std::vector<std::string>& at, int depth) {
    const std::string body = nemo1_trim(raw);
    const std::vector<std::string> colon = nemo1_split_top(body, ':');
    if (colon.size() > 1) return resolver(body.substr(0, body.find(':')), body.substr(body.find(':') + 1), at, depth);
    if (body.empty() || body.find_first_of("[]${} ") != std::string::npos) {
      return core::Status::error("`${" + body + "}` is not a plain key (not followed)");
    }
    std::size_t dots = 0;
    while (dots < body.size() && body[dots] == '.') ++dots;
    std::vector<std::string> path;
    if (dots > 0) {
      // Relative: one dot is the mapping holding the key, each further dot one container up.
      if (dots > at.size()) return core::Status::error("`${" + body + "}` climbs above the file's root");
      path.assign(at.begin(), at.end() - static_cast<std::ptrdiff_t>(dots));
    }
    for (const std::string& p : nemo1_split_key(body.substr(dots))) path.push_back(p);
    auto r = value_at(path, depth + 1);
    if (!r) return core::Status::error("`${" + body + "}`: " + r.message());
    return r;
  }

  // NeMo registers multiply and sum (hydra_runner.py:48-51, modelPT.py:61); OmegaConf's own oc.*
  // resolvers read the environment or other configs, which planck does not.
  core::Result<Nemo1Value> resolver(const std::string& name, const std::string& args,
                                    const std::vector<std::string>& at, int depth) {
    if (name != "multiply" && name != "sum") {
      return core::Status::error("the resolver `" + name + ":` " +
                                 (name.rfind("oc.env", 0) == 0 ? "reads an environment variable"
                                                               : "is not one planck evaluates (only NeMo's multiply "
                                                                 "and sum)"));
    }
    const std::vector<std::string> parts = nemo1_split_top(args, ',');
    if (parts.size() != 2) return core::Status::error("`${" + name + ":" + args + "}` takes two arguments");
    Nemo1Number n[2];
    for (int k = 0; k < 2; ++k) {
      std::string text = nemo1_trim(parts[static_cast<std::size_t>(k)]);
      if (text.find("${") != std::string::npos) {
        PLANCK_IMPORT_TRY(v, resolve_text(text, at, depth));
        if (!v.scalar) return core::Status::error("`${" + name + ":...}` of a mapping or list");
        text = v.text;
      }
      auto num = nemo1_number(text);
      if (!num) return core::Status::error("`${" + name + ":" + args + "}` of `" + text + "`, not a number");
      n[k] = *num;
    }
    Nemo1Value out;
    out.scalar = true;
    out.null = false;
    if (n[0].integer && n[1].integer) {
      const std::int64_t a = n[0].i, b = n[1].i;
      std::int64_t sum = 0;
      std::optional<std::int64_t> r = name == "multiply" ? checked_mul(a, b) : std::optional<std::int64_t>();
      if (name == "sum" && !__builtin_add_overflow(a, b, &sum)) r = sum;
      if (!r) return core::Status::error("`${" + name + ":" + args + "}` overflows a 64-bit integer");
      out.text = std::to_string(*r);
      return out;
    }
    const double a = n[0].integer ? static_cast<double>(n[0].i) : n[0].d;
    const double b = n[1].integer ? static_cast<double>(n[1].i) : n[1].d;
    out.text = std::to_string(name == "multiply" ? a * b : a + b);
    return out;
  }

  const YAML::Node& root_;
  int steps_ = 0;
  std::set<std::string> visiting_;
};

}  // namespace

std::vector<std::string> nemo1_split_key(const std::string& key) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= key.size()) {
    const std::size_t dot = std::min(key.find('.', start), key.size());
    out.push_back(key.substr(start, dot - start));
    start = dot + 1;
  }
  return out;
}

YAML::Node Nemo1Config::raw(const std::string& key) const {
  YAML::Node cur = root_;
  for (const std::string& p : nemo1_split_key(key)) {
    if (!cur.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
    const YAML::Node& c = cur;
    YAML::Node next = c[p];
    if (!next.IsDefined()) return YAML::Node(YAML::NodeType::Undefined);
    cur.reset(next);
  }
  return cur;
}

int Nemo1Config::line(const std::string& key) const {
  const YAML::Node n = raw(key);
  return n.IsDefined() && n.Mark().line >= 0 ? n.Mark().line + 1 : 0;
}

core::Result<Nemo1Value> Nemo1Config::get(const std::string& key) const {
  if (!raw(key).IsDefined()) return Nemo1Value{};
  Nemo1Resolver r(root_);
  return r.value_at(nemo1_split_key(key), 0);
}

}  // namespace planck::import
