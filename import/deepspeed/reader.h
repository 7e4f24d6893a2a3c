#pragma once
// The DeepSpeed config as the importer reads it: values by JSON pointer, --set overrides first,
// "auto" told apart, each value's line for messages; and the readers of the settings beyond the
// layout and the batch (import/deepspeed/settings.cc).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/plan/json_doc.h"
#include "core/plan/json_value.h"
#include "import/importer.h"
#include "import/plan_builder.h"

namespace planck::import::ds {

// An integer field that may be absent, a number, or the Hugging Face placeholder "auto".
struct DsInt {
  std::optional<std::int64_t> value;
  bool is_auto = false;
};

class DsReader {
 public:
  DsReader(const core::JsonDoc& doc, PlanBuilder& b) : doc_(doc), b_(b) {}

  int line(const std::string& ptr) const { return doc_.position(ptr).line; }
  // --set a.b=v: the value at /a/b, over the file's (the command line wins).
  void set(const std::string& dotted, const std::string& text) {
    std::string ptr;
    for (char c : dotted) ptr += c == '.' ? '/' : c;
    const bool had = at("/" + ptr) != nullptr;
    overrides_["/" + ptr] = set_value(text);
    b_.note("--set " + dotted + "=" + text + " from the command line" + (had ? " (replaces the file's value)" : ""));
  }
  // A trainer's fill (ImportOptions::fills): the value at /a/b, noted with its source.
  void fill(const std::string& dotted, const std::string& text, const std::string& from) {
    std::string ptr;
    for (char c : dotted) ptr += c == '.' ? '/' : c;
    overrides_["/" + ptr] = set_value(text);
    b_.note(dotted + " = " + text + ": filled from " + from);
  }
  const nlohmann::json* at(const std::string& ptr) const {
    if (auto it = overrides_.find(ptr); it != overrides_.end()) return &it->second;
    const nlohmann::json::json_pointer p(ptr);
    return doc_.root().contains(p) ? &doc_.root().at(p) : nullptr;
  }
  core::Result<DsInt> integer(const std::string& ptr) const {
    DsInt out;
    const nlohmann::json* v = at(ptr);
    if (!v || v->is_null()) return out;
    if (v->is_string() && v->get<std::string>() == "auto") {
      out.is_auto = true;
      return out;
    }
    if (auto i = core::json_int64(*v)) {
      out.value = *i;
      return out;
    }
    if (core::json_int_out_of_range(*v)) {
      return b_.error(line(ptr), ptr + " = " + core::json_excerpt(*v) +
                                     " does not fit in a signed 64-bit integer (at most 9223372036854775807)");
    }
    // DeepSpeed reads these through int(); 1e5 style numbers are whole floats.
    if (v->is_number_float()) {
      const double d = v->get<double>();
      if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e18) {
        out.value = static_cast<std::int64_t>(d);
        return out;
      }
    }
    return b_.error(line(ptr), ptr + " must be an integer or \"auto\", got " + core::json_excerpt(*v));
  }
  void warn_unknown(const std::string& ptr, const std::vector<std::string>& known) {
    const nlohmann::json* obj = ptr.empty() ? &doc_.root() : at(ptr);
    auto unknown = [&](const std::string& key) { return std::find(known.begin(), known.end(), key) == known.end(); };
    if (obj && obj->is_object()) {
      for (const auto& [key, value] : obj->items()) {
        if (unknown(key)) {
          const std::string p = ptr + "/" + core::json_pointer_escape(key);
          b_.unknown_key(p, doc_.key_position(p).line, known);
        }
      }
    }
    // A --set under this object naming a key the file does not hold: checked the same way (the
    // file's own keys were checked above).
    std::vector<std::string> said;
    for (const auto& [set_ptr, value] : overrides_) {
      if (set_ptr.size() <= ptr.size() + 1 || set_ptr.compare(0, ptr.size() + 1, ptr + "/") != 0) continue;
      const std::string key = set_ptr.substr(ptr.size() + 1, set_ptr.find('/', ptr.size() + 1) - ptr.size() - 1);
      if (!unknown(key) || (obj && obj->is_object() && obj->contains(key)) ||
          std::find(said.begin(), said.end(), key) != said.end())
        continue;
      said.push_back(key);
      b_.unknown_key("--set " + ptr + "/" + key, 0, known);
    }
  }
  bool flag(const std::string& ptr) const {
    const nlohmann::json* v = at(ptr);
    return v && v->is_boolean() && v->get<bool>();
  }

 private:
  const core::JsonDoc& doc_;
  PlanBuilder& b_;
  std::map<std::string, nlohmann::json> overrides_;
};

// bf16 / fp16 / fp32; both 16-bit modes enabled is DeepSpeed's start-up assertion (an error).
core::Result<std::string> enabled_dtype(DsReader& r, PlanBuilder& b);
// torch_autocast on: setting-unmodelled unless it casts to the training dtype.
void read_torch_autocast(DsReader& r, PlanBuilder& b, const std::string& dtype);
// elasticity on: the start-up refusal, else setting-unmodelled naming the batch priced.
core::Status check_elasticity(DsReader& r, PlanBuilder& b, bool command_line_batch);
void read_optimizer(DsReader& r, PlanBuilder& b, nlohmann::ordered_json& t);
core::Status read_offload(DsReader& r, PlanBuilder& b, std::int64_t stage, nlohmann::ordered_json& t);
// The settings planck reads but does not price: each one that is on is setting-unmodelled.
void read_unpriced(DsReader& r, PlanBuilder& b, const std::string& dtype);
// data_types.grad_accum_dtype: BF16_Optimizer's fp32 gradient buffer (training.grad_accum_dtype),
// the combinations DeepSpeed refuses (an error) or ignores (a warning).
core::Status read_grad_accum(DsReader& r, PlanBuilder& b, std::int64_t stage, const std::string& dtype,
                             nlohmann::ordered_json& t);
// An optimizer DeepSpeed refuses under ZeRO: an error naming its line and the fix.
core::Status check_zero_optimizer(DsReader& r, PlanBuilder& b, std::int64_t stage);

}  // namespace planck::import::ds
