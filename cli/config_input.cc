// The shared config input of every command (cli/config_input.h).

#include "cli/config_input.h"

#include <sstream>
#include <utility>
#include <vector>

#include "cli/command.h"
#include "cli/launcher_flags.h"
#include "core/plan/plan.h"
#include "core/plan/plan_load.h"
#include "core/plan/presets.h"

namespace planck::cli {

namespace {

constexpr std::int64_t kMaxFact = std::int64_t{1} << 40;

// One plan-level fact over the config's: written, noted, and no longer located at a config line.
void set_fact(import::ImportResult& r, const std::string& pointer, nlohmann::ordered_json value,
              const std::string& flag) {
  nlohmann::ordered_json::json_pointer p(pointer);
  const bool had = r.plan.contains(p);
  const std::string was = had && r.plan.at(p) != value ? " (the config says " + r.plan.at(p).dump() + ")" : "";
  r.plan[p] = value;
  r.positions.erase(pointer);
  r.position_files.erase(pointer);
  // An assumption the importer said about this field is settled by the command line.
  std::erase_if(r.findings, [&](const import::ImportFinding& f) {
    if (f.pointer != pointer) return false;
    std::erase_if(r.warnings, [&f](const std::string& w) { return w.find(f.message) != std::string::npos; });
    return true;
  });
  const std::string note = pointer.substr(1) + " = " + value.dump() + " from " + flag + was;
  r.notes.push_back(note);
  if (r.plan.contains("notes") && r.plan["notes"].is_array()) r.plan["notes"].push_back(note);
}

}  // namespace

void add_run_fact_options(CLI::App& app, RunFacts& f) {
  app.add_option_function<std::int64_t>(
         "--seq-len", [&f](const std::int64_t& v) { f.seq_len = v; },
         "tokens per sequence of the run, over the config's (a DeepSpeed JSON has none)")
      ->check(whole_number(1, kMaxFact));
  app.add_option_function<std::int64_t>(
         "--micro-batch", [&f](const std::int64_t& v) { f.micro_batch = v; },
         "sequences per GPU per micro-batch, over the config's (accumulation is then derived from the global batch)")
      ->check(whole_number(1, kMaxFact));
  app.add_option_function<std::int64_t>(
         "--global-batch", [&f](const std::int64_t& v) { f.global_batch = v; },
         "sequences per optimizer step over all data-parallel ranks, over the config's")
      ->check(whole_number(1, kMaxFact));
  app.add_option("--activation-checkpointing", f.checkpointing,
                 "what the run recomputes, over the config's (an accelerate config cannot say what its training "
                 "script enables): none, selective (op-level), selective_attention (Megatron's attention core), full")
      ->check(CLI::IsMember({"none", "selective", "selective_attention", "full"}));
  app.add_option("--gpu", f.gpu, "the cluster's GPU preset, over the config's (h100-sxm when neither names one)")
      ->check(CLI::IsMember(core::gpu_preset_names()));
  app.add_option("--set", f.sets,
                 "NAME=VALUE over the config (repeatable; the command line wins): a dotted key of a torchtitan TOML "
                 "or registry or a DeepSpeed JSON (parallelism.pipeline_parallel_degree=8, the names torchtitan's "
                 "CLI takes) or a Megatron-Bridge ConfigContainer override (model.tensor_model_parallel_size=4, as "
                 "run_recipe.py takes it), a shell variable or positional parameter of a launch script (TP=4, 1=dlc), "
                 "an environment variable a Python config reads with os.environ.get (TP=4)");
  app.add_option("--script-args", f.script_args,
                 "a launch script's positional arguments as one string: \"dlc A3B\" is $1=dlc $2=A3B");
  app.add_option("--with", f.with_files,
                 "a further YAML of a GPT-NeoX run, merged into the config as `deepy.py train.py a.yml b.yml` "
                 "merges them (repeatable, in order: the model config first, then local_setup.yml ...); a key "
                 "two files give is refused, as NeoX refuses it");
}

void add_config_options(CLI::App& app, ConfigOptions& o) {
  app.add_option("--framework", o.framework, "read a CONFIG as this framework's instead of detecting it")
      ->check(CLI::IsMember(import::framework_names()));
  app.add_option_function<std::int64_t>(
         "--nodes", [&o](const std::int64_t& v) { o.nodes = v; }, "nodes of the cluster, for a config that does not "
                                                                   "state it")
      ->check(whole_number(1, core::kMaxWorld));
  app.add_option_function<std::int64_t>(
         "--gpus-per-node", [&o](const std::int64_t& v) { o.gpus_per_node = v; },
         "GPUs per node, for a config that does not state it")
      ->check(whole_number(1, core::kMaxWorld));
  app.add_option_function<std::int64_t>(
         "--nvlink-domain", [&o](const std::int64_t& v) { o.nvlink_domain = v; },
         "GPUs sharing one NVLink domain, a whole number of nodes (GB200 / GB300 NVL72: up to 72 in trays of "
         "4): cluster.nvlink_domain; default a node")
      ->check(whole_number(1, core::kMaxWorld));
  app.add_option("--model", o.model,
                 "the model of a CONFIG (a preset, a JSON file holding a plan's \"model\", or a Hugging Face "
                 "config.json); not for planck plans");
  app.add_option("--python-path", o.python_path,
                 "a directory where the modules a Python config imports are looked for (repeatable; after the "
                 "config's directory and its parents, before PYTHONPATH)");
  add_run_fact_options(app, o.facts);
}

std::string config_flags_on_plan(const std::string& path, const ConfigOptions& o) {
  // Name only the options given, so the message never names one the user did not pass.
  std::vector<std::string> given;
  if (!o.model.empty()) given.push_back("--model");
  if (o.nodes) given.push_back("--nodes");
  if (o.gpus_per_node) given.push_back("--gpus-per-node");
  if (o.nvlink_domain) given.push_back("--nvlink-domain");
  if (!o.facts.empty())
    given.push_back(
        "the run options (--seq-len, --micro-batch, --global-batch, --gpu, --activation-checkpointing, --set, "
        "--with)");
  if (given.empty()) return "";
  std::string names;
  for (std::size_t i = 0; i < given.size(); ++i) {
    names += (i == 0 ? "" : i + 1 == given.size() ? " and " : ", ") + given[i];
  }
  return path + ": read as a planck plan, and " + names + (given.size() == 1 ? " applies" : " apply") +
         " to framework configs only (torchtitan, Lingua, Megatron, Megatron-Bridge, DeepSpeed, LLaMA-Factory, "
         "accelerate, NeMo, GPT-NeoX, axolotl); a "
         "planck plan states its own (edit it there), or pass --framework if FILE is one of those";
}

core::Result<import::ImportOptions> import_options(const ConfigOptions& o) {
  import::ImportOptions io;
  io.nodes = o.nodes;
  io.gpus_per_node = o.gpus_per_node;
  io.nvlink_domain = o.nvlink_domain;
  io.python_path = o.python_path;
  io.micro_batch = o.facts.micro_batch;
  io.global_batch = o.facts.global_batch;
  io.merge_files = o.facts.with_files;
  for (const std::string& s : o.facts.sets) {
    const std::size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0) return core::Status::error("--set " + s + ": expected NAME=VALUE");
    io.sets.emplace_back(s.substr(0, eq), s.substr(eq + 1));
  }
  std::istringstream words(o.facts.script_args);
  int n = 0;
  for (std::string w; words >> w;) io.sets.emplace_back(std::to_string(++n), w);
  return io;
}

core::Status finish_import(import::ImportResult& r, const ConfigOptions& o) {
  if (!o.model.empty()) {
    auto model = read_model_option("--model", o.model);
    if (!model) return model.status();
    apply_model_option(r, o.model, *model);
  }
  const RunFacts& f = o.facts;
  if (f.seq_len) set_fact(r, "/training/seq_len", *f.seq_len, "--seq-len");
  if (f.micro_batch) set_fact(r, "/training/micro_batch", *f.micro_batch, "--micro-batch");
  if (f.global_batch) set_fact(r, "/training/global_batch", *f.global_batch, "--global-batch");
  // A new micro or global batch: accumulation = global / (micro x dp), as the plan format derives it.
  if ((f.micro_batch || f.global_batch) && r.plan.contains("training") && r.plan["training"].contains("global_batch"))
    r.plan["training"].erase("grad_accumulation");
  if (!f.gpu.empty()) set_fact(r, "/cluster/gpu", f.gpu, "--gpu");
  if (!f.checkpointing.empty())
    set_fact(r, "/training/activation_checkpointing", f.checkpointing, "--activation-checkpointing");
  return core::Status::ok();
}

core::Result<std::vector<import::NamedImport>> import_config(const std::string& spec, const std::string& framework,
                                                             const ConfigOptions& options) {
  auto io = import_options(options);
  if (!io) return io.status();
  auto imported = import::import_all(framework, spec, *io);
  if (!imported) return imported.status();
  for (import::NamedImport& n : *imported) {
    if (auto st = finish_import(n.result, options); !st) return st;
  }
  return imported;
}

std::optional<PlanInput> load_plan_input(const std::string& path, const ConfigOptions& options) {
  auto framework = config_framework(path, options);
  if (!framework) {
    print_error(framework.message());
    return std::nullopt;
  }
  if (*framework == "plan") {
    if (const std::string e = config_flags_on_plan(path, options); !e.empty()) {
      print_error(e);
      return std::nullopt;
    }
    return load_plan_input(path);
  }
  auto io = import_options(options);
  auto r = io ? import::import_file(*framework, path, *io) : core::Result<import::ImportResult>(io.status());
  if (r) {
    if (auto st = finish_import(*r, options); !st) r = core::Result<import::ImportResult>(st);
  }
  if (!r) {
    print_error(r.message());
    return std::nullopt;
  }
  if (r->world_assumed) {
    print_error(path + ": the config does not state the cluster size; pass --nodes N --gpus-per-node G");
    return std::nullopt;
  }
  for (const std::string& w : r->warnings) print_error("warning: " + w);
  if (!r->unfollowed.empty()) {
    core::Diagnostics diags;
    for (const import::Unfollowed& u : r->unfollowed) diags.add(config_unfollowed(u, ""));
    print_load_failure(path, diags);
    return std::nullopt;
  }
  return plan_input_of(core::load_plan_text(r->plan.dump(2), path), path);
}

}  // namespace planck::cli
