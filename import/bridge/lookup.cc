// A recipe by the name a launch gives it, found in the Megatron-Bridge sources the way
// run_recipe.py's load_recipe finds it (NVIDIA-NeMo/Megatron-Bridge@067f987d
// scripts/training/recipe_runner.py load_recipe / find_benchmark_recipe / find_library_recipe,
// scripts/training/recipe_metadata.py BENCHMARK_RECIPE_PATTERN): a benchmark name in
// megatron.bridge.perf_recipes, else the library package megatron.bridge.recipes, which exports
// most names as aliases (`from ...h100.gpt_oss import gpt_oss_20b_pretrain_16gpu_h100_bf16_config
// as gpt_oss_20b_pretrain_config`). The files are read as text, never imported.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "core/base/input_file.h"
#include "core/base/regular_file.h"
#include "import/bridge/recipe.h"
#include "import/formats/python_config.h"

namespace planck::import::bridge {

namespace {

namespace fs = std::filesystem;


// The directory holding the `megatron` package of a Megatron-Bridge tree at `dir` (a checkout's
// root, its src/, or a site-packages), or "" when there is none.
std::string package_root(const fs::path& dir) {
  std::error_code ec;
  for (const fs::path& p : {dir / "src", dir}) {
    if (fs::is_directory(p / "megatron" / "bridge" / "recipes", ec)) return p.lexically_normal().string();
  }
  return "";
}

std::string read_text(const fs::path& p) {
  auto text = core::read_regular_file(p.string(), core::kMaxConfigBytes, core::kConfigLimitName);
  return text && *text ? std::move(**text) : std::string();
}

// The .py files of a package directory, in a fixed order: the package's own modules before its
// hardware subpackages' (recipes/gpt_oss/gpt_oss.py before recipes/gpt_oss/h100/gpt_oss.py),
// as find_library_recipe tries the package's exports before library_h100_modules().
std::vector<fs::path> python_files(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().extension() == ".py") out.push_back(it->path());
  }
  std::sort(out.begin(), out.end(), [](const fs::path& a, const fs::path& b) {
    const auto da = std::distance(a.begin(), a.end()), db = std::distance(b.begin(), b.end());
    return da != db ? da < db : a < b;
  });
  return out;
}

// A module name relative to `file` (`.h100.gpt_oss`) or absolute (`megatron.bridge.recipes.x`)
// -> its file under `root`.
std::optional<fs::path> module_file(const std::string& module, const fs::path& file, const fs::path& root) {
  fs::path base = root;
  std::string rest = module;
  if (!rest.empty() && rest[0] == '.') {
    base = file.parent_path();
    std::size_t dots = 0;
    while (dots < rest.size() && rest[dots] == '.') ++dots;
    for (std::size_t k = 1; k < dots; ++k) base = base.parent_path();
    rest = rest.substr(dots);
  }
  for (std::size_t start = 0; start < rest.size();) {
    const std::size_t dot = std::min(rest.find('.', start), rest.size());
    base /= rest.substr(start, dot - start);
    start = dot + 1;
  }
  std::error_code ec;
  if (fs::is_regular_file(base.string() + ".py", ec)) return fs::path(base.string() + ".py");
  if (fs::is_regular_file(base / "__init__.py", ec)) return base / "__init__.py";
  return std::nullopt;
}

// `def NAME(` in `text`, or the `from MODULE import REAL as NAME` it re-exports.
struct Hit {
  bool def = false;
  std::string module, real;
};
std::optional<Hit> find_in(const std::string& text, const std::string& name) {
  if (std::regex_search(text, std::regex("(^|\\n)def " + name + "\\("))) return Hit{true, "", name};
  std::smatch m;
  const std::regex alias("\\b([A-Za-z_][A-Za-z0-9_]*)\\s+as\\s+" + name + "\\b");
  if (!std::regex_search(text, m, alias)) return std::nullopt;
  const std::string before = text.substr(0, static_cast<std::size_t>(m.position(0)));
  std::smatch from;
  std::string module;
  const std::regex from_re("from\\s+([A-Za-z0-9_.]+)\\s+import");
  for (auto it = std::sregex_iterator(before.begin(), before.end(), from_re); it != std::sregex_iterator(); ++it) {
    module = (*it)[1];
  }
  if (module.empty()) return std::nullopt;
  return Hit{false, module, m[1]};
}

std::optional<RecipeLocation> find_under(const std::string& name, const fs::path& dir, const fs::path& root) {
  for (const fs::path& file : python_files(dir)) {
    const std::string text = read_text(file);
    if (text.find(name) == std::string::npos) continue;
    auto hit = find_in(text, name);
    if (!hit) continue;
    fs::path where = file;
    std::string real = hit->real;
    std::string how = "def " + name + " in " + file.string();
    for (int depth = 0; !hit->def && depth < 8; ++depth) {  // follow the alias chain
      auto next = module_file(hit->module, where, root);
      if (!next) break;
      const std::string next_text = read_text(*next);
      how += ", `" + real + (real == name ? "" : " as " + name) + "` from " + next->string();
      where = *next;
      hit = find_in(next_text, real);
      if (!hit) break;
      real = hit->real;
    }
    if (hit && hit->def) return RecipeLocation{where.string(), real, how};
  }
  return std::nullopt;
}

}  // namespace

std::optional<RecipeLocation> find_recipe(const std::string& name, const std::string& from_dir,
                                          const ImportOptions& options, std::string* searched) {
  if (!std::regex_match(name, std::regex("[A-Za-z_][A-Za-z0-9_]*"))) return std::nullopt;
  std::vector<std::string> roots;
  auto add = [&](const fs::path& dir) {
    const std::string r = package_root(dir);
    if (!r.empty() && std::find(roots.begin(), roots.end(), r) == roots.end()) roots.push_back(r);
  };
  // absolute("") throws: an empty directory is the current one.
  for (fs::path d = fs::absolute(from_dir.empty() ? "." : from_dir).lexically_normal(); !d.empty();
       d = d.parent_path()) {
    add(d);
    if (d == d.parent_path()) break;
  }
  for (const std::string& d : python_search_path(options)) add(d);
  for (const std::string& root : roots) {
    const fs::path bridge = fs::path(root) / "megatron" / "bridge";
    std::vector<fs::path> packages = {bridge / "recipes"};
    if (benchmark_run(name)) packages.insert(packages.begin(), bridge / "perf_recipes");
    for (const fs::path& package : packages) {
      auto found = find_under(name, package, root);
      if (!found) continue;
      if (fs::path(from_dir).is_relative()) {  // name files as the launch was named: relative to here
        std::error_code ec;
        const fs::path rel = fs::proximate(found->file, ec);
        if (!ec) found->file = rel.string();
      }
      return found;
    }
  }
  *searched = roots.empty() ? std::string("no Megatron-Bridge tree (src/megatron/bridge/recipes) in the script's "
                                          "directory, its parents, --python-path or PYTHONPATH")
                            : "megatron/bridge/perf_recipes and recipes under " + [&] {
                                std::string all;
                                for (const std::string& r : roots) all += (all.empty() ? "" : ", ") + r;
                                return all;
                              }();
  return std::nullopt;
}

}  // namespace planck::import::bridge
