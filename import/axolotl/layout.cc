// The layout of an axolotl run without DeepSpeed (axolotl-ai-cloud/axolotl@067b021c8).
//
// ND parallelism: utils/distributed.py:299-380 build_parallelism_config / _get_parallel_config_kwargs
// turns the YAML's sizes into accelerate's ParallelismConfig (the world left over after ep, tp and cp
// goes to dp_shard, or to dp_replicate beside a written dp_shard_size), whose device mesh is
// (ep, dp_replicate, dp_shard, cp, tp) (monkeypatch/accelerate/parallelism_config.py:84-92) and whose
// total must be the number of processes (parallelism_config.py:103-114 _validate_accelerator).
// FSDP: core/builders/base.py:684-686 passes fsdp_config (its fsdp_ prefixes stripped and the version
// pinned, utils/schemas/validation.py:1085-1120) and fsdp (True unless the deprecated list is written)
// to TrainingArguments, so the Hugging Face Trainer's _process_fsdp_args builds the plugin
// (import/llama_factory/trainer_fsdp.cc); offload_params reaches it as FSDP_OFFLOAD_PARAMS
// (utils/trainer.py:599-600), which FSDP's offload option sets too.

#include <string>
#include <vector>

#include "import/accelerate/accelerate.h"
#include "import/axolotl/axolotl.h"
#include "import/axolotl/keys.h"
#include "import/llama_factory/startup.h"

namespace planck::import::axolotl {

namespace {

// FSDPConfig fields (utils/schemas/fsdp.py) that the Trainer's fsdp_config never reads: axolotl
// reads them itself (offload_params as the environment variable, the version as fsdp_version).
bool axolotl_only_fsdp_key(const std::string& key) {
  for (const char* k : {"fsdp_version", "version", "offload_params", "cpu_offload_pin_memory", "final_state_dict_type",
                        "mixed_precision_policy"}) {
    if (key == k) return true;
  }
  return false;
}

// What the Trainer is given: `fsdp` and an fsdp_config holding the keys transformers reads, each
// value the YAML's own node (so its line) and the version axolotl pins.
YAML::Node trainer_view(const YAML::Node& root, PlanBuilder& b, bool offload, const std::string& version) {
  YAML::Node view(YAML::NodeType::Map);
  YAML::Node options(YAML::NodeType::Sequence);
  const YAML::Node written = root["fsdp"];
  if (written && written.IsSequence()) {
    for (const YAML::Node& o : written) options.push_back(o);
  } else if (written && written.IsScalar()) {
    options.push_back(written);
  } else {
    options.push_back("full_shard");  // fsdp True: transformers' [full_shard]
  }
  if (offload) options.push_back("offload");
  view["fsdp"] = options;
  YAML::Node config(YAML::NodeType::Map);
  const YAML::Node fc = root["fsdp_config"];
  if (fc && fc.IsMap()) {
    const auto known = config_fields(axolotl_classes(), "FSDPConfig");
    for (const auto& kv : fc) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
      // validation.py:1085-1101: fsdp_-prefixed keys lose the prefix (fsdp_version keeps it).
      const std::string bare = key.rfind("fsdp_", 0) == 0 && key != "fsdp_version" ? key.substr(5) : key;
      if (!known.count(bare) && bare != "version") {
        std::vector<std::string> names = field_names(known);
        b.unknown_key("fsdp_config." + key, YamlReader::line(kv.first), names);
        continue;
      }
      if (!axolotl_only_fsdp_key(bare)) config[bare] = kv.second;
    }
  }
  config["version"] = version;
  view["fsdp_config"] = config;
  return view;
}

// The FSDP version axolotl runs: fsdp_version, else fsdp_config's fsdp_version or version, else 1
// (validation.py:1107-1120 pins FSDP1 for a config that names none).
core::Result<std::string> fsdp_version(YamlReader& y, const YAML::Node& root, PlanBuilder& b) {
  PLANCK_IMPORT_TRY(top, y.integer(root, "fsdp_version", ""));
  if (top) return std::to_string(*top);
  const YAML::Node fc = root["fsdp_config"];
  for (const char* key : {"fsdp_version", "version"}) {
    PLANCK_IMPORT_TRY(v, y.integer(fc, key, "fsdp_config."));
    if (v) return std::to_string(*v);
  }
  b.note("FSDP1: no fsdp_version, axolotl pins version 1 (utils/schemas/validation.py:1116-1120)");
  return std::string("1");
}

std::string sizes_text(const Sizes& s) {
  return "expert_parallel_size " + str(s.ep) + ", tensor_parallel_size " + str(s.tp) + ", context_parallel_size " +
         str(s.cp) + ", dp_shard_size " + (s.shard ? str(*s.shard) : "unset") + ", dp_replicate_size " +
         (s.rep ? str(*s.rep) : "unset");
}

// _get_parallel_config_kwargs (utils/distributed.py:320-380) and the totals check accelerate makes:
// the (dp_replicate, dp_shard) the world leaves, or the error axolotl raises.
core::Result<accelerate::NdSizes> parallel_sizes(PlanBuilder& b, const World& w, const Sizes& s, bool fsdp) {
  const std::string fix = " (" + sizes_text(s) + "; world " + str(w.size) +
                          " from --nodes x --gpus-per-node): give sizes whose product is the world, or the world "
                          "the run has";
  std::int64_t rest = w.size;
  if (s.ep > 1) {
    if (rest % s.ep != 0) {
      return b.error(s.line, "expert_parallel_size " + str(s.ep) + " does not divide the world " + str(w.size) +
                                 ": axolotl raises \"expert_parallel_size must divide world_size\" "
                                 "(utils/distributed.py:335-338)" + fix);
    }
    rest /= s.ep;
  }
  accelerate::NdSizes nd;
  nd.given = true;
  nd.line = s.line;
  nd.tp = s.tp;
  nd.cp = s.cp;
  rest /= s.tp;  // Python's //, as the source: a size that does not divide is caught by the total below
  rest /= s.cp;
  bool shard_set = false, rep_set = false;
  if (!s.shard && (!s.rep || *s.rep == 1) && rest > 1) {
    nd.shard = rest;
    shard_set = true;
    rest = 1;
  }
  if (s.rep && *s.rep > 1) {
    nd.rep = *s.rep;
    rep_set = true;
    rest /= *s.rep;
  }
  if (rest > 1 && s.shard && *s.shard > 1) {
    if (!fsdp) {
      return b.error(s.line, "dp_shard_size " + str(*s.shard) + " without fsdp_config: axolotl raises \"dp_shard_size "
                             "was configured without a corresponding fsdp_config!\" (utils/distributed.py:359-363); "
                             "add fsdp_config (fsdp_version: 2) or drop dp_shard_size");
    }
    nd.shard = *s.shard;
    shard_set = true;
    rest /= *s.shard;
    if (rest > 1 && !rep_set) {
      nd.rep = rest;
      rest = 1;
    }
  }
  if (rest > 1 && !shard_set && fsdp) {
    nd.shard = rest;
    rest = 1;
  }
  if (rest > 1) {
    return b.error(s.line, "the parallel sizes leave " + str(rest) + " ranks of the world unplaced: axolotl raises "
                           "\"The configured parallelisms are incompatible with the current world size\" "
                           "(utils/distributed.py:376-380)" + fix);
  }
  const auto total = checked_product({s.ep, nd.rep, nd.shard, nd.tp, nd.cp});
  if (!total || *total != w.size) {
    return b.error(s.line, "the parallel sizes multiply to " + (total ? str(*total) : std::string("overflow")) +
                               ", not the world " + str(w.size) + ": accelerate raises \"ParallelismConfig total_size "
                               "does not match num_processes\" (axolotl monkeypatch/accelerate/parallelism_config.py:"
                               "103-114)" + fix);
  }
  // integrations/expert_parallel/plugin.py:275-290: ep x dp_shard x tp x cp must be the world.
  const auto ep_product = checked_product({s.ep, s.shard.value_or(1), s.tp, s.cp});
  if (s.ep > 1 && (!ep_product || *ep_product != w.size)) {
    return b.error(s.line, "expert_parallel_size x dp_shard_size x tensor_parallel_size x context_parallel_size is " +
                               (ep_product ? str(*ep_product) : std::string("overflow")) + ", not the world " +
                               str(w.size) + ": axolotl's expert-parallel plugin raises \"The product must equal "
                               "the world size\" (integrations/expert_parallel/plugin.py:283-290)" + fix);
  }
  return nd;
}

}  // namespace

core::Result<Sizes> read_sizes(YamlReader& y, const YAML::Node& root, PlanBuilder& b) {
  Sizes s;
  auto size = [&](const char* key, std::optional<std::int64_t>& out) -> core::Status {
    auto v = y.integer(root, key, "");
    if (!v) return v.status();
    if (!*v || **v == 0) return core::Status::ok();  // Python's `or 1`: 0 is unset
    if (**v < 0) return b.error(y.line_of(root, key), std::string(key) + " " + str(**v) + " is below 1");
    out = **v;
    const int at = y.line_of(root, key);
    if (s.line == 0 || (at > 0 && at < s.line)) s.line = at;
    return core::Status::ok();
  };
  std::optional<std::int64_t> tp, cp, sp, ep;
  for (auto [key, out] : {std::pair<const char*, std::optional<std::int64_t>*>{"tensor_parallel_size", &tp},
                          {"context_parallel_size", &cp},
                          {"sequence_parallel_degree", &sp},
                          {"expert_parallel_size", &ep},
                          {"dp_shard_size", &s.shard},
                          {"dp_replicate_size", &s.rep}}) {
    if (auto st = size(key, *out); !st) return st;
  }
  // validation.py:1634-1641: sequence_parallel_degree is the deprecated name of context_parallel_size.
  s.tp = tp.value_or(1);
  s.cp = cp ? *cp : sp.value_or(1);
  s.ep = ep.value_or(1);
  return s;
}

core::Status read_layout(YamlReader& y, const YAML::Node& root, PlanBuilder& b, const World& w, const Sizes& s) {
  const bool fsdp = (root["fsdp"] && !root["fsdp"].IsNull()) || (root["fsdp_config"] && !root["fsdp_config"].IsNull());
  accelerate::NdSizes nd;
  if (s.any()) {
    PLANCK_IMPORT_TRY(sized, parallel_sizes(b, w, s, fsdp));
    nd = sized;
  }
  if (s.ep > 1) {
    // parallelism_config.py:45-70: ep is a data axis, and the outer FSDP wrap shards the dense
    // weights over (ep, dp_shard, cp); the experts are sharded over ep alone.
    nd.shard *= s.ep;
    b.unmodelled("expert_parallel_size " + str(s.ep), s.line,
                 "ep priced as one more data-parallel axis (under FSDP, the dense weights sharded over ep x dp_shard "
                 "as axolotl's wrap does); the experts' placement on ep and their all-to-all are not priced");
  }
  if (fsdp) {
    PLANCK_IMPORT_TRY(version, fsdp_version(y, root, b));
    PLANCK_IMPORT_TRY(offload, y.boolean(root["fsdp_config"], "offload_params", "fsdp_config.", false));
    PLANCK_IMPORT_TRY(offload_old, y.boolean(root["fsdp_config"], "fsdp_offload_params", "fsdp_config.", false));
    const YAML::Node view = trainer_view(root, b, offload || offload_old, version);
    PLANCK_IMPORT_TRY(on, llama_factory::read_trainer_fsdp(y, view, b, w));
    (void)on;
    const int line = root["fsdp_config"] ? y.line_of(root, "fsdp_config") : y.line_of(root, "fsdp");
    b.locate("/parallelism/data_parallel", line);
    if (!s.any()) return core::Status::ok();
    if (version != "2") {
      b.unmodelled("ND parallelism sizes with FSDP1", s.line,
                   "accelerate's ParallelismConfig device mesh is built for FSDP2; priced as FSDP1 over the "
                   "whole world");
      return core::Status::ok();
    }
    nlohmann::ordered_json& par = b.plan()["parallelism"];
    accelerate::set_nd_mesh(b, w, nd, par);
    b.set_data_rank_program({"dp_replicate", "dp_shard"}, "accelerate's ParallelismConfig data-parallel ranks");
    return core::Status::ok();
  }
  nlohmann::ordered_json par = nlohmann::ordered_json::object();
  if (s.tp > 1 || s.cp > 1) {
    // No FSDP: DDP (accelerate's MULTI_GPU) replicates over the data ranks the sizes leave.
    nd.rep *= nd.shard;
    nd.shard = 1;
    accelerate::set_nd_mesh(b, w, nd, par);
    b.set_data_rank_program({"dp_replicate"}, "accelerate's ParallelismConfig data-parallel ranks");
  } else {
    b.set_mesh({"dp"}, {w.size});
    par["data_parallel"] = w.size > 1 ? "ddp" : "none";
    b.set_data_rank_program({"dp"}, "Hugging Face Trainer's DistributedSampler over torchrun's ranks");
    b.note("no deepspeed or fsdp_config: PyTorch DDP over the world (utils/config/__init__.py:221 ddp)");
  }
  b.plan()["parallelism"] = par;
  return core::Status::ok();
}

}  // namespace planck::import::axolotl
