// Megatron-Bridge's loss kernel: model.cross_entropy_loss_fusion (GPTModelProvider's default True,
// src/megatron/bridge/models/gpt_provider.py:205@067f987d) with model.cross_entropy_fusion_impl
// (Megatron-Core's ModelParallelConfig, 'native' or 'te', default 'native'). With both, the model's
// compute_language_model_loss runs Transformer Engine's parallel_cross_entropy, which keeps the
// 16-bit logits for backward instead of an fp32 copy (training.cross_entropy = te). Bridge builds
// the model from Megatron-Core's config directly: Megatron-LM's start-up refusal of the pair
// (arguments.py, #5115) does not apply, so the Megatron-LM flags are not passed through.

#include <string>

#include "import/bridge/recipe.h"

namespace planck::import::bridge {

bool cross_entropy_field(const std::string& key) {
  return key == "model.cross_entropy_loss_fusion" || key == "model.cross_entropy_fusion_impl";
}

void read_cross_entropy(const nlohmann::json& settings, const std::string& main_path, PlanBuilder& notes,
                        ImportResult& r) {
  auto value = [&](const char* key) -> const nlohmann::json* {
    auto it = settings.find(key);
    return it != settings.end() && it->contains("value") ? &(*it)["value"] : nullptr;
  };
  const nlohmann::json* impl = value("model.cross_entropy_fusion_impl");
  const nlohmann::json* fusion = value("model.cross_entropy_loss_fusion");
  if (impl == nullptr) return;
  const auto& entry = *settings.find("model.cross_entropy_fusion_impl");
  const int line = entry.value("line", 0);
  const std::string file = entry.value("file", main_path) == main_path ? std::string() : entry.value("file", main_path);
  const std::string name = impl->is_string() ? impl->get<std::string>() : impl->dump();
  if (name != "te" && name != "native") {
    notes.finding("setting-unmodelled", line, "model.cross_entropy_fusion_impl " + name +
                  " is not modelled by planck: not one of Megatron-Core's (native, te); the loss priced as native's "
                  "fp32 copy of the logits", file);
    return;
  }
  const bool fused = fusion == nullptr || (fusion->is_boolean() && fusion->get<bool>());
  if (name != "te" || !fused) return;
  r.plan["training"]["cross_entropy"] = "te";
  r.positions["/training/cross_entropy"] = line;
  if (!file.empty()) r.position_files["/training/cross_entropy"] = file;
  const std::string fusion_default =
      fusion == nullptr ? " (cross_entropy_loss_fusion: True, GPTModelProvider's default)" : "";
  r.notes.push_back("model.cross_entropy_fusion_impl te" + fusion_default +
                    ": Transformer Engine's cross entropy keeps the 16-bit logits, no fp32 copy "
                    "(training.cross_entropy = te)");
}

}  // namespace planck::import::bridge
