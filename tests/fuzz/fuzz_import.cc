// Fuzz target: the four importers. The first byte picks the framework (modulo 4, in
// framework_names() order); the rest is the config text. Seeds carry the byte that routes them.
#include "import/importer.h"
#include "tests/fuzz/fuzz_entry.h"

PLANCK_FUZZ_TARGET(import) {
  using namespace planck::import;
  if (size == 0) return 0;
  const std::vector<std::string>& names = framework_names();
  const std::string& framework = names[data[0] % names.size()];
  ImportFn fn = find_importer(framework);
  if (fn == nullptr) return 0;
  ImportOptions options;
  auto result = fn(planck::fuzz::as_text(data + 1, size - 1), "fuzz-config", options);
  (void)result;
  return 0;
}
