#pragma once
// Megatron-Bridge launch scripts inside import/bridge/: the command line of the recipe runner
// (launch_args.cc) and the scripts around it (launch.cc).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "import/formats/shell_script.h"

namespace planck::import::bridge {

// What one `run_recipe.py ...` command says.
struct RunRecipeArgs {
  std::optional<ShellField> recipe, model, mode, dataset;
  // The convenience flags as KEY=VALUE overrides ("model.tensor_model_parallel_size=2"), in the
  // order run_recipe.py applies them, with the flag that gave each ("-tp").
  std::vector<std::pair<ShellField, std::string>> flag_overrides;
  std::vector<ShellField> trailing;  // the KEY=VALUE words, in order (applied after the flags)
  std::vector<std::string> flags;    // every option given, for the notes
};

// The line of the script (`lines`) writing `needle`, followed by a blank, '=', a quote, a
// backslash or the line's end when `word_end`: `preferred` when it does, else the first line
// outside a comment that does, else `preferred`. Words reach a launch through strings
// (CLI_OVERRIDES="...", bash -c "$CMD"), so the command's own line is rarely where one is written.
int written_line(const std::vector<std::string_view>& lines, const std::string& needle, bool word_end, int preferred);

// Parses the words after run_recipe.py (words[begin..]). An option run_recipe.py does not take, a
// word that is not KEY=VALUE, or --model with --recipe: an error naming path:line (the line of
// `lines` writing it), as argparse stops the run.
core::Result<RunRecipeArgs> parse_run_recipe(const std::vector<ShellField>& words, std::size_t begin,
                                             const std::string& path, const std::vector<std::string_view>& lines);

// The training mode a conventional recipe name encodes (recipe_metadata.py infer_recipe_mode).
std::optional<std::string> infer_mode(const std::string& recipe);

}  // namespace planck::import::bridge
