// The command line of Megatron-Bridge's recipe runner, scripts/training/run_recipe.py
// (NVIDIA-NeMo/Megatron-Bridge@067f987d): --recipe NAME or --model STEM --mode MODE, its
// convenience flags (-tp 2 is model.tensor_model_parallel_size=2, COMMON_OVERRIDE_FIELDS), and the
// trailing Hydra-style KEY=VALUE ConfigContainer overrides, which win over the flags
// (_common_config_overrides, _collect_overrides, parse_args).

#include "import/bridge/launch.h"

#include <algorithm>
#include <string_view>
#include <string>
#include <utility>
#include <vector>

namespace planck::import::bridge {

namespace {

struct Option {
  const char* short_name;  // "-tp", or nullptr
  const char* long_name;   // "--tensor_model_parallel_size"
  const char* alt_name;    // "--step_func" beside "--step-func", or nullptr
  const char* key;         // the ConfigContainer field it sets, nullptr for the selection options
  bool takes_value;
};

// _build_parser's options, in COMMON_OVERRIDE_FIELDS order for those that set a field.
constexpr Option kOptions[] = {
    {"-ms", "--max_steps", nullptr, "train.train_iters", true},
    {"-gb", "--global_batch_size", nullptr, "train.global_batch_size", true},
    {"-mb", "--micro_batch_size", nullptr, "train.micro_batch_size", true},
    {"-sl", "--seq_length", nullptr, "dataset.seq_length", true},
    {"-tp", "--tensor_model_parallel_size", nullptr, "model.tensor_model_parallel_size", true},
    {"-pp", "--pipeline_model_parallel_size", nullptr, "model.pipeline_model_parallel_size", true},
    {"-cp", "--context_parallel_size", nullptr, "model.context_parallel_size", true},
    {"-vp", "--virtual_pipeline_model_parallel_size", nullptr, "model.virtual_pipeline_model_parallel_size", true},
    {"-ep", "--expert_model_parallel_size", nullptr, "model.expert_model_parallel_size", true},
    {"-etp", "--expert_tensor_parallel_size", nullptr, "model.expert_tensor_parallel_size", true},
    {nullptr, "--lr", nullptr, "optimizer.lr", true},
    {nullptr, "--min_lr", nullptr, "optimizer.min_lr", true},
    {nullptr, "--warmup_iters", nullptr, "scheduler.lr_warmup_iters", true},
    {nullptr, "--pretrained_checkpoint", nullptr, "checkpoint.pretrained_checkpoint", true},
    {nullptr, "--save_dir", nullptr, "checkpoint.save", true},
    {nullptr, "--load_dir", nullptr, "checkpoint.load", true},
    {nullptr, "--save_interval", nullptr, "checkpoint.save_interval", true},
    {nullptr, "--model", nullptr, nullptr, true},
    {nullptr, "--recipe", nullptr, nullptr, true},
    {nullptr, "--mode", nullptr, nullptr, true},
    {nullptr, "--step-func", "--step_func", nullptr, true},
    {nullptr, "--dataset", nullptr, nullptr, true},
    {nullptr, "--dry-run", "--dry_run", nullptr, false},
    {nullptr, "--deterministic", nullptr, nullptr, false},
    {nullptr, "--dump-env", "--dump_env", nullptr, false},
};

bool names(const Option& o, const std::string& w) {
  return (o.short_name && w == o.short_name) || w == o.long_name || (o.alt_name && w == o.alt_name);
}

}  // namespace

int written_line(const std::vector<std::string_view>& lines, const std::string& needle, bool word_end, int preferred) {
  auto writes = [&](std::string_view line) {
    const std::size_t hash = line.find_first_not_of(" \t");
    if (hash != std::string_view::npos && line[hash] == '#') return false;
    for (std::size_t p = line.find(needle); p != std::string_view::npos; p = line.find(needle, p + 1)) {
      const bool start_ok = p == 0 || std::string_view(" \t\"'(").find(line[p - 1]) != std::string_view::npos;
      const std::size_t after = p + needle.size();
      const bool end_ok = !word_end || after == line.size() || std::string_view(" \t=\"'\\").find(line[after]) !=
                                                                   std::string_view::npos;
      if (start_ok && end_ok) return true;
    }
    return false;
  };
  if (preferred >= 1 && static_cast<std::size_t>(preferred) <= lines.size() && writes(lines[preferred - 1]))
    return preferred;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (writes(lines[i])) return static_cast<int>(i + 1);
  }
  return preferred;
}

std::optional<std::string> infer_mode(const std::string& recipe) {
  // recipe_metadata.py infer_recipe_mode.
  std::string n = "_" + recipe + "_";
  for (char& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (n.find("_pretrain_") != std::string::npos) return "pretrain";
  if (n.find("_sft_") != std::string::npos || n.find("_finetune_") != std::string::npos) return "sft";
  if (n.find("_dora_") != std::string::npos) return "dora";
  if (n.find("_peft_") != std::string::npos || n.find("_lora_") != std::string::npos) return "lora";
  return std::nullopt;
}

core::Result<RunRecipeArgs> parse_run_recipe(const std::vector<ShellField>& words, std::size_t begin,
                                             const std::string& path, const std::vector<std::string_view>& lines) {
  RunRecipeArgs out;
  std::vector<std::pair<const Option*, ShellField>> given;  // convenience flags, in the order written
  auto fail_at = [&](int line, const std::string& what) {
    return core::Status::error(path + ":" + std::to_string(line) + ": run_recipe.py " + what +
                               " (scripts/training/run_recipe.py: argparse exits with an error)");
  };
  auto fail = [&](const ShellField& w, const std::string& what) {
    return fail_at(written_line(lines, w.text.substr(0, w.text.find('=')), true, w.line), what);
  };
  for (std::size_t k = begin; k < words.size(); ++k) {
    const ShellField& w = words[k];
    if (!w.text.empty() && w.text[0] == '-' && w.text.size() > 1) {
      const std::size_t eq = w.text.find('=');
      const std::string flag = w.text.substr(0, eq);
      const Option* o = nullptr;
      for (const Option& c : kOptions) o = !o && names(c, flag) ? &c : o;
      if (!o) {
        // argparse's default (allow_abbrev=True) would take a unique prefix of a long option; this
        // run_recipe.py sets allow_abbrev=False, which older copies of it (forks') do not.
        std::string longer;
        int prefixes = 0;
        for (const Option& c : kOptions) {
          for (const char* n : {c.long_name, c.alt_name}) {
            if (n && flag.size() > 2 && std::string_view(n).rfind(flag, 0) == 0 && longer != n) {
              longer = n;
              ++prefixes;
              break;
            }
          }
        }
        return fail(w, "does not take " + flag + " (\"Unknown option: " + flag + "\"" +
                           (prefixes == 1 ? "; it sets allow_abbrev=False, so " + flag + " is not read as " + longer +
                                                " as an older run_recipe.py would: write " + longer
                                          : std::string()) +
                           ")");
      }
      ShellField value{"", w.line};
      if (o->takes_value) {
        if (eq != std::string::npos) {
          value.text = w.text.substr(eq + 1);
        } else if (k + 1 < words.size()) {
          value = words[++k];
        } else {
          return fail(w, flag + " needs a value");
        }
      }
      const std::string long_name = o->long_name;
      if (long_name == "--recipe") out.recipe = value;
      else if (long_name == "--model") out.model = value;
      else if (long_name == "--mode") out.mode = value;
      else if (long_name == "--dataset") out.dataset = value;
      else if (o->key) given.emplace_back(o, value);
      out.flags.push_back(flag);
      continue;
    }
    if (w.text.find('=') == std::string::npos && (w.text.empty() || w.text[0] != '~')) {
      return fail(w, "expects KEY=VALUE overrides after its options, got '" + w.text + "'");
    }
    out.trailing.push_back(w);
  }
  if (out.recipe && out.model) return fail_at(out.recipe->line, "takes --model or --recipe, not both");
  if (!out.recipe && !out.model) return fail_at(words.empty() ? 0 : words.front().line, "needs --model or --recipe");
  // _common_config_overrides: the flags in COMMON_OVERRIDE_FIELDS order; a flag given twice keeps
  // argparse's last value.
  for (const Option& o : kOptions) {
    if (!o.key) continue;
    auto it = std::find_if(given.rbegin(), given.rend(), [&](const auto& g) { return g.first == &o; });
    if (it == given.rend()) continue;
    ShellField f = it->second;
    f.text = std::string(o.key) + "=" + f.text;
    out.flag_overrides.push_back({f, o.short_name ? o.short_name : o.long_name});
  }
  return out;
}

}  // namespace planck::import::bridge
