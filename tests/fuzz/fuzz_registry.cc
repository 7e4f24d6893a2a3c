// Fuzz target: the torchtitan registry reader (the .py path: planck's input gate, the framed
// bytes on python3's stdin, python/planck_torchtitan_registry.py's ast walk, and the JSON it
// prints mapped onto a plan). The input is the config_registry.py; when it holds a line
// "#--init--", what follows is the package's __init__.py beside it. Each input runs python3
// once (about 30 ms), so this target makes few executions per second: its job is the C++ side's
// handling of whatever the script prints and the script's handling of hostile Python.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "import/importer.h"
#include "tests/fuzz/fuzz_entry.h"

PLANCK_FUZZ_TARGET(registry) {
  namespace fs = std::filesystem;
  static const fs::path dir = fs::temp_directory_path() / ("planck-fuzz-registry-" + std::to_string(::getpid())) / "llama3";
  static const bool made = fs::create_directories(dir) || fs::is_directory(dir);
  if (!made) return 0;
  std::string text(reinterpret_cast<const char*>(data), size);
  std::string init;
  const std::size_t cut = text.find("\n#--init--\n");
  if (cut != std::string::npos) {
    init = text.substr(cut + 11);
    text.resize(cut + 1);
  }
  std::ofstream(dir / "config_registry.py", std::ios::binary) << text;
  if (cut != std::string::npos) {
    std::ofstream(dir / "__init__.py", std::ios::binary) << init;
  } else {
    std::error_code ec;
    fs::remove(dir / "__init__.py", ec);
  }
  planck::import::ImportOptions options;
  options.nodes = 1;
  options.gpus_per_node = 8;
  auto plans = planck::import::import_torchtitan_registry((dir / "config_registry.py").string(), "", options);
  (void)plans;
  return 0;
}
