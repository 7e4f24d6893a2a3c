// distributed_type DEEPSPEED in an accelerate config: the DeepSpeed config DeepSpeedPlugin runs
// (huggingface/accelerate@16cb6eb8 src/accelerate/utils/dataclasses.py:1226-1330, set_mixed_precision
// :1415-1445), handed to the DeepSpeed importer.
//
// - deepspeed_config_file names a DeepSpeed JSON: it is the run. Beside it, the keys the plugin
//   would take from the accelerate config (zero_stage, offload_*, gradient_accumulation_steps,
//   gradient_clipping, zero3_save_16bit_model) make accelerate raise ValueError("When using
//   `deepspeed_config_file`, the following accelerate config variables will be ignored").
// - Otherwise the plugin builds {train_batch_size: "auto", train_micro_batch_size_per_gpu: "auto",
//   gradient_accumulation_steps, zero_optimization: {stage (default 2), offload_optimizer.device,
//   offload_param.device (default none)}, gradient_clipping when set}.
// - mixed_precision: fp16 adds fp16.enabled, bf16 and fp8 bf16.enabled where the config has no such
//   section, fills "auto", and raises when the other 16-bit type is enabled.

#include <filesystem>
#include <string>
#include <vector>

#include "import/accelerate/accelerate.h"
#include "import/llama_factory/startup.h"

namespace planck::import::accelerate {

namespace {

// The plugin's keys that a deepspeed_config_file makes accelerate refuse (_deepspeed_config_checks).
const std::vector<std::string> kIgnoredWithFile = {
    "gradient_accumulation_steps", "gradient_clipping",           "zero_stage",
    "offload_optimizer_device",    "offload_param_device",        "offload_param_nvme_path",
    "offload_optimizer_nvme_path", "zero3_save_16bit_model"};

// The plugin's own config from deepspeed_config's keys.
core::Result<nlohmann::ordered_json> plugin_config(YamlReader& y, const YAML::Node& ds, PlanBuilder& b,
                                                   const std::string& mp) {
  nlohmann::ordered_json c;
  c["train_batch_size"] = "auto";
  c["train_micro_batch_size_per_gpu"] = "auto";
  const std::string gas = scalar(ds, "gradient_accumulation_steps");
  if (gas.empty() || gas == "auto") {
    c["gradient_accumulation_steps"] = "auto";
  } else {
    PLANCK_IMPORT_TRY(n, y.integer(ds, "gradient_accumulation_steps", "deepspeed_config."));
    c["gradient_accumulation_steps"] = *n;
  }
  PLANCK_IMPORT_TRY(stage, y.integer(ds, "zero_stage", "deepspeed_config."));
  if (stage && (*stage < 0 || *stage > 3)) {
    return b.error(y.line_of(ds, "zero_stage"), "deepspeed_config.zero_stage " + str(*stage) + " is not 0, 1, 2 or 3");
  }
  if (!stage) b.note("deepspeed_config.zero_stage not set: accelerate's default 2 (DeepSpeedPlugin)");
  nlohmann::ordered_json zero;
  zero["stage"] = stage.value_or(2);
  for (const char* key : {"offload_optimizer_device", "offload_param_device"}) {
    const std::string dev = scalar(ds, key).empty() ? "none" : scalar(ds, key);
    if (dev != "none" && dev != "cpu" && dev != "nvme") {
      return b.error(y.line_of(ds, key), std::string("deepspeed_config.") + key + " " + dev +
                                             ": accelerate takes none, cpu or nvme");
    }
    zero[std::string(key) == "offload_param_device" ? "offload_param" : "offload_optimizer"] = {{"device", dev}};
  }
  c["zero_optimization"] = zero;
  const std::string clip = scalar(ds, "gradient_clipping");
  if (!clip.empty() && clip != "auto") {
    PLANCK_IMPORT_TRY(v, y.real(ds, "gradient_clipping", "deepspeed_config."));
    if (v && *v != 0) c["gradient_clipping"] = *v;
  }
  if (mp == "fp16") c["fp16"] = {{"enabled", true}, {"auto_cast", true}};
  if (mp == "bf16" || mp == "fp8") c["bf16"] = {{"enabled", true}};
  return c;
}

}  // namespace

core::Result<ImportResult> import_deepspeed_run(YamlReader& y, const YAML::Node& root, PlanBuilder& b,
                                                const World& world, const NdSizes& nd, const std::string& mp,
                                                const std::string& yaml_path, const ImportOptions& options) {
  const YAML::Node ds = root["deepspeed_config"];
  const bool has_map = ds && ds.IsMap();
  const int ds_line = y.line_of(root, "deepspeed_config");
  ImportOptions o = options;
  const bool assumed = b.world_assumed();
  if (!assumed) {
    o.nodes = world.nodes;  // the world resolved from the YAML and the command line, said above
    o.gpus_per_node = world.gpus_per_node;
  }
  const std::string file_v = has_map ? scalar(ds, "deepspeed_config_file") : "";
  std::string text, json_path = yaml_path;
  const bool from_file = !file_v.empty() && file_v != "none";
  if (from_file) {
    for (const std::string& key : kIgnoredWithFile) {
      if (!ds[key]) continue;
      return b.error(y.line_of(ds, key),
                     "deepspeed_config." + key + " beside deepspeed_config_file: accelerate raises \"When using "
                     "`deepspeed_config_file`, the following accelerate config variables will be ignored\" "
                     "(utils/dataclasses.py _deepspeed_config_checks); set it in the DeepSpeed file");
    }
    PLANCK_IMPORT_TRY(file, llama_factory::load_deepspeed(y, ds, b, yaml_path, "deepspeed_config_file",
                                                          "accelerate opens it from where `accelerate launch` runs"));
    // set_mixed_precision: the launcher's precision where the file leaves the 16-bit sections
    // absent or "auto"; a 16-bit type enabled against it is refused.
    if (mp != "no") {
      const char* other = mp == "fp16" ? "/bf16/enabled" : "/fp16/enabled";
      const nlohmann::json* on = file.at(other);
      const bool enabled = on && ((on->is_boolean() && on->get<bool>()) || (on->is_string() && *on == "true"));
      if (enabled) {
        return b.error(y.line_of(root, "mixed_precision"),
                       "mixed_precision " + mp + " with " + std::string(other + 1, 4) + " enabled in " + file.path +
                           ": accelerate raises \"`--mixed_precision` arg cannot be set to `" + mp + "` when `" +
                           std::string(other + 1, 4) + "` is set in the DeepSpeed config file\"");
      }
    }
    for (const char* dtype : {"fp16", "bf16"}) {
      const nlohmann::json* v = file.at(std::string("/") + dtype + "/enabled");
      if (v && !(v->is_string() && *v == "auto")) continue;
      const bool on = std::string(dtype) == "fp16" ? mp == "fp16" : (mp == "bf16" || mp == "fp8");
      o.fills.push_back({std::string(dtype) + ".enabled", on ? "true" : "false",
                         "the accelerate config's mixed_precision " + mp + " (DeepSpeedPlugin.set_mixed_precision)"});
    }
    text = std::move(file.text);
    json_path = file.path;
  } else {
    if (!has_map) b.note("no deepspeed_config: DeepSpeedPlugin's defaults (ZeRO stage 2, no offload)");
    PLANCK_IMPORT_TRY(c, plugin_config(y, has_map ? ds : YAML::Node(YAML::NodeType::Map), b, mp));
    text = c.dump();  // one line: every position the DeepSpeed importer records is line 1
    b.note("the DeepSpeed config DeepSpeedPlugin builds from deepspeed_config: " + c.dump());
  }
  if (nd.sp > 1) {
    // Accelerator._prepare_deepspeed hands DeepSpeed sequence_parallel_size = sp_size (ALST /
    // Ulysses, accelerator.py:2386-2415); the rest of the mesh is DeepSpeed's data parallelism.
    o.fills.push_back({"sequence_parallel_size", str(nd.sp), "parallelism_config_sp_size (accelerator.py)"});
  }
  if (nd.tp > 1 || nd.cp > 1) {
    b.unmodelled("parallelism_config tp / cp with DEEPSPEED", nd.line,
                 "accelerate's tp and cp sizes apply to FSDP2; priced without them");
  }
  auto imported = import_deepspeed(text, json_path, o);
  if (!imported) return imported.status();
  ImportResult r = std::move(*imported);
  if (from_file) {
    for (const auto& [pointer, line] : r.positions) r.position_files.emplace(pointer, json_path);
  } else {
    // The JSON is the plugin's, never a file: what it says is at the deepspeed_config section.
    const std::string at_one = yaml_path + ":1: ", at_section = yaml_path + ":" + str(ds_line) + ": ";
    for (auto& [pointer, line] : r.positions) line = ds_line;
    for (ImportFinding& f : r.findings) {
      if (f.file == yaml_path && f.line > 0) f.line = ds_line;
    }
    for (std::string& w : r.warnings) {
      if (w.rfind(at_one, 0) == 0) w = at_section + w.substr(at_one.size());
    }
  }
  r.world_assumed = r.world_assumed || assumed;
  r.plan["name"] = "accelerate-" + std::filesystem::path(yaml_path).stem().string();
  take_said(r, b.finish(), yaml_path);
  return r;
}

}  // namespace planck::import::accelerate
