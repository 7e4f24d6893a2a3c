// IEIT-Yuan/Yuan-2.0's Megatron-LM fork: its uneven pipeline split, read as Megatron-LM's
// --pipeline-model-parallel-layout (args.h read_yuan_pipeline_blocks).

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "import/megatron/args.h"

namespace planck::import {

core::Status read_yuan_pipeline_blocks(MegatronLaunch& launch, PlanBuilder& b) {
  // Yuan-2.0 megatron/arguments.py @2f59b3f: --pipeline-model-parallel-method uniform | block (:770,
  // default uniform) and --pipeline-model-parallel-blocks "2,3,..." (:775). Under block, stage r
  // builds blocks[r] transformer layers (megatron/model/transformer.py:1492-1495) and the fork asserts
  // the list sums to --num-layers, has --pipeline-model-parallel-size entries and no virtual pipeline
  // (arguments.py:117-121); under uniform the list is not read. Megatron-LM's layout string with the
  // embedding on the first stage and the loss on the last is the same split.
  const auto method = launch.flags.find("pipeline-model-parallel-method");
  if (method == launch.flags.end() || method->second.value != "block") return core::Status::ok();
  if (launch.flags.count("pipeline-model-parallel-layout")) return core::Status::ok();
  const int line = method->second.line;
  const auto blocks = launch.flags.find("pipeline-model-parallel-blocks");
  if (blocks == launch.flags.end() || !blocks->second.has_value) {
    return b.error(line, "--pipeline-model-parallel-method block without --pipeline-model-parallel-blocks: Yuan's "
                         "arguments.py:119 splits None and stops at start-up");
  }
  if (launch.flags.count("num-layers-per-virtual-pipeline-stage")) {
    return b.error(line, "--pipeline-model-parallel-method block with --num-layers-per-virtual-pipeline-stage: Yuan's "
                         "arguments.py:118 asserts they are not combined");
  }
  const std::string& text = blocks->second.value;
  std::vector<std::int64_t> counts;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t end = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, end - at);
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos || item.size() > 9) {
      return b.error(blocks->second.line, "--pipeline-model-parallel-blocks " + text + ": '" + item +
                                              "' is not a layer count (Yuan's arguments.py:119 reads int() of each)");
    }
    counts.push_back(std::stoll(item));
    at = end + 1;
  }
  std::int64_t sum = 0;
  for (std::int64_t c : counts) sum += c;
  const auto layers = launch.flags.find("num-layers");
  if (layers != launch.flags.end() && layers->second.value != std::to_string(sum)) {
    return b.error(blocks->second.line, "--pipeline-model-parallel-blocks sums to " + std::to_string(sum) +
                                            " layers, not --num-layers " + layers->second.value +
                                            ": Yuan's arguments.py:120 asserts they are equal");
  }
  const auto pp = launch.flags.find("pipeline-model-parallel-size");
  const std::string stages = pp == launch.flags.end() ? "1" : pp->second.value;
  if (stages != std::to_string(counts.size())) {
    return b.error(blocks->second.line, "--pipeline-model-parallel-blocks has " + std::to_string(counts.size()) +
                                            " stages, not --pipeline-model-parallel-size " + stages +
                                            ": Yuan's arguments.py:121 asserts they are equal");
  }
  // Checked against --num-layers above when given; the layout is one letter a layer, so a list no
  // model could have is refused before it is written out.
  constexpr std::int64_t kMaxLayers = 1 << 20;
  if (sum > kMaxLayers) {
    return b.error(blocks->second.line, "--pipeline-model-parallel-blocks " + text + " sums to " + std::to_string(sum) +
                                            " layers, more than planck reads (" + std::to_string(kMaxLayers) + ")");
  }
  std::string layout;
  for (std::int64_t c : counts) {
    layout += layout.empty() ? 'E' : '|';
    layout.append(static_cast<std::size_t>(c), 't');
  }
  layout += "L";
  launch.flags["pipeline-model-parallel-layout"] =
      MegatronFlag{layout, true, blocks->second.line, "pipeline-model-parallel-layout"};
  b.note("--pipeline-model-parallel-method block --pipeline-model-parallel-blocks " + text +
         ": IEIT-Yuan/Yuan-2.0's uneven pipeline split (its arguments.py:117-121, transformer.py:1492-1495), read as "
         "Megatron-LM's --pipeline-model-parallel-layout with the embedding first and the loss last");
  return core::Status::ok();
}

}  // namespace planck::import
