// Megatron-Bridge launch scripts -> plans, one per launch the script runs (its slurm examples run
// one per entry of a PARALLELISM_CONFIGS array). A launch runs scripts/training/run_recipe.py
// with a recipe name and ConfigContainer overrides; the recipe is found in the Bridge sources
// (lookup.cc), evaluated by the recipe reader (bridge.cc) and the overrides applied on top in
// run_recipe.py's order (NVIDIA-NeMo/Megatron-Bridge@067f987d scripts/training/run_recipe.py
// main: the dataset preset, the convenience flags, the KEY=VALUE words, then
// recipe_runner.py's sync_model_pipeline_layout and sync_model_dataset_sequence_length). Each
// override's finding is placed at the line of the script that writes it.

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/plan/presets.h"
#include "import/bridge/launch.h"
#include "import/bridge/recipe.h"
#include "import/formats/python_config.h"
#include "import/importer.h"
#include "import/plan_builder.h"

namespace planck::import::bridge {

namespace {

using json = nlohmann::json;

enum class Kind { kRunRecipe, kPerformance, kScript };

struct LaunchCommand {
  const ShellCommand* cmd = nullptr;
  std::size_t py = 0;  // index of the .py word
  Kind kind = Kind::kRunRecipe;
};

std::optional<Kind> kind_of(const std::string& word) {
  if (word.size() < 4 || word.compare(word.size() - 3, 3, ".py") != 0 || word.find(' ') != std::string::npos)
    return std::nullopt;
  const std::string base = word.substr(word.rfind('/') + 1);
  if (word.find("scripts/performance/") != std::string::npos || base == "bootstrap.py") return Kind::kPerformance;
  if (base == "run_recipe.py") return Kind::kRunRecipe;
  if (base.rfind("pretrain_", 0) == 0 || base.rfind("finetune_", 0) == 0) return Kind::kScript;
  return std::nullopt;
}

// The cluster the launch states: torchrun's --nnodes / --nproc_per_node before the script, and
// the #SBATCH --nodes and ranks per node: srun starts --ntasks-per-node ranks on each node, or one
// torchrun per task that starts --nproc_per_node (else --gpus-per-node) ranks.
ConfigWorld launch_world(const std::vector<std::string_view>& lines, const LaunchCommand& l) {
  ConfigWorld w;
  auto number = [](const std::string& s) -> std::optional<std::int64_t> {
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    return std::stoll(s);
  };
  const auto& words = l.cmd->words;
  bool torchrun = false;
  std::optional<std::int64_t> nproc, nnodes;
  for (std::size_t k = 0; k < l.py; ++k) {
    std::string flag = words[k].text, value;
    torchrun = torchrun || flag == "torchrun" || flag.ends_with("/torchrun") || flag == "torch.distributed.run";
    if (auto eq = flag.find('='); eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag.resize(eq);
    } else if (k + 1 < l.py) {
      value = words[k + 1].text;
    }
    std::replace(flag.begin(), flag.end(), '_', '-');
    if (flag == "--nproc-per-node") nproc = number(value);
    if (flag == "--nnodes") nnodes = number(value);
  }
  const SbatchRequest sbatch = sbatch_request(lines);
  std::vector<std::string> from = sbatch.from;
  const auto& nodes = sbatch.nodes;
  const auto& tasks = sbatch.tasks_per_node;
  const auto& gpus = sbatch.gpus_per_node;
  if (nnodes || nproc) from.insert(from.begin(), "torchrun's flags (line " + std::to_string(l.cmd->line) + ")");
  w.nodes = nnodes ? nnodes : nodes;
  w.gpus_per_node = torchrun ? (nproc ? nproc : gpus) : (tasks ? tasks : gpus);
  for (const std::string& f : from) w.source += (w.source.empty() ? "" : ", ") + f;
  return w;
}

// Fields no layout, memory or time figure depends on: where checkpoints and logs go, schedules
// of the learning rate and of evaluation, data paths (Bridge's ConfigContainer sections
// training/config.py). An override of one of these is only noted.
bool cannot_matter(const std::string& key) {
  static const char* kPrefixes[] = {
      "checkpoint.",       "logger.",          "scheduler.",          "validation.",       "profiling.",
      "rng.",              "ft.",              "straggler.",          "nvrx_straggler.",   "inprocess_restart.",
      "tensor_inspect.",   "dist.distributed_timeout_minutes", "train.train_iters", "train.eval_iters",
      "train.eval_interval", "train.exit_",    "train.manual_gc",     "optimizer.lr",      "optimizer.min_lr",
      "optimizer.weight_decay", "optimizer.adam_", "optimizer.clip_grad", "tokenizer.tokenizer_model"};
  if (key == "dataset.seq_length" || key == "dataset.sequence_length") return false;
  if (key.rfind("dataset.", 0) == 0) return true;
  return std::any_of(std::begin(kPrefixes), std::end(kPrefixes),
                     [&](const char* p) { return key.rfind(p, 0) == 0; });
}

bool unknown_value(const std::string& text) {
  return text.empty() || text.find("$(") != std::string::npos || text.find("${") != std::string::npos;
}

struct Built {
  std::vector<Override> overrides;
  std::vector<Unfollowed> refused;
};

// The launch's overrides in run_recipe.py's order, each at the line writing it.
Built launch_overrides(const RunRecipeArgs& args, const json& recipe, const std::vector<std::string_view>& lines,
                       const std::string& path, const ImportOptions& options, PlanBuilder& b) {
  Built out;
  if (args.dataset) {
    // _apply_dataset: build_dataset_config(recipe, name) gives the preset the recipe's
    // model.seq_length (dataset_utils.py _resolve_seq_length), before any override.
    auto seq = recipe.find("model.seq_length");
    if (seq != recipe.end() && seq->contains("value") && !(*seq)["value"].is_null()) {
      out.overrides.push_back({"dataset.seq_length", (*seq)["value"], seq->value("file", path), seq->value("line", 0),
                               "--dataset " + args.dataset->text + " (its seq_length is the recipe's model.seq_length)"});
    }
  }
  auto add = [&](const ShellField& word, int line) {
    std::string text = word.text;
    const bool remove = !text.empty() && text[0] == '~';
    text.erase(0, std::min(text.find_first_not_of("+~"), text.size()));  // +key / ++key add, ~key deletes
    const std::size_t eq = text.find('=');
    const std::string key = text.substr(0, eq);
    const std::string value = eq == std::string::npos ? std::string() : text.substr(eq + 1);
    if (remove || unknown_value(value)) {
      const std::string why = remove ? "Hydra deletes the field, which then holds its dataclass default planck does "
                                       "not read"
                                     : "its value is not known without running the script (an unset shell variable "
                                       "or a command's output); pass it with --set NAME=VALUE";
      if (setting_matters(key)) {
        out.refused.push_back({path, line, word.text, why, key});
      } else {
        b.note(path + ":" + std::to_string(line) + ": " + word.text + " not applied (" + why + "; sets nothing planck "
               "reads)");
      }
      return;
    }
    out.overrides.push_back({key, override_value(value), path, line, word.text});
  };
  for (const auto& [word, flag] : args.flag_overrides) add(word, written_line(lines, flag, true, word.line));
  for (const ShellField& word : args.trailing) {
    std::string key = word.text.substr(0, word.text.find('='));
    add(word, written_line(lines, key + "=", false, word.line));
  }
  for (const auto& [name, text] : options.sets) {  // the command line's dotted --set wins over the script
    if (name.find('.') != std::string::npos) out.overrides.push_back({name, override_value(text), path, 0, "--set " + name + "=" + text});
  }
  return out;
}

// recipe_runner.py's syncs after the overrides: a recipe's layout builder reruns for an
// overridden pp / vp (planck does not run it: refused unless the layout is given too), uneven
// first / last stages that no longer fit are dropped, and model.seq_length follows
// dataset.seq_length.
void sync(const json& recipe, Built& built, const std::string& path, PlanBuilder& b) {
  json eff = recipe;
  std::set<std::string> given;
  for (const Override& o : built.overrides) {
    eff[o.key] = {{"value", o.value}, {"file", o.file}, {"line", o.line}};
    given.insert(o.key);
  }
  auto value = [&](const std::string& key) -> const json* {
    auto it = eff.find(key);
    return it != eff.end() && it->contains("value") && !(*it)["value"].is_null() ? &(*it)["value"] : nullptr;
  };
  const Override* topology = nullptr;
  for (const Override& o : built.overrides) {
    if (o.key == "model.pipeline_model_parallel_size" || o.key == "model.virtual_pipeline_model_parallel_size")
      topology = &o;
  }
  if (topology && !given.count("model.pipeline_model_parallel_layout")) {
    if (eff.contains("model._pipeline_model_parallel_layout_builder")) {
      built.refused.push_back(
          {topology->file, topology->line, topology->text,
           "run_recipe.py rebuilds the recipe's pipeline layout for the new pp / vp with its "
           "_pipeline_model_parallel_layout_builder (recipe_runner.py sync_model_pipeline_layout), code planck does "
           "not run; give the layout with --set model.pipeline_model_parallel_layout=...",
           "model.pipeline_model_parallel_layout"});
    } else if (topology->key == "model.pipeline_model_parallel_size" && !value("model.pipeline_model_parallel_layout")) {
      const json* first = value("model.num_layers_in_first_pipeline_stage");
      const json* last = value("model.num_layers_in_last_pipeline_stage");
      const json* layers = value("model.num_layers");
      const json* pp = value("model.pipeline_model_parallel_size");
      if ((first || last) && layers && pp && layers->is_number_integer() && pp->is_number_integer()) {
        const std::int64_t f = first && first->is_number_integer() ? first->get<std::int64_t>() : 0;
        const std::int64_t l = last && last->is_number_integer() ? last->get<std::int64_t>() : 0;
        const std::int64_t stages = pp->get<std::int64_t>() - (first ? 1 : 0) - (last ? 1 : 0);
        const std::int64_t rest = layers->get<std::int64_t>() - f - l;
        const bool fits = stages >= 0 && rest >= 0 && (stages > 0) == (rest > 0) && (stages == 0 || rest % stages == 0);
        for (const char* key : {"model.num_layers_in_first_pipeline_stage", "model.num_layers_in_last_pipeline_stage"}) {
          if (fits || !value(key) || given.count(key)) continue;
          built.overrides.push_back({key, nullptr, topology->file, topology->line,
                                     std::string(key) + "=None (run_recipe.py drops an uneven stage that no longer "
                                                        "fits the new pp: recipe_runner.py sync_model_pipeline_layout)"});
        }
      } else if (first || last) {
        b.warn(path + ":" + std::to_string(topology->line) + ": " + topology->text +
               ": run_recipe.py drops the recipe's uneven first / last stage when it no longer fits the new pp; "
               "planck cannot tell without the recipe's num_layers and keeps it");
      }
    }
  }
  auto it = eff.find("dataset.seq_length");
  const json* model_seq = value("model.seq_length");
  if (const json* seq = value("dataset.seq_length"); seq && (!model_seq || *model_seq != *seq)) {
    built.overrides.push_back({"model.seq_length", *seq, it->value("file", path), it->value("line", 0),
                               "model.seq_length=" + seq->dump() +
                                   " (run_recipe.py copies dataset.seq_length: recipe_runner.py "
                                   "sync_model_dataset_sequence_length)"});
  }
}

core::Result<ImportResult> run_recipe_launch(const LaunchCommand& l, const std::vector<std::string_view>& lines,
                                             const std::string& path, const ImportOptions& options,
                                             const ShellScript& script) {
  const int line = l.cmd->line;
  PLANCK_IMPORT_TRY(args, parse_run_recipe(l.cmd->words, l.py + 1, path, lines));
  ImportResult refused;  // a launch that cannot be followed: no plan, only what stops it
  refused.source_path = path;
  auto refuse = [&](int at, const std::string& construct, const std::string& why) {
    refused.unfollowed.push_back({path, at, construct, why, "the whole config"});
    return refused;
  };
  const ShellField& selector = args.recipe ? *args.recipe : *args.model;
  const int name_line = written_line(lines, args.recipe ? "--recipe" : "--model", true, selector.line);
  if (unknown_value(selector.text) || selector.text.find_first_of(" \t/") != std::string::npos) {
    return refuse(name_line, (args.recipe ? "--recipe " : "--model ") + selector.text,
                  "the recipe's name is not known without running the script; pass the variable with --set NAME=VALUE");
  }
  std::string mode = args.mode ? args.mode->text : infer_mode(selector.text).value_or("");
  auto task = [](const std::string& m) { return m == "lora" || m == "dora" ? std::string("peft") : m; };
  if (args.model && mode.empty()) {
    return core::Status::error(path + ":" + std::to_string(name_line) +
                               ": run_recipe.py --model needs --mode (\"Unable to infer training mode\")");
  }
  const std::string name = args.recipe ? selector.text : selector.text + "_" + task(mode) + "_config";
  if (args.recipe && args.mode) {
    const auto implied = infer_mode(name);
    if (implied && task(*implied) != task(mode)) {
      return core::Status::error(path + ":" + std::to_string(name_line) + ": run_recipe.py refuses --mode " + mode +
                                 " with recipe " + name + " (\"Mode '" + mode + "' is incompatible with recipe\")");
    }
  }
  std::string searched;
  const auto where = find_recipe(name, script_directory(path), options, &searched);
  if (!where) {
    return refuse(name_line, (args.recipe ? "--recipe " : "--model ") + selector.text,
                  "recipe " + name + " not found (searched " + searched +
                      "); pass --python-path DIR for a Megatron-Bridge checkout's src/");
  }
  // load_recipe calls the recipe with peft_scheme = the mode for lora / dora, where it takes one
  // (recipe_runner.py _load_with_optional_kwargs).
  std::vector<std::pair<std::string, json>> kwargs;
  if (mode == "lora" || mode == "dora") kwargs.emplace_back("peft_scheme", mode);
  PLANCK_IMPORT_TRY(doc, read_python_config(where->file, where->function, options, "Megatron-Bridge recipe", kwargs));
  const json functions = doc.value("functions", json::array());
  if (functions.empty()) return core::Status::error(where->file + ": no recipe function " + where->function);
  const json& fn = functions.front();

  PlanBuilder b("megatron-bridge", path);
  warn_unread_sets(script, options.sets, b);
  Built built = launch_overrides(args, fn.value("settings", json::object()), lines, path, options, b);
  sync(fn.value("settings", json::object()), built, path, b);
  for (const Override& o : built.overrides) {
    if (reads(o.key)) continue;
    if (cannot_matter(o.key))
      b.note((o.line > 0 ? path + ":" + std::to_string(o.line) + ": " : std::string()) + o.text +
             " (cannot change the layout, memory or time)");
    else
      b.unmodelled(o.text, o.line, "the plan is priced without it (planck reads it from no Bridge field)");
  }
  const ConfigWorld world = launch_world(lines, l);
  ImportOptions recipe_options = options;
  recipe_options.sets.clear();
  if (!recipe_options.nodes && world.nodes) recipe_options.nodes = world.nodes;
  if (!recipe_options.gpus_per_node && world.gpus_per_node) recipe_options.gpus_per_node = world.gpus_per_node;
  if (!world.source.empty() && (world.nodes || world.gpus_per_node)) {
    b.note("cluster: " + (world.nodes ? std::to_string(*world.nodes) + " nodes" : std::string("nodes not stated")) +
           " x " + (world.gpus_per_node ? std::to_string(*world.gpus_per_node) : std::string("8 (not stated)")) +
           " ranks each, from " + world.source + (options.nodes || options.gpus_per_node ? "; --nodes / --gpus-per-node win" : ""));
  }
  auto r = import_recipe(fn, where->file, path, built.overrides, recipe_options);
  if (!r) return r.status();
  r->positions[""] = line;
  r->position_files.erase("");
  ImportResult extra = b.finish();
  extra.notes.erase(extra.notes.begin());  // "imported by ...", which the recipe's notes already say
  r->notes.insert(r->notes.begin(), "launch: " + l.cmd->words[l.py].text + " at " + path + ":" + std::to_string(line) +
                                        " runs recipe " + name + " (" + where->how + ")");
  for (std::string& n : extra.notes) r->notes.push_back(std::move(n));
  for (ImportFinding& f : extra.findings) r->findings.push_back(std::move(f));
  for (std::string& w : extra.warnings) r->warnings.push_back(std::move(w));
  for (Unfollowed& u : built.refused) r->unfollowed.push_back(std::move(u));
  return r;
}

}  // namespace

}  // namespace planck::import::bridge

namespace planck::import {

core::Result<std::vector<NamedImport>> import_bridge_launch(std::string_view text, const std::string& path,
                                                            const ImportOptions& options) {
  std::vector<std::pair<std::string, std::string>> shell_sets;  // variables; dotted names are overrides
  for (const auto& s : options.sets) {
    if (s.first.find('.') == std::string::npos) shell_sets.push_back(s);
  }
  PLANCK_IMPORT_TRY(script, run_shell(text, path, shell_presets(std::move(shell_sets), options)));
  std::vector<bridge::LaunchCommand> launches;
  for (const ShellCommand& c : script.commands) {
    const std::string& first = c.words.front().text;
    if (first == "echo" || first == "printf") continue;  // a launch line printed, not run
    for (std::size_t i = 0; i < c.words.size(); ++i) {
      if (auto kind = bridge::kind_of(c.words[i].text)) {
        launches.push_back({&c, i, *kind});
        break;
      }
    }
  }
  if (launches.empty()) {
    return core::Status::error(path + ": no Megatron-Bridge launch (a line running scripts/training/run_recipe.py) "
                                      "found" + (script.warnings.empty() ? "" : "; " + script.warnings.front()));
  }
  const auto lines = split_lines(text);
  std::vector<NamedImport> out;
  for (const bridge::LaunchCommand& l : launches) {
    std::string name = l.cmd->loop;
    if (name.empty() && launches.size() > 1) name = "line " + std::to_string(l.cmd->line);
    if (l.kind != bridge::Kind::kRunRecipe) {
      ImportResult r;
      r.source_path = path;
      const std::string why =
          l.kind == bridge::Kind::kPerformance
              ? "scripts/performance picks the recipe from --model_family_name / --model_recipe_name / --gpu / "
                "--compute_dtype / --config_variant and applies its own defaults (argument_parser.py, "
                "utils/utils.py); planck reads scripts/training/run_recipe.py launches: verify the recipe function "
                "(RECIPE.py:FUNCTION) with --set a.b=c for each override"
              : "a Python training script builds the ConfigContainer itself; verify the recipe function it calls "
                "(RECIPE.py:FUNCTION) with --set a.b=c for each override";
      r.unfollowed.push_back({path, l.cmd->line, l.cmd->words[l.py].text + " ...", why, "the whole config"});
      out.push_back({name, std::move(r)});
      continue;
    }
    auto r = bridge::run_recipe_launch(l, lines, path, options, script);
    if (!r) return r.status();
    for (const std::string& a : script.assumptions) {
      if (std::find(r->hints.begin(), r->hints.end(), a) == r->hints.end()) r->hints.push_back(a);
    }
    for (const std::string& f : script.followed) {
      if (std::find(r->notes.begin(), r->notes.end(), f) == r->notes.end()) r->notes.push_back(f);
    }
    out.push_back({name, std::move(*r)});
  }
  return out;
}

}  // namespace planck::import
