#include "io/pickle_reader.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace planck::io {
namespace {

// Values live in an arena so that a memoised container (pickle memoises a dict before filling
// it) is shared by reference, as in Python.
struct Node {
  enum Kind { kNone, kBool, kInt, kFloat, kStr, kList, kDict, kMark, kListBuilder } kind = kNone;
  bool b = false;
  std::int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int> items;                    // list / tuple
  std::vector<std::pair<int, int>> entries;  // dict
};

class Unpickler {
 public:
  explicit Unpickler(std::string_view in) : in_(in) {}

  core::Result<nlohmann::json> run() {
    for (;;) {
      if (pos_ >= in_.size()) return fail("ends without STOP (truncated file?)");
      const std::size_t at = pos_;
      const auto op = static_cast<unsigned char>(in_[pos_++]);
      if (op == '.') break;
      if (!step(op, at)) return core::Status::error(error_);
    }
    if (stack_.size() != 1) return fail("STOP with " + std::to_string(stack_.size()) + " values on the stack");
    // Size first (shared references counted once per use), so a memo bomb costs no allocation.
    std::vector<long> sizes(nodes_.size(), -1);
    if (!expanded_size(stack_.back(), 0, sizes)) return core::Status::error(error_);
    nlohmann::json out;
    long budget = kMaxPickleNodes;
    if (!to_json(stack_.back(), 0, budget, out)) return core::Status::error(error_);
    return out;
  }

 private:
  core::Status fail(const std::string& what) {
    return core::Status::error("pickle byte " + std::to_string(pos_) + ": " + what);
  }
  bool bad(const std::string& what) {
    error_ = "pickle byte " + std::to_string(pos_) + ": " + what;
    return false;
  }
  bool take(std::size_t n, std::string_view& out) {
    if (n > in_.size() - pos_) return bad("truncated: needs " + std::to_string(n) + " more bytes");
    out = in_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  bool take_uint(int n, std::uint64_t& v) {
    std::string_view b;
    if (!take(n, b)) return false;
    v = 0;
    for (int k = n - 1; k >= 0; --k) v = (v << 8) | static_cast<unsigned char>(b[k]);  // little-endian
    return true;
  }
  int make(Node n) {
    nodes_.push_back(std::move(n));
    return static_cast<int>(nodes_.size()) - 1;
  }
  bool push(Node n) {
    if (nodes_.size() >= static_cast<std::size_t>(kMaxPickleNodes)) return bad("more than " + std::to_string(kMaxPickleNodes) + " values");
    stack_.push_back(make(std::move(n)));
    return true;
  }
  bool pop(int& v) {
    if (stack_.empty()) return bad("stack underflow");
    v = stack_.back();
    stack_.pop_back();
    return true;
  }
  // Values above the topmost MARK, which is removed.
  bool pop_to_mark(std::vector<int>& out) {
    std::size_t k = stack_.size();
    while (k > 0 && nodes_[stack_[k - 1]].kind != Node::kMark) --k;
    if (k == 0) return bad("no MARK on the stack");
    out.assign(stack_.begin() + static_cast<long>(k), stack_.end());
    stack_.resize(k - 1);
    return true;
  }
  bool top_container(Node::Kind kind, Node*& out) {
    if (stack_.empty() || nodes_[stack_.back()].kind != kind) {
      return bad(kind == Node::kList ? "APPEND without a list" : "SETITEM without a dict");
    }
    out = &nodes_[stack_.back()];
    return true;
  }
  bool str(std::size_t len_bytes) {
    std::uint64_t n = 0;
    std::string_view b;
    if (!take_uint(static_cast<int>(len_bytes), n) || !take(n, b)) return false;
    Node v;
    v.kind = Node::kStr;
    v.s = std::string(b);
    return push(std::move(v));
  }
  bool integer(std::int64_t i) {
    Node v;
    v.kind = Node::kInt;
    v.i = i;
    return push(std::move(v));
  }
  bool long_bytes(std::uint64_t n) {
    std::string_view b;
    if (n > 8) return bad("integer of " + std::to_string(n) + " bytes does not fit 64 bits");
    if (!take(n, b)) return false;
    std::uint64_t v = 0;
    for (std::size_t k = n; k-- > 0;) v = (v << 8) | static_cast<unsigned char>(b[k]);
    if (n > 0 && n < 8 && (static_cast<unsigned char>(b[n - 1]) & 0x80)) v |= ~std::uint64_t{0} << (8 * n);
    return integer(static_cast<std::int64_t>(v));
  }
  bool memo_put(std::uint64_t idx) {
    if (stack_.empty()) return bad("memo put with an empty stack");
    // Python's pickler numbers memo entries 0, 1, 2, ... and every PUT/MEMOIZE costs at least
    // one input byte, so a real index is below the input's size. A larger one would only make
    // the dense memo allocate (LONG_BINPUT 100,000,000 = 400 MB, found by fuzz_flight_recorder).
    if (idx >= in_.size()) {
      return bad("memo index " + std::to_string(idx) + " out of range for a pickle of " + std::to_string(in_.size()) +
                 " bytes");
    }
    if (memo_.size() <= idx) memo_.resize(idx + 1, -1);
    memo_[idx] = stack_.back();
    return true;
  }
  bool memo_get(std::uint64_t idx) {
    if (idx >= memo_.size() || memo_[idx] < 0) return bad("memo get of unset index " + std::to_string(idx));
    if (!count_reference()) return false;
    stack_.push_back(memo_[idx]);
    return true;
  }
  // A memo GET or DUP pushes one more reference without making a value; each costs memory on
  // the stack and in the list it is appended to, so references count against kMaxPickleNodes
  // too (12 MB of BINGET once held 6 million of them).
  bool count_reference() {
    if (++references_ + static_cast<long>(nodes_.size()) > kMaxPickleNodes) {
      return bad("more than " + std::to_string(kMaxPickleNodes) + " values (shared references counted)");
    }
    return true;
  }
  bool global(std::string_view module, std::string_view name) {
    if (module == "torch.jit._pickle" &&
        (name == "build_intlist" || name == "build_doublelist" || name == "build_boollist")) {
      Node v;
      v.kind = Node::kListBuilder;
      return push(std::move(v));
    }
    return bad("refusing GLOBAL " + std::string(module) + "." + std::string(name) +
               ": planck reads only plain data (dict, list, str, int, float, bool, None) and executes nothing");
  }
  bool reduce() {
    int args = 0, fn = 0;
    if (!pop(args) || !pop(fn)) return false;
    const Node& a = nodes_[args];
    if (nodes_[fn].kind != Node::kListBuilder || a.kind != Node::kList || a.items.size() != 1 ||
        nodes_[a.items[0]].kind != Node::kList) {
      return bad("refusing REDUCE (a call): only torch.jit._pickle list builders on one list are read");
    }
    stack_.push_back(a.items[0]);
    return true;
  }
  bool step(unsigned char op, std::size_t at);
  bool expanded_size(int n, int depth, std::vector<long>& sizes);
  bool to_json(int n, int depth, long& budget, nlohmann::json& out);

  std::string_view in_;
  std::size_t pos_ = 0;
  std::vector<Node> nodes_;
  std::vector<int> stack_;
  std::vector<int> memo_;
  long references_ = 0;
  std::string error_;
};

bool Unpickler::step(unsigned char op, std::size_t at) {
  std::uint64_t n = 0;
  std::string_view b;
  std::vector<int> items;
  Node v;
  switch (op) {
    case 0x80:  // PROTO
      if (!take_uint(1, n)) return false;
      if (n < 2 || n > 5) return bad("pickle protocol " + std::to_string(n) + " (planck reads 2 to 5)");
      return true;
    case 0x95:  // FRAME: a length hint only
      return take_uint(8, n);
    case '}': v.kind = Node::kDict; return push(std::move(v));
    case ']': v.kind = Node::kList; return push(std::move(v));
    case ')': v.kind = Node::kList; return push(std::move(v));
    case '(': v.kind = Node::kMark; return push(std::move(v));
    case 'N': return push(std::move(v));
    case 0x88: case 0x89: v.kind = Node::kBool; v.b = op == 0x88; return push(std::move(v));
    case 'K': return take_uint(1, n) && integer(static_cast<std::int64_t>(n));
    case 'M': return take_uint(2, n) && integer(static_cast<std::int64_t>(n));
    case 'J': return take_uint(4, n) && integer(static_cast<std::int32_t>(static_cast<std::uint32_t>(n)));
    case 0x8a: return take_uint(1, n) && long_bytes(n);
    case 0x8b: return take_uint(4, n) && long_bytes(n);
    case 'G': {
      if (!take(8, b)) return false;
      std::uint64_t bits = 0;
      for (int k = 0; k < 8; ++k) bits = (bits << 8) | static_cast<unsigned char>(b[k]);  // big-endian
      v.kind = Node::kFloat;
      std::memcpy(&v.f, &bits, sizeof bits);
      return push(std::move(v));
    }
    case 0x8c: return str(1);  // SHORT_BINUNICODE
    case 'X': return str(4);   // BINUNICODE
    case 0x8d: return str(8);  // BINUNICODE8
    case 0x94: return memo_put(memo_.size());  // MEMOIZE
    case 'q': return take_uint(1, n) && memo_put(n);
    case 'r': return take_uint(4, n) && memo_put(n);
    case 'h': return take_uint(1, n) && memo_get(n);
    case 'j': return take_uint(4, n) && memo_get(n);
    case '0': { int x = 0; return pop(x); }
    case '1': return pop_to_mark(items);
    case '2':
      if (stack_.empty()) return bad("DUP with an empty stack");
      if (!count_reference()) return false;
      stack_.push_back(stack_.back());
      return true;
    case 't':
      if (!pop_to_mark(items)) return false;
      v.kind = Node::kList;
      v.items = std::move(items);
      return push(std::move(v));
    case 0x85: case 0x86: case 0x87: {
      std::size_t k = op - 0x84;
      if (stack_.size() < k) return bad("TUPLE" + std::to_string(k) + " with too few values");
      v.kind = Node::kList;
      v.items.assign(stack_.end() - static_cast<long>(k), stack_.end());
      stack_.resize(stack_.size() - k);
      return push(std::move(v));
    }
    case 'a': {
      int x = 0;
      Node* list = nullptr;
      if (!pop(x) || !top_container(Node::kList, list)) return false;
      list->items.push_back(x);
      return true;
    }
    case 'e': {
      Node* list = nullptr;
      if (!pop_to_mark(items) || !top_container(Node::kList, list)) return false;
      list->items.insert(list->items.end(), items.begin(), items.end());
      return true;
    }
    case 's': {
      int key = 0, val = 0;
      Node* dict = nullptr;
      if (!pop(val) || !pop(key) || !top_container(Node::kDict, dict)) return false;
      dict->entries.emplace_back(key, val);
      return true;
    }
    case 'u': {
      Node* dict = nullptr;
      if (!pop_to_mark(items) || !top_container(Node::kDict, dict)) return false;
      if (items.size() % 2 != 0) return bad("SETITEMS with an odd number of values");
      for (std::size_t k = 0; k < items.size(); k += 2) dict->entries.emplace_back(items[k], items[k + 1]);
      return true;
    }
    case 'c': {  // GLOBAL "module\nname\n"
      std::size_t nl1 = in_.find('\n', pos_);
      std::size_t nl2 = nl1 == std::string_view::npos ? nl1 : in_.find('\n', nl1 + 1);
      if (nl2 == std::string_view::npos) return bad("GLOBAL without its two lines");
      std::string_view module = in_.substr(pos_, nl1 - pos_), name = in_.substr(nl1 + 1, nl2 - nl1 - 1);
      pos_ = nl2 + 1;
      return global(module, name);
    }
    case 0x93: {  // STACK_GLOBAL
      int name = 0, module = 0;
      if (!pop(name) || !pop(module)) return false;
      if (nodes_[name].kind != Node::kStr || nodes_[module].kind != Node::kStr) return bad("STACK_GLOBAL without names");
      return global(nodes_[module].s, nodes_[name].s);
    }
    case 'R': return reduce();
    default: {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", op);
      pos_ = at;
      return bad("refusing opcode " + std::string(hex) +
                 " ('" + std::string(1, op >= 0x20 && op < 0x7f ? static_cast<char>(op) : '?') +
                 "'): planck reads only plain data (dict, list, str, int, float, bool, None) and executes nothing");
    }
  }
}

bool Unpickler::expanded_size(int n, int depth, std::vector<long>& sizes) {
  if (depth > kMaxPickleDepth) return bad("nesting deeper than " + std::to_string(kMaxPickleDepth) + " (or a cycle)");
  if (sizes[n] >= 0) return true;
  long total = 1;
  const Node& v = nodes_[n];
  auto add = [&](int child) {
    if (!expanded_size(child, depth + 1, sizes)) return false;
    total += sizes[child];
    if (total > kMaxPickleNodes) return bad("more than " + std::to_string(kMaxPickleNodes) + " values once shared references are expanded");
    return true;
  };
  for (int item : v.items) {
    if (!add(item)) return false;
  }
  for (const auto& [k, val] : v.entries) {
    if (!add(k) || !add(val)) return false;
  }
  sizes[n] = total;
  return true;
}

bool Unpickler::to_json(int n, int depth, long& budget, nlohmann::json& out) {
  if (depth > kMaxPickleDepth) return bad("nesting deeper than " + std::to_string(kMaxPickleDepth) + " (or a cycle)");
  if (--budget < 0) return bad("more than " + std::to_string(kMaxPickleNodes) + " values once shared references are expanded");
  const Node& v = nodes_[n];
  switch (v.kind) {
    case Node::kNone: out = nullptr; return true;
    case Node::kBool: out = v.b; return true;
    case Node::kInt: out = v.i; return true;
    case Node::kFloat: out = v.f; return true;
    case Node::kStr: out = v.s; return true;
    case Node::kList:
      out = nlohmann::json::array();
      for (int item : v.items) {
        nlohmann::json x;
        if (!to_json(item, depth + 1, budget, x)) return false;
        out.push_back(std::move(x));
      }
      return true;
    case Node::kDict:
      out = nlohmann::json::object();
      for (const auto& [k, val] : v.entries) {
        const Node& key = nodes_[k];
        std::string name;
        if (key.kind == Node::kStr) name = key.s;
        else if (key.kind == Node::kInt) name = std::to_string(key.i);
        else return bad("dict key that is not a str or int");
        nlohmann::json x;
        if (!to_json(val, depth + 1, budget, x)) return false;
        out[name] = std::move(x);
      }
      return true;
    case Node::kMark:
    case Node::kListBuilder:
      return bad("a MARK or list builder left inside a value");
  }
  return false;
}

}  // namespace

core::Result<nlohmann::json> read_pickle(std::string_view bytes) { return Unpickler(bytes).run(); }

}  // namespace planck::io
