#pragma once
// The accelerate importer's parts (import/accelerate/): the config's FSDP, DDP and single-process
// runs (accelerate.cc) and its DEEPSPEED runs (deepspeed_run.cc).

#include <cstdint>
#include <string>

#include "import/formats/yaml_reader.h"
#include "import/importer.h"
#include "import/plan_builder.h"

namespace planck::import::accelerate {

// The scalar at `key` of `map` as text ("" when absent or not a scalar), for messages and the
// string comparisons accelerate makes of its config values.
inline std::string scalar(const YAML::Node& map, const std::string& key) {
  const YAML::Node v = map[key];
  return v && v.IsScalar() ? v.Scalar() : "";
}

// parallelism_config (accelerate's ParallelismConfig): each size 1 unless written.
struct NdSizes {
  bool given = false;
  int line = 0;  // the parallelism_config: line
  std::int64_t rep = 1, shard = 1, tp = 1, cp = 1, sp = 1;
};

// The ParallelismConfig device mesh of `nd` on world `w` (FSDP2): the plan's mesh, its data-parallel
// strategy and dims into `par` (accelerate.cc; axolotl's ND parallelism builds the same config).
void set_nd_mesh(PlanBuilder& b, const World& w, const NdSizes& nd, nlohmann::ordered_json& par);

// distributed_type DEEPSPEED: the DeepSpeed config DeepSpeedPlugin runs (deepspeed_config_file,
// else the one it builds from deepspeed_config's keys), with the precision the launcher passes
// filled in, read by the DeepSpeed importer on the config's world. `b` holds what was said about
// the YAML so far; its notes and findings join the result.
core::Result<ImportResult> import_deepspeed_run(YamlReader& y, const YAML::Node& root, PlanBuilder& b,
                                                const World& world, const NdSizes& nd,
                                                const std::string& mixed_precision,
                                                const std::string& yaml_path, const ImportOptions& options);

}  // namespace planck::import::accelerate
