// planck import FRAMEWORK CONFIG: a docs/plan-format.md plan from a torchtitan, Lingua, Megatron-LM or
// DeepSpeed config, with the framework's own semantics (import/importer.h, docs/import.md).

#include <cstdint>
#include <memory>
#include <string>

#include "cli/command.h"
#include "cli/launcher_flags.h"
#include "cli/config_input.h"
#include "cli/plan_input.h"
#include "cli/verify_config.h"
#include "core/plan/plan.h"
#include "import/importer.h"

namespace planck::cli {
namespace {

struct ImportArgs {
  std::string framework;
  std::string config;
  std::string output = "-";
  std::int64_t nodes = 0;
  std::int64_t gpus_per_node = 0;
  std::int64_t nvlink_domain = 0;
  bool explain = false;
  std::string lingua_formula = "after-fix";
  std::string model;
  std::vector<std::string> python_path;
  RunFacts facts;
};

int run_import(const ImportArgs& a) {
  ConfigOptions config;
  if (a.nodes > 0) config.nodes = a.nodes;
  if (a.gpus_per_node > 0) config.gpus_per_node = a.gpus_per_node;
  if (a.nvlink_domain > 0) config.nvlink_domain = a.nvlink_domain;
  config.python_path = a.python_path;
  config.model = a.model;
  config.facts = a.facts;
  auto options = import_options(config);
  if (!options) {
    print_error(options.message());
    return kExitCannotRun;
  }
  planck::import::ImportOptions& opts = *options;
  opts.lingua_formula = a.lingua_formula == "before-fix" ? planck::import::LinguaFormula::kBeforeFix
                                                         : planck::import::LinguaFormula::kAfterFix;
  auto result = planck::import::import_file(a.framework, a.config, opts);
  if (!result) {
    print_error(result.message());
    return kExitCannotRun;
  }
  // --model replaces whatever the config implied (or the "model left out" gap); the run's facts
  // from the command line replace the config's.
  if (auto st = finish_import(*result, config); !st) {
    print_error(st.message());
    return kExitCannotRun;
  }
  for (const std::string& w : result->warnings) print_error("warning: " + w);
  for (const import::Unfollowed& u : result->unfollowed) {
    print_error(u.file + ":" + std::to_string(u.line) + ": error[config-unfollowed]: `" + u.construct +
                "` could not be followed (" + u.why + "), and it may set " + u.settings);
  }
  if (!result->unfollowed.empty()) {
    print_error("no plan written: " + unfollowed_fix());
    if (!a.explain) return kExitCannotRun;
  }
  if (a.explain) {
    // stderr, so `-o -` keeps stdout a clean plan.
    std::string out = "planck import " + a.framework + " " + a.config + ": what was inferred\n";
    for (const std::string& n : result->notes) {
      if (n.rfind("warning: ", 0) != 0) out += "  - " + n + "\n";
    }
    for (const std::string& h : result->hints) out += "  hint: " + h + "\n";
    std::fputs(out.c_str(), stderr);
  }
  if (!result->unfollowed.empty()) return kExitCannotRun;
  if (!write_output(a.output, result->plan.dump(2) + "\n")) return kExitCannotRun;
  return kExitOk;
}

void setup_import(CLI::App& app, Action& action) {
  auto a = std::make_shared<ImportArgs>();
  app.footer(
      "Every inference (a -1 degree, a derived batch, an \"auto\" value, the strategy the framework really "
      "builds) is written to the plan's \"notes\"; --explain prints them. A config the framework would reject "
      "is written as configured so `planck verify` reports it, or refused with exit 2 naming the numbers.\n"
      "Examples:\n"
      "  planck import torchtitan llama3_8b.toml --nodes 2 --gpus-per-node 8 -o plan.json\n"
      "  planck import torchtitan torchtitan/models/llama3/config_registry.py:llama3_70b --nodes 8 -o plan.json\n"
      "  planck import megatron train_llama3_8b.sh --explain -o plan.json && planck verify plan.json\n"
      "  planck import megatron-bridge examples/models/gpt_oss/slurm_pretrain.sh:2 --set TP=4 -o plan.json\n"
      "See docs/import.md.");
  app.add_option("framework", a->framework,
                 "torchtitan | lingua | megatron | megatron-bridge | deepspeed | llama-factory | accelerate | nemo | "
                 "neox | axolotl")
      ->required()
      ->check(CLI::IsMember(planck::import::framework_names()));
  app.add_option("config", a->config,
                 "the framework's config: torchtitan TOML or Python registry (config_registry.py:FUNCTION, "
                 "read with python3's parser, never run), Lingua YAML, Megatron launch script or args file, "
                 "Megatron-Bridge recipe (RECIPE.py:FUNCTION) or launch script running run_recipe.py (SCRIPT:N "
                 "picks one of several launches), DeepSpeed JSON, LLaMA-Factory training YAML (with the DeepSpeed "
                 "config it names), accelerate config, NeMo 1.x Hydra YAML (megatron_gpt_config.yaml), GPT-NeoX "
                 "YAML (the run's other files with --with), axolotl training YAML (with the DeepSpeed config it "
                 "names)")
      ->required();
  app.add_option("--nodes", a->nodes, "nodes of the cluster (default: the config's, else 1)")
      ->check(whole_number(1, core::kMaxWorld));
  app.add_option("--gpus-per-node", a->gpus_per_node, "GPUs per node (default: the config's, else 8)")
      ->check(whole_number(1, core::kMaxWorld));
  app.add_option("--nvlink-domain", a->nvlink_domain,
                 "GPUs sharing one NVLink domain, a whole number of nodes (GB200 / GB300 NVL72: up to 72 in trays "
                 "of 4): cluster.nvlink_domain (default: a node; a GB200 / GB300 Megatron-Bridge recipe: its rack)")
      ->check(whole_number(1, core::kMaxWorld));
  app.add_flag("--explain", a->explain, "print every inference and hint to stderr");
  app.add_option("--model", a->model,
                 "the model, when the config does not name one planck knows: a preset name, a JSON file holding "
                 "a plan's \"model\" value, or a Hugging Face config.json (read for hidden_size, layers, heads, "
                 "experts, MLA ranks...)");
  app.add_option("--python-path", a->python_path,
                 "a directory where the modules a Python config imports are looked for (repeatable; after the "
                 "config's directory and its parents, before PYTHONPATH)");
  app.add_option("--lingua-dp-rank-formula", a->lingua_formula,
                 "Lingua train.py's data-rank lines: after-fix (commit d1fd421, default) or before-fix "
                 "(dp_rank * |dp_replicate| + dp_shard rank, issues #58/#66)")
      ->check(CLI::IsMember({"before-fix", "after-fix"}));
  add_run_fact_options(app, a->facts);
  app.add_option("-o,--output", a->output, "plan file to write atomically ('-' = stdout, the default)");
  action = [a] { return run_import(*a); };
}

}  // namespace

PLANCK_COMMAND(import,
               "a plan from a torchtitan, Lingua, Megatron-LM, Megatron-Bridge, DeepSpeed, LLaMA-Factory, accelerate, "
               "NeMo, GPT-NeoX or axolotl config",
               setup_import);

}  // namespace planck::cli
