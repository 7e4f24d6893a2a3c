// Megatron-Bridge's optimizer dtypes: ConfigContainer.optimizer is Megatron-Core's OptimizerConfig
// (megatron/core/optimizer/optimizer_config.py@d98e8a6: main_grads_dtype, main_params_dtype,
// exp_avg_dtype, exp_avg_sq_dtype, torch dtypes a recipe writes as torch.bfloat16 and the like).
// Megatron-LM's flags of the same names take the strings arguments.py maps to those dtypes
// (megatron/training/arguments.py:1076-1085: fp32, bf16, fp16, fp8 = torch.uint8), so a recipe's
// dtype becomes that string and the Megatron-LM importer reads it as it reads the flag.

#include <map>
#include <string>

#include "import/bridge/recipe.h"

namespace planck::import::bridge {

void read_optimizer_dtypes(nlohmann::json& settings, PlanBuilder& notes) {
  static const std::map<std::string, std::string> kTorch = {
      {"torch.float32", "fp32"}, {"torch.float", "fp32"}, {"torch.bfloat16", "bf16"},
      {"torch.float16", "fp16"}, {"torch.half", "fp16"},  {"torch.uint8", "fp8"}};
  for (const char* key : {"optimizer.main_params_dtype", "optimizer.exp_avg_dtype", "optimizer.exp_avg_sq_dtype",
                          "optimizer.main_grads_dtype"}) {
    auto it = settings.find(key);
    if (it == settings.end()) continue;
    nlohmann::json& s = *it;
    std::string text;
    if (s.contains("unknown")) {
      text = s.value("unknown", "");
    } else if (s.contains("value") && s["value"].is_string()) {
      text = s["value"].get<std::string>();
    }
    // Only a torch dtype is read: another expression stays the reader's "not evaluated" note.
    if (text.rfind("torch.", 0) != 0) continue;
    auto known = kTorch.find(text);
    // A dtype with no Megatron-LM spelling goes through as written: the importer warns that it
    // cannot price it (setting-unmodelled), never prices it as fp32 silently.
    s["value"] = known == kTorch.end() ? text : known->second;
    s.erase("unknown");
  }
  // Bridge builds the DDP's gradient buffer from ddp.grad_reduce_in_fp32 (set by mixed_precision,
  // training/mixed_precision.py), not from optimizer.main_grads_dtype: unlike Megatron-LM's
  // arguments.py, nothing lowers the gradients for it, so it is not passed as --main-grads-dtype.
  auto grads = settings.find("optimizer.main_grads_dtype");
  if (grads != settings.end() && grads->contains("value")) {
    const nlohmann::json& v = (*grads)["value"];
    notes.note("optimizer.main_grads_dtype = " + (v.is_string() ? v.get<std::string>() : v.dump()) +
               ": the gradients' dtype is ddp.grad_reduce_in_fp32's (Bridge's mixed_precision), as Megatron-Core "
               "uses the field only to check it");
    settings.erase(grads);
  }
}

}  // namespace planck::import::bridge
