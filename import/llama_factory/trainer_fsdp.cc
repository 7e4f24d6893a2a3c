// The Hugging Face Trainer's own FSDP (TrainingArguments `fsdp` and `fsdp_config`, which a
// LLaMA-Factory YAML passes through): what accelerate's FullyShardedDataParallelPlugin is built with.
// Sources: huggingface/transformers@00349ae8 src/transformers/training_args.py _process_fsdp_args and
// trainer_utils.py FSDPOption; huggingface/accelerate@16cb6eb8 src/accelerate/utils/dataclasses.py
// FullyShardedDataParallelPlugin.__post_init__.

#include <cctype>
#include <sstream>
#include <string>
#include <vector>

#include "import/llama_factory/startup.h"

namespace planck::import::llama_factory {
namespace {

// trainer_utils.py FSDPOption: the values `fsdp` takes (FSDPOption(s) raises ValueError on others).
const char* const kTrainerFsdpOptions[] = {"full_shard",         "shard_grad_op", "no_shard", "hybrid_shard",
                                           "hybrid_shard_zero2", "offload",       "auto_wrap"};
// fsdp_config keys (the fsdp_ prefix stripped, as _process_fsdp_args does) that _process_fsdp_args,
// the Trainer (limit_all_gathers, activation_checkpointing) or accelerate's plugin read. Only
// version, reshard_after_forward and activation_checkpointing change what planck prices; the
// others choose wrapping, prefetching, loading and state-dict formats.
const char* const kTrainerFsdpConfigKeys[] = {"version",
                                              "reshard_after_forward",
                                              "activation_checkpointing",
                                              "min_num_params",
                                              "transformer_layer_cls_to_wrap",
                                              "backward_prefetch",
                                              "forward_prefetch",
                                              "use_orig_params",
                                              "sync_module_states",
                                              "cpu_ram_efficient_loading",
                                              "limit_all_gathers",
                                              "xla",
                                              "xla_fsdp_v2",
                                              "xla_fsdp_grad_ckpt",
                                              "xla_fsdp_settings",
                                              "state_dict_type",
                                              "auto_wrap_policy",
                                              "activation_cpu_offload"};

bool trainer_fsdp_listed(const std::string& name) {
  for (const char* k : kTrainerFsdpConfigKeys)
    if (name == k) return true;
  return false;
}

std::string lower_of(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

core::Result<bool> read_trainer_fsdp(YamlReader& y, const YAML::Node& root, PlanBuilder& b, const World& w) {
  const YAML::Node value = root["fsdp"];
  if (!value || value.IsNull()) return false;
  const int line = y.line_of(root, "fsdp");
  // _process_fsdp_args: False / "" is off, True is [full_shard], a string is split on whitespace.
  std::vector<std::string> options;
  if (value.IsScalar()) {
    const std::string text = lower_of(value.Scalar());
    if (text.empty() || text == "false") return false;
    if (text == "true") {
      options.push_back("full_shard");
    } else {
      std::istringstream words(value.Scalar());
      for (std::string word; words >> word;) options.push_back(word);
    }
  } else if (value.IsSequence()) {
    for (const YAML::Node& v : value)
      if (v.IsScalar()) options.push_back(v.Scalar());
  } else {
    return b.error(line, "fsdp: a string of options (\"full_shard auto_wrap\"), a list of them or a boolean "
                         "(TrainingArguments.fsdp)");
  }
  std::string strategy;
  bool offload = false;
  for (const std::string& o : options) {
    bool known = false;
    for (const char* k : kTrainerFsdpOptions) known |= o == k;
    if (!known) {
      return b.error(line, "fsdp option '" + o + "': not one of full_shard, shard_grad_op, no_shard, hybrid_shard, "
                           "hybrid_shard_zero2, offload, auto_wrap (transformers' FSDPOption raises ValueError)");
    }
    if (o == "offload") offload = true;
    if (o == "offload" || o == "auto_wrap") continue;
    if (!strategy.empty() && strategy != o) {
      return b.error(line, "fsdp gives both " + strategy + " and " + o + ": one sharding strategy (transformers "
                           "raises for full_shard with shard_grad_op; accelerate's plugin takes one)");
    }
    strategy = o;
  }
  if (options.size() == 1 && offload) {
    return b.error(line, "fsdp offload alone: transformers raises (`--fsdp offload` needs full_shard or "
                         "shard_grad_op with it, training_args.py _process_fsdp_args)");
  }
  // fsdp_config: a mapping in the YAML (a JSON file's path is read by transformers, not by planck).
  const YAML::Node config = root["fsdp_config"];
  auto get = [&](const std::string& key) -> YAML::Node {
    if (!config || !config.IsMap()) return YAML::Node();
    if (config["fsdp_" + key]) return config["fsdp_" + key];
    return config[key];
  };
  auto key_line = [&](const std::string& key) {
    if (!config || !config.IsMap()) return line;
    return config["fsdp_" + key] ? y.line_of(config, "fsdp_" + key) : y.line_of(config, key);
  };
  if (config && config.IsScalar() && !config.Scalar().empty()) {
    b.unmodelled("fsdp_config " + config.Scalar(), y.line_of(root, "fsdp_config"),
                 "the JSON file is not read; priced with its defaults (version 1, the fsdp option's strategy)");
  } else if (config && config.IsMap()) {
    for (const auto& kv : config) {
      std::string key = kv.first.Scalar();
      const std::string bare = key.rfind("fsdp_", 0) == 0 ? key.substr(5) : key;
      if (!trainer_fsdp_listed(bare)) {
        b.finding("unknown-key", y.line_of(config, key),
                  "fsdp_config." + key + " is not a key transformers' _process_fsdp_args or accelerate's FSDP plugin "
                  "reads (ignored)");
      }
    }
  }
  if (get("xla") && lower_of(get("xla").Scalar()) == "true") {
    return b.error(key_line("xla"), "fsdp_config.xla: PyTorch/XLA's FSDP on TPUs, which planck does not model");
  }
  const std::string version = get("version") ? get("version").Scalar() : "1";
  if (version != "1" && version != "2") {
    return b.error(key_line("version"), "fsdp_config.version " + version + ": accelerate's FSDP plugin takes 1 or 2");
  }
  if (strategy.empty()) {
    strategy = "full_shard";  // the plugin's FSDP_SHARDING_STRATEGY default (dataclasses.py)
    b.note("fsdp " + value.Scalar() + " names no sharding strategy: accelerate's default FULL_SHARD");
  }
  // Written after the mesh and rank program: inserting those keys moves the plan's other values.
  nlohmann::ordered_json par = nlohmann::ordered_json::object();
  bool reshard = strategy == "full_shard" || strategy == "hybrid_shard";
  if (version == "2") {
    // _process_fsdp_args passes reshard_after_forward = fsdp_config's, "false" when absent, and the
    // plugin ignores sharding_strategy under FSDP2 (deprecated for reshard_after_forward).
    const std::string after = get("reshard_after_forward") ? lower_of(get("reshard_after_forward").Scalar()) : "false";
    if (after != "true" && after != "false") {
      return b.error(key_line("reshard_after_forward"), "fsdp_config.reshard_after_forward " + after +
                                                            " with version 2: the plugin takes true or false");
    }
    reshard = after == "true";
    if (strategy != "full_shard") b.note("fsdp " + strategy + " is not read by FSDP2 (reshard_after_forward is)");
    strategy = "full_shard";
    if (!get("reshard_after_forward"))
      b.note("FSDP2 under the Hugging Face Trainer: reshard_after_forward false unless fsdp_config sets it "
             "(training_args.py _process_fsdp_args), so parameters stay gathered from forward to backward");
  }
  if (strategy == "no_shard") {
    b.set_mesh({"dp"}, {w.size});
    par["data_parallel"] = w.size > 1 ? "ddp" : "none";
    b.set_data_rank_program({"dp"}, "Hugging Face Trainer's DistributedSampler over torchrun's ranks");
    b.note("fsdp no_shard: FSDP keeps whole parameters on every rank and all-reduces gradients, as DDP");
  } else if (strategy == "hybrid_shard" || strategy == "hybrid_shard_zero2") {
    // torch FSDP _init_intra_and_inter_node_groups: shard within the node, replicate across nodes.
    b.set_mesh({"dp_replicate", "dp_shard"}, {w.nodes, w.gpus_per_node});
    par["data_parallel"] = "hsdp";
    par["fsdp_dims"] = {"dp_shard"};
    par["replicate_dims"] = {"dp_replicate"};
    b.set_data_rank_program({"dp_replicate", "dp_shard"},
                            "Hugging Face Trainer's DistributedSampler over torchrun's ranks");
    b.note("fsdp " + strategy + ": parameters sharded over each node's GPUs, replicated across the " +
           std::to_string(w.nodes) + " nodes");
  } else {
    b.set_mesh({"dp_shard"}, {w.size});
    par["data_parallel"] = "fsdp";
    b.set_data_rank_program({"dp_shard"}, "Hugging Face Trainer's DistributedSampler over torchrun's ranks");
    b.note("fsdp " + strategy + " (FSDP" + version + "): parameters, gradients and optimizer states sharded over " +
           std::to_string(w.size) + " ranks");
  }
  if (par["data_parallel"] != "ddp" && par["data_parallel"] != "none") par["reshard_after_forward"] = reshard;
  b.plan()["parallelism"] = par;
  b.locate("/parallelism/data_parallel", line);
  nlohmann::ordered_json& t = b.plan()["training"];
  t["stack"] = version == "2" ? "fsdp2" : "fsdp1";
  if (offload) {
    // FSDP1 CPUOffload(offload_params=True) / FSDP2 CPUOffloadPolicy: parameter and gradient shards on
    // the host, the optimizer step there.
    t["offload_params"] = "cpu";
    t["offload_optimizer"] = "cpu";
    b.locate("/training/offload_params", line);
  }
  return true;
}

void set_bf16_as_loaded(nlohmann::ordered_json& training, PlanBuilder& b, int line, const std::string& why) {
  training["master_dtype"] = "none";
  training["optimizer_state_dtype"] = "bf16";
  training["reduce_dtype"] = "bf16";
  b.locate("/training/master_dtype", line);
  b.note(why + ": weights, gradients and optimizer states in bf16 as loaded, no fp32 master copy");
}

}  // namespace planck::import::llama_factory
