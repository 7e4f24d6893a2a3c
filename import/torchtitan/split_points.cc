// torchtitan's pipeline_parallel_split_points ([experimental] before #980, [parallelism] after):
// the module names ("layers.N") where each pipeline stage starts, so num_stages = len + 1 and each
// rank holds num_stages / pp of them (pytorch/torchtitan@15a832d torchtitan/models/llama/
// pipeline_llama.py:84-85,122; @47fd328 torchtitan/parallelisms/pipeline_llama.py:88).

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "import/torchtitan/common.h"

namespace planck::import {

namespace {

// "layers.N" -> N; -1 for any other name.
std::int64_t layer_index(const std::string& name) {
  const std::string prefix = "layers.";
  if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size() || name.size() > prefix.size() + 9) return -1;
  std::int64_t n = 0;
  for (std::size_t i = prefix.size(); i < name.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return -1;
    n = n * 10 + (name[i] - '0');
  }
  return n;
}

// torchtitan's generate_split_points (pytorch/torchtitan@15a832d torchtitan/distributed/
// pipeline.py:27-80): `stages` stages, the first base = layers // stages, each middle stage one
// more while the remainder lasts, the last what is left.
std::vector<std::int64_t> even_split(std::int64_t layers, std::int64_t stages) {
  std::vector<std::int64_t> at;
  const std::int64_t base = layers / stages;
  std::int64_t extra = layers % stages, current = 0;
  for (std::int64_t i = 0; i + 1 < stages; ++i) {
    current += base + (i > 0 && extra > 0 ? 1 : 0);
    if (i > 0 && extra > 0) --extra;
    at.push_back(current);
  }
  return at;
}

}  // namespace

core::Result<std::optional<SplitPoints>> read_split_points(TomlReader& r) {
  for (const char* section : {"parallelism", "experimental"}) {
    auto v = r.strings_in(section, "pipeline_parallel_split_points");
    if (!v) return v.status();
    if (!v->has_value()) continue;
    SplitPoints sp;
    sp.line = (*v)->line;
    sp.setting = std::string("[") + section + "] pipeline_parallel_split_points";
    // The argparse era's string_list type split a string on commas (config_manager.py@47fd328:28-29).
    for (const std::string& item : (*v)->value) {
      std::size_t start = 0;
      while (start <= item.size()) {
        const std::size_t comma = std::min(item.find(',', start), item.size());
        std::string name = item.substr(start, comma - start);
        while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
        while (!name.empty() && std::isspace(static_cast<unsigned char>(name.front()))) name.erase(0, 1);
        if (!name.empty()) sp.names.push_back(name);
        start = comma + 1;
      }
    }
    if (sp.names.empty()) continue;  // [] is torchtitan's default: the generated split
    return std::optional<SplitPoints>(sp);
  }
  return std::optional<SplitPoints>();
}

// Stages per rank from pipeline_parallel_split_points: torchtitan asserts num_stages % pp == 0
// (pytorch/torchtitan@15a832d torchtitan/distributed/pipeline.py:158-160 stage_ids_this_rank) and
// exactly 2 stages a rank for the V-shaped schedules (:165-167).
core::Result<std::int64_t> split_stages_per_rank(const SplitPoints& sp, std::int64_t pp, const std::string& schedule,
                                                 PlanBuilder& b) {
  const std::int64_t stages = static_cast<std::int64_t>(sp.names.size()) + 1;
  if (stages % pp != 0) {
    return b.error(sp.line, sp.setting + " gives " + std::to_string(stages) + " stages, not a multiple of "
                            "pipeline_parallel_degree " + std::to_string(pp) + ": torchtitan asserts \"num_stages " +
                            std::to_string(stages) + " must be evenly divisible by pp_size " + std::to_string(pp) +
                            "\" (pytorch/torchtitan@15a832d torchtitan/distributed/pipeline.py:158-160). Fix: give " +
                            "k x pp - 1 split points");
  }
  const std::int64_t per_rank = stages / pp;
  const bool v_shaped = schedule == "zbv" || schedule == "dualpipev";
  if (v_shaped && per_rank != 2) {
    return b.error(sp.line, sp.setting + " gives " + std::to_string(per_rank) + " stages a rank: torchtitan's " +
                            "V-shaped schedules assert exactly 2 (pytorch/torchtitan@15a832d torchtitan/distributed/"
                            "pipeline.py:165-167). Fix: give 2 x pp - 1 split points");
  }
  b.locate("/parallelism/virtual_stages", sp.line);
  b.note(sp.setting + ": " + std::to_string(stages) + " stages (torchtitan num_stages = len + 1), " +
         std::to_string(per_rank) + " a rank over pp " + std::to_string(pp));
  if (per_rank > 1 && (schedule == "1f1b" || schedule == "gpipe")) {
    b.unmodelled(sp.setting, sp.line,
                 "torchtitan hands a single-stage schedule (" + schedule + ") only each rank's first stage "
                 "(pipeline.py build_pipeline_schedule: stages[0]); priced as " +
                     std::to_string(per_rank) + " stages a rank");
  }
  return per_rank;
}

void check_split_layers(const SplitPoints& sp, std::int64_t layers, std::int64_t stages, PlanBuilder& b) {
  std::vector<std::int64_t> at;
  bool named = true;
  for (const std::string& n : sp.names) {
    const std::int64_t i = layer_index(n);
    if (i < 0) named = false;
    at.push_back(i);
  }
  if (named && layers > 0 && at == even_split(layers, stages)) {
    b.note(sp.setting + " is torchtitan's own even split of " + str(layers) + " layers into " + str(stages) +
           " stages");
    return;
  }
  std::string sizes;
  if (named && layers > 0) {
    std::int64_t prev = 0;
    for (std::size_t i = 0; i <= at.size(); ++i) {
      const std::int64_t end = i < at.size() ? at[i] : layers;
      sizes += (i ? ", " : "") + str(end - prev);
      prev = end;
    }
    sizes = " (layers a stage: " + sizes + ")";
  }
  b.unmodelled(sp.setting, sp.line,
               "its " + str(stages) + " stages are counted" + sizes + ", but each stage's layers are priced as "
               "torchtitan's even split of the model's layers into " + str(stages) + " stages");
}

}  // namespace planck::import
