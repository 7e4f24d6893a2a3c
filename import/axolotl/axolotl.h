#pragma once
// The axolotl importer's parts (import/axolotl/): the layout a YAML asks for (layout.cc: its ND
// parallelism sizes, FSDP through the Hugging Face Trainer, DDP) and what the trainer runs besides
// it (methods.cc: adapters, quantized base weights, RL, checkpointing, optimizer). axolotl.cc reads
// the rest and joins them. Sources: axolotl-ai-cloud/axolotl@067b021c8.

#include <cstdint>
#include <optional>
#include <string>

#include "import/formats/yaml_reader.h"
#include "import/importer.h"
#include "import/plan_builder.h"

namespace planck::import::axolotl {

// The ND parallelism sizes as written (utils/schemas/config.py:1091-1130 dp_shard_size,
// dp_replicate_size, context_parallel_size (sequence_parallel_degree before it), tensor_parallel_size;
// integrations/expert_parallel/args.py:23 expert_parallel_size): 1 when absent, dp_* unset when absent.
struct Sizes {
  std::int64_t tp = 1, cp = 1, ep = 1;
  std::optional<std::int64_t> shard, rep;
  int line = 0;  // the first size key's line, where a product that does not fit is reported
  bool any() const { return tp > 1 || cp > 1 || ep > 1 || shard || rep; }
};
core::Result<Sizes> read_sizes(YamlReader& y, const YAML::Node& root, PlanBuilder& b);

// The mesh, parallelism and FSDP runtime of a run without DeepSpeed, into `b`'s plan: the sizes
// checked as utils/distributed.py _get_parallel_config_kwargs and accelerate's ParallelismConfig
// check them against the world (an error at the sizes' line), FSDP read as the Trainer reads the
// fsdp_config axolotl hands it.
core::Status read_layout(YamlReader& y, const YAML::Node& root, PlanBuilder& b, const World& w, const Sizes& s);

// Adapters, quantization, RL, checkpointing, optimizer and unpriced methods, into `t` (the plan's
// training object). `ds_optimizer`: the DeepSpeed file's optimizer runs instead of the YAML's.
core::Status read_methods(YamlReader& y, const YAML::Node& root, PlanBuilder& b, nlohmann::ordered_json& t,
                          bool ds_optimizer);

}  // namespace planck::import::axolotl
