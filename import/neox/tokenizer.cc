// The vocabulary of a GPT-NeoX run's tokenizer (import/neox/reader.h), as
// megatron/tokenizer/tokenizer.py builds it (EleutherAI/gpt-neox @ea7aefd): build_tokenizer:30-69
// picks the class by tokenizer_type (default GPT2BPETokenizer, neox_args.py:984-991), and
// _vocab_size_with_padding:72-86 pads its vocab_size to a multiple of make_vocab_size_divisible_by x
// model_parallel_size.

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/base/input_file.h"
#include "import/neox/reader.h"

namespace planck::import::neox {

namespace {

// Tokenizer files past this are not read (the largest real tokenizer.json files are ~10 MB).
constexpr std::int64_t kMaxTokenizerBytes = std::int64_t{32} << 20;

// The entries of a vocabulary file planck can read: a GPT-2 BPE encoder JSON (token -> id, what
// _GPT2BPETokenizer loads: its vocab_size is len(encoder)), or a Hugging Face tokenizers JSON
// (HFTokenizer: Tokenizer.get_vocab_size(), the model's vocab and the added tokens, each id once).
std::optional<std::int64_t> vocab_file_entries(const std::string& path, bool hf) {
  auto text = core::read_input(path, kMaxTokenizerBytes, "a tokenizer file");
  if (!text) return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  if (!hf) return static_cast<std::int64_t>(j.size());
  if (!j.contains("model") || !j["model"].is_object() || !j["model"].contains("vocab") ||
      !j["model"]["vocab"].is_object())
    return std::nullopt;
  std::set<std::int64_t> ids;
  for (const auto& [token, id] : j["model"]["vocab"].items()) {
    if (id.is_number_integer()) ids.insert(id.get<std::int64_t>());
  }
  if (j.contains("added_tokens") && j["added_tokens"].is_array()) {
    for (const auto& t : j["added_tokens"]) {
      if (t.is_object() && t.contains("id") && t["id"].is_number_integer()) ids.insert(t["id"].get<std::int64_t>());
    }
  }
  return static_cast<std::int64_t>(ids.size());
}

std::optional<TokenizerVocab> tokenizer_found(std::int64_t size, std::string how) {
  return TokenizerVocab{size, std::move(how)};
}

}  // namespace

core::Result<std::optional<TokenizerVocab>> neox_tokenizer_vocab(NeoxKeys& k, const std::string& config_path) {
  PLANCK_IMPORT_TRY(type_v, k.string("tokenizer_type"));
  PLANCK_IMPORT_TRY(file, k.string("vocab_file"));
  const std::string type = neox_lower(type_v.value_or("GPT2BPETokenizer"));
  const std::string written = type_v.value_or("GPT2BPETokenizer (NeoX's default)");
  if (type == "charleveltokenizer") return tokenizer_found(512, written + ": 512 (tokenizer.py:56-57)");
  if (type == "hfgpt2tokenizer" && (!file || *file == "gpt2")) {
    // GPT2TokenizerFast.from_pretrained("gpt2") and the <|padding|> token HFGPT2Tokenizer adds
    // (tokenizer.py:262-276); GPT-2's encoder has 50257 entries.
    return tokenizer_found(50258,
                          written + ": GPT-2's 50257 tokens and the <|padding|> it adds (tokenizer.py:262-276)");
  }
  if (!file) return std::optional<TokenizerVocab>();
  const bool hf = type == "hftokenizer";
  if (!hf && type != "gpt2bpetokenizer") return std::optional<TokenizerVocab>();
  // The file itself when it is where the run reads it (relative to the launch directory) or beside
  // the config; else the two files NeoX's own configs name.
  std::error_code ec;
  const std::filesystem::path beside = std::filesystem::path(config_path).parent_path() / *file;
  for (const std::filesystem::path& p : {std::filesystem::path(*file), beside}) {
    if (!std::filesystem::is_regular_file(p, ec)) continue;
    if (auto n = vocab_file_entries(p.string(), hf)) {
      return tokenizer_found(*n, written + " " + *file + ": " + std::to_string(*n) + " tokens, read from " +
                                    p.string());
    }
  }
  const std::string base = std::filesystem::path(*file).filename().string();
  // GPT-2's encoder.json (gpt2-vocab.json in NeoX's prepare_data.py downloads): 50257 entries.
  if (!hf && base == "gpt2-vocab.json") {
    return tokenizer_found(50257, written + " " + *file + ": GPT-2's 50257 tokens (the file is not here to read)");
  }
  // EleutherAI's 20B_tokenizer.json (the Pythia and GPT-NeoX-20B tokenizer): ids 0-50276.
  if (hf && base == "20B_tokenizer.json") {
    return tokenizer_found(50277, written + " " + *file +
                                     ": the GPT-NeoX-20B tokenizer's 50277 tokens (the file is not here to read)");
  }
  return std::optional<TokenizerVocab>();
}

std::optional<std::int64_t> neox_padded_vocab(std::int64_t size, std::int64_t multiple) {
  if (size < 1 || multiple < 1) return std::nullopt;
  return checked_mul(size / multiple + (size % multiple != 0 ? 1 : 0), multiple);
}

}  // namespace planck::import::neox
