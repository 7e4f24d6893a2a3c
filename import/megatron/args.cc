// Megatron-LM launch detection and flag access.

#include "import/megatron/args.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace planck::import {

namespace {

bool is_flag(const std::string& s) { return s.size() > 2 && s[0] == '-' && s[1] == '-'; }

// argparse: "--name value", "--name=value", or a bare "--switch". Underscores are taken as
// dashes (torchrun spells --nproc_per_node both ways).
void add_flags(const std::vector<ShellField>& words, std::size_t begin, std::size_t end,
               std::map<std::string, MegatronFlag>& out) {
  for (std::size_t i = begin; i < end; ++i) {
    const std::string& w = words[i].text;
    if (!is_flag(w)) continue;
    std::string name = w.substr(2);
    MegatronFlag f;
    f.line = words[i].line;
    if (auto eq = name.find('='); eq != std::string::npos) {
      f.value = name.substr(eq + 1);
      f.has_value = true;
      name.resize(eq);
    } else {
      // nargs='+' flags (--recompute-modules core_attn mlp, --data-path W1 P1 W2 P2) take every
      // word up to the next flag.
      while (i + 1 < end && !is_flag(words[i + 1].text)) {
        f.value += (f.has_value ? " " : "") + words[i + 1].text;
        f.has_value = true;
        ++i;
      }
    }
    f.written = name;
    for (char& c : name) c = c == '_' ? '-' : c;
    out[name] = f;
  }
}

// A script path: "pretrain_gpt.py", "$MEGATRON/pretrain_gpt.py"; not a message that mentions one.
bool ends_with_py(const std::string& s) {
  return s.size() > 3 && s.compare(s.size() - 3, 3, ".py") == 0 && s.find_first_of(" \t") == std::string::npos;
}

// What the launched script does, when its name says it does not train: Megatron-LM's text
// generation (tools/run_text_generation_server.py, examples/.../generate_samples_gpt.py), inference
// examples, data preprocessing and checkpoint conversion / export take the training flags too, but
// run no optimizer step. "" for a training entry point (pretrain_*.py, train.py, finetune*.py, ...).
std::string not_training(const std::string& script) {
  const std::size_t slash = script.find_last_of('/');
  std::string name = script.substr(slash == std::string::npos ? 0 : slash + 1);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (name.rfind("pretrain", 0) == 0 || name.find("train") != std::string::npos) return "";
  // Checkpoint converters are named after their direction (Pai-Megatron-Patch's hf2mcore_llama3_1.py,
  // mcore2hf_*.py; tools/checkpoint/convert.py) or the checkpoint itself.
  for (const char* what : {"generat", "inference", "server", "preprocess", "convert", "export", "quantiz", "merge",
                           "hf2", "2hf", "ckpt", "checkpoint", "eval"}) {
    if (name.find(what) != std::string::npos) return what;
  }
  // Megatron's tools/ (checkpoint conversion, preprocessing, tools/retro/main.py's database and index
  // builds, text generation servers) holds no training loop.
  if (script.rfind("tools/", 0) == 0 || script.find("/tools/") != std::string::npos) return "tools/";
  return "";
}

// Megatron's tasks/main.py runs what --task names (tasks/main.py:88-97 @ IEIT-Yuan/Yuan-2.0 2f59b3f,
// the tree Megatron-LM had before removing tasks/): RACE, MNLI, QQP and RET-FINETUNE-NQ finetune;
// LAMBADA and WIKITEXT103 are zero-shot evaluation, ICT-ZEROSHOT-NQ and RETRIEVER-EVAL retriever
// evaluation. tasks/msdp/main.py only prompts (MSDP-PROMPT) and scores (MSDP-EVAL-F1). What the
// task does when it does not train, "" otherwise (or when --task is not a literal).
std::string task_not_training(const ShellCommand& c, std::size_t py_index) {
  const std::string& script = c.words[py_index].text;
  auto ends = [&](const std::string& tail) {
    return script.size() >= tail.size() && script.compare(script.size() - tail.size(), tail.size(), tail) == 0;
  };
  if (ends("tasks/msdp/main.py")) return "dialogue prompting or scoring (tasks/msdp/main.py)";
  if (!ends("tasks/main.py")) return "";
  std::string task;
  for (std::size_t i = py_index + 1; i < c.words.size(); ++i) {
    const std::string& w = c.words[i].text;
    if (w == "--task" && i + 1 < c.words.size()) task = c.words[i + 1].text;
    if (w.rfind("--task=", 0) == 0) task = w.substr(7);
  }
  for (const char* t : {"LAMBADA", "WIKITEXT103", "ICT-ZEROSHOT-NQ", "RETRIEVER-EVAL"}) {
    if (task == t) return "the evaluation --task " + task + " (tasks/main.py)";
  }
  return "";
}

}  // namespace

core::Result<MegatronLaunch> find_megatron_launch(const ShellScript& script, const PlanBuilder& b) {
  MegatronLaunch launch;
  const ShellCommand* best = nullptr;
  std::size_t py_index = 0;
  for (const ShellCommand& c : script.commands) {
    // ms-swift's CLIs (`megatron sft|pt|rlhf`, `swift sft`: swift/cli/main.py) run their own entry
    // points: a .py among their words is a flag's value (--external_plugins plugin.py), not the launch.
    if (!c.words.empty() && (c.words.front().text == "megatron" || c.words.front().text == "swift")) continue;
    for (std::size_t i = 0; i < c.words.size(); ++i) {
      if (ends_with_py(c.words[i].text)) {
        best = &c;
        py_index = i;
        break;
      }
    }
  }
  if (best) {
    launch.script = best->words[py_index].text;
    launch.line = best->line;
    if (const std::string what = not_training(launch.script); !what.empty()) {
      return b.error(launch.line, "the launch runs " + launch.script + ", which does not train (its name says '" +
                                      what + "'): planck verifies training launches (pretrain_*.py, a training loop)");
    }
    if (const std::string what = task_not_training(*best, py_index); !what.empty()) {
      return b.error(launch.line, "the launch runs " + what + ", which does not train: planck verifies training "
                                                               "launches (pretrain_*.py, a finetuning --task)");
    }
    // A test suite run as a launch (Megatron-Bridge's functional tests: `torch.distributed.run ... -m
    // pytest tests/.../test_llama_recipes_pretrain_1b.py`): pytest collects and runs the test file's
    // cases, so its name and the flags around it say nothing of a training run.
    for (std::size_t i = 0; i < py_index; ++i) {
      const std::string& w = best->words[i].text;
      if (w == "pytest" || w == "py.test" || (w.size() > 7 && w.compare(w.size() - 7, 7, "/pytest") == 0)) {
        return b.error(launch.line, "the launch runs pytest on " + launch.script + ", a test suite, not a training "
                                    "entry point: planck verifies training launches (pretrain_*.py, a training "
                                    "loop); verify the config the test builds");
      }
    }
    for (const ShellCommand& c : script.commands) {  // the same script run before with other words
      if (&c == best || c.words.empty() || c.words.front().text == "echo") continue;
      const bool same = std::any_of(c.words.begin(), c.words.end(), [&](const ShellField& w) { return w.text == launch.script; });
      bool identical = c.words.size() == best->words.size();
      for (std::size_t k = 0; identical && k < c.words.size(); ++k) identical = c.words[k].text == best->words[k].text;
      if (same && !identical) launch.earlier.push_back(c.line);
    }
    add_flags(best->words, 0, py_index, launch.launcher);
    launch.before.assign(best->words.begin(), best->words.begin() + static_cast<std::ptrdiff_t>(py_index));
    add_flags(best->words, py_index + 1, best->words.size(), launch.flags);
    return launch;
  }
  // A plain args file: every command that is only flags and their values.
  for (const ShellCommand& c : script.commands) {
    if (!c.words.empty() && is_flag(c.words.front().text)) {
      if (launch.line == 0) launch.line = c.line;
      add_flags(c.words, 0, c.words.size(), launch.flags);
    }
  }
  if (launch.flags.empty()) {
    // Flags the script only collects (llm-jp's ALL_PARAMS+=( ... ) in a params file another script
    // sources), or a launcher that is not a .py (ms-swift's `megatron sft --tensor_model_parallel_size
    // 8`): said, so "no flags" is not claimed of a file full of them.
    std::string held, launcher;
    bool swift = false;
    const auto count_flags = [](const std::vector<ShellField>& words) {
      return std::count_if(words.begin(), words.end(), [](const ShellField& w) { return is_flag(w.text); });
    };
    for (const auto& [name, fields] : script.vars) {
      const auto flags = count_flags(fields);
      if (flags >= 3 && held.empty()) held = name + " (" + std::to_string(flags) + " flags)";
    }
    for (const ShellCommand& c : script.commands) {
      if (c.words.empty() || c.words.front().text == "echo" || c.words.front().text == "printf") continue;
      const auto flags = count_flags(c.words);
      if (flags >= 3 && launcher.empty()) {
        launcher = c.words.front().text + " at line " + std::to_string(c.line);
        swift = c.words.front().text == "megatron" || c.words.front().text == "swift";
      }
    }
    std::string why = "no Megatron launch command (a line running pretrain_*.py) and no --flags found";
    if (!held.empty()) why += "; the script collects flags in " + held + " and runs no launch with them: verify the "
                              "script that does (it sources this one)";
    if (!launcher.empty()) why += "; " + launcher + " runs a launcher that is not a .py script, which planck does "
                                  "not follow";
    if (swift) why += " (ms-swift's CLI, which builds Megatron-LM's arguments from its own and the Hugging Face config "
                      "of --model: write a planck plan for its layout)";
    // A shell function's body is read once where it is defined (no arguments), not at its calls: a
    // launch or `source "$1"` inside one is not followed (argonne-lcf's train-llama.sh sourceFile).
    for (const ShellCommand& c : script.commands) {
      if (c.words.empty() || std::find(script.functions.begin(), script.functions.end(), c.words.front().text) ==
                                 script.functions.end())
        continue;
      why += "; line " + std::to_string(c.line) + " calls the shell function " + c.words.front().text +
             ", which planck does not run at its call: a launch or a file it sources there is not read (inline it)";
      break;
    }
    return b.error(0, why);
  }
  return launch;
}

void relocate_flags(MegatronLaunch& launch, std::string_view text) {
  std::vector<std::string_view> lines;
  for (std::size_t pos = 0; pos <= text.size();) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  auto writes = [](std::string_view line, const std::string& flag) {
    for (std::size_t p = line.find(flag); p != std::string_view::npos; p = line.find(flag, p + 1)) {
      const std::size_t after = p + flag.size();
      if (after == line.size() || line[after] == ' ' || line[after] == '\t' || line[after] == '=' ||
          line[after] == '\\' || line[after] == '"')
        return true;
    }
    return false;
  };
  for (auto& [name, f] : launch.flags) {
    const std::string flag = "--" + (f.written.empty() ? name : f.written);
    if (f.line >= 1 && static_cast<std::size_t>(f.line) <= lines.size() && writes(lines[f.line - 1], flag)) continue;
    int found = 0;  // not written in this script (a sourced file's): no line of this file
    for (std::size_t i = 0; i < lines.size() && found == 0; ++i) {
      const std::size_t b = lines[i].find_first_not_of(" \t");
      if (b != std::string_view::npos && lines[i][b] == '#') continue;
      if (writes(lines[i], flag)) found = static_cast<int>(i + 1);
    }
    f.line = found;
  }
}

int MegatronFlags::line(const std::string& name) const {
  auto it = launch_.flags.find(name);
  return it == launch_.flags.end() ? 0 : it->second.line;
}

std::optional<std::string> MegatronFlags::string(const std::string& name) const {
  auto it = launch_.flags.find(name);
  if (it == launch_.flags.end() || !it->second.has_value) return std::nullopt;
  return it->second.value;
}

std::vector<std::string> MegatronFlags::strings(const std::string& name) const {
  std::vector<std::string> out;
  const auto v = string(name);
  if (!v) return out;
  std::size_t at = 0;
  while (at < v->size()) {
    const std::size_t end = std::min(v->find(' ', at), v->size());
    if (end > at) out.push_back(v->substr(at, end - at));
    at = end + 1;
  }
  return out;
}

core::Result<std::optional<std::int64_t>> MegatronFlags::integer(const std::string& name) const {
  auto it = launch_.flags.find(name);
  if (it == launch_.flags.end()) return std::optional<std::int64_t>();
  const MegatronFlag& f = it->second;
  const std::string& as_written = f.written.empty() ? name : f.written;
  std::int64_t v = 0;
  const std::string& s = f.value;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (!f.has_value || s.empty()) {
    return b_.error(f.line, "--" + as_written + " has no value (an unset shell variable?)");
  }
  if (ec != std::errc() || end != s.data() + s.size()) {
    return b_.error(f.line, "--" + as_written + " needs an integer, got '" + s + "'" +
                                (ec == std::errc::result_out_of_range ? " (out of 64-bit range)" : ""));
  }
  return std::optional<std::int64_t>(v);
}

core::Result<std::int64_t> MegatronFlags::positive(const std::string& name, std::int64_t dflt) const {
  auto v = integer(name);
  if (!v) return v.status();
  if (!v->has_value()) return dflt;
  if (**v < 1) return b_.error(line(name), "--" + name + " " + std::to_string(**v) + " must be >= 1");
  return **v;
}

}  // namespace planck::import
