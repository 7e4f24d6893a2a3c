// Megatron-Bridge's benchmark recipes name the run they were tuned for:
// <model>_<task>_<N>gpu_<hardware>_<precision>[_variant]_config
// (NVIDIA-NeMo/Megatron-Bridge@067f987d scripts/training/recipe_metadata.py
// BENCHMARK_RECIPE_PATTERN; perf_recipes/<family>/<hardware>/). The hardware and the GPU count are
// facts of the recipe as much as its parallel sizes: a B200 recipe priced on the default H100's
// 80 GB raises memory errors the run does not have.

#include <algorithm>
#include <charconv>
#include <regex>
#include <string>

#include "core/plan/presets.h"
#include "import/bridge/recipe.h"
#include "import/plan_builder.h"

namespace planck::import::bridge {

namespace {

struct HardwarePreset {
  const char* name;     // as Bridge names it
  const char* preset;   // the planck preset it is priced as
  bool exact;           // false: the nearest preset, said in a setting-unmodelled warning
  int gpus_per_node;    // a node as Bridge's executors launch it (utils/executors.py: 4 on GB / VR trays)
  const char* differs;  // what the nearest preset does not price
};
constexpr HardwarePreset kHardware[] = {
    {"h100", "h100-sxm", true, 8, ""},
    {"h200", "h200", true, 8, ""},
    {"b200", "b200", true, 8, ""},
    {"gb200", "gb200", true, 4, ""},
    {"b300", "b300", true, 8, ""},
    {"gb300", "gb300", true, 4, ""},
    {"vr200", "b200", false, 4, "Rubin's compute, memory and NVLink 6"},
};

const HardwarePreset* hardware(const std::string& name) {
  for (const HardwarePreset& h : kHardware) {
    if (name == h.name) return &h;
  }
  return nullptr;
}

}  // namespace

std::optional<BenchmarkRun> benchmark_run(const std::string& name) {
  static const std::regex kPattern(
      "_(pretrain|sft|peft)_([1-9][0-9]*)gpu_([a-z0-9]+)_(bf16|fp8cs|fp8ds|fp8mx|fp8sc|nvfp4)(_[a-z0-9_]+)?_config$");
  std::smatch m;
  if (!std::regex_search(name, m, kPattern)) return std::nullopt;
  BenchmarkRun run;
  const std::string gpus = m[2].str();
  if (std::from_chars(gpus.data(), gpus.data() + gpus.size(), run.gpus).ec != std::errc()) run.gpus = 0;
  run.hardware = m[3].str();
  return run;
}

std::string benchmark_world(const std::string& name, ImportOptions& options) {
  const std::optional<BenchmarkRun> run = benchmark_run(name);
  if (!run || run->gpus <= 0 || options.nodes || options.gpus_per_node) return "";
  const HardwarePreset* hw = hardware(run->hardware);
  const std::int64_t per_node = hw ? hw->gpus_per_node : 8;
  options.gpus_per_node = run->gpus % per_node == 0 ? per_node : run->gpus;
  options.nodes = run->gpus / *options.gpus_per_node;
  return "world " + std::to_string(run->gpus) + " GPUs (" + std::to_string(*options.nodes) + " nodes x " +
         std::to_string(*options.gpus_per_node) + ") from the recipe's name " + name +
         " (Megatron-Bridge's benchmark naming); --nodes / --gpus-per-node give another";
}

void benchmark_gpu(const std::string& name, const std::string& file, int line, ImportResult& r, PlanBuilder& b) {
  const std::optional<BenchmarkRun> run = benchmark_run(name);
  if (!run || r.plan["cluster"].contains("gpu")) return;
  const HardwarePreset* hw = hardware(run->hardware);
  // Pointing at /cluster/gpu, so that --gpu settles the warning.
  if (!hw) {
    b.finding("setting-unmodelled", line,
              "the recipe's hardware " + run->hardware + " (its name " + name +
                  ") has no planck preset: priced as h100-sxm; give --gpu",
              file, "/cluster/gpu");
    return;
  }
  r.plan["cluster"]["gpu"] = hw->preset;
  // A GB tray's 4 GPUs sit in an NVL72 rack whose NVLink reaches up to 18 trays: the job's domain
  // is the Slurm segment Bridge's executor asks for, all the trays up to 18, else the largest
  // divisor of the tray count up to 18 (scripts/performance/utils/executors.py, "--segment"):
  // 256 GPUs run as 4 segments of 64.
  auto& cluster = r.plan["cluster"];
  const std::int64_t rack = core::rack_nvlink_gpus(*core::gpu_preset(hw->preset));
  if (rack > 0 && !cluster.contains("nvlink_domain") && cluster.contains("gpus_per_node") &&
      cluster.contains("nodes")) {
    const std::int64_t gpn = cluster["gpus_per_node"].get<std::int64_t>();
    const std::int64_t nodes = cluster["nodes"].get<std::int64_t>();
    std::int64_t segment = std::min(nodes, rack / std::max<std::int64_t>(1, gpn));
    while (segment > 1 && nodes % segment != 0) --segment;
    if (gpn > 0 && segment > 1) {
      cluster["nvlink_domain"] = segment * gpn;
      b.note("nvlink_domain " + std::to_string(segment * gpn) + " (" + std::to_string(segment) + " trays of an NVL72 "
             "rack, the Slurm segment Megatron-Bridge's executor asks for) from the recipe's hardware " + hw->name +
             "; --nvlink-domain gives another");
    }
  }
  if (hw->exact) {
    b.note(std::string("gpu ") + hw->preset + " from the recipe's name " + name + "; --gpu gives another");
    return;
  }
  b.finding("setting-unmodelled", line,
            std::string("the recipe's hardware ") + hw->name + " (its name " + name + ") has no planck preset: priced as " +
                hw->preset + ", the nearest, without " + hw->differs + "; give --gpu, or a custom \"gpu\" in a plan",
            file, "/cluster/gpu");
}

}  // namespace planck::import::bridge
