// axolotl runs priced by the simulator's memory model (tests/import/priced.h), as `planck verify`
// prices them: what axolotl keeps on the GPU (axolotl-ai-cloud/axolotl@067b021c8).

#include <doctest/doctest.h>

#include <string>

#include "tests/import/import_test_util.h"
#include "tests/import/priced.h"

namespace planck::import::test {
namespace {

bool has_rule(const core::Diagnostics& d, const std::string& rule) {
  for (const core::Diagnostic& x : d.items()) {
    if (x.rule == rule) return true;
  }
  return false;
}

TEST_CASE("axolotl_bf16_full_fine_tuning_under_ddp_trains_the_bf16_weights_as_loaded") {
  // bf16 (here "auto") makes cfg.torch_dtype bfloat16 (utils/config/__init__.py:191-192), the dtype
  // the model is loaded in (loaders/model.py:611-612); without FSDP (which accelerate upcasts to
  // fp32) or DeepSpeed (its own fp32 master partition) the Trainer's optimizer updates those bf16
  // weights: no master copy, bf16 gradients, torch's optimizer states in the weights' dtype.
  ImportResult r = import_data_ok("axolotl", "axolotl/fft-8b.yaml", world(1, 8));
  const auto& t = r.plan["training"];
  CHECK(r.plan["parallelism"]["data_parallel"] == "ddp");
  CHECK(t["param_dtype"] == "bf16");
  CHECK(t["master_dtype"] == "none");
  CHECK(t["optimizer_state_dtype"] == "bf16");
  CHECK(t["reduce_dtype"] == "bf16");
  CHECK(t["optimizer"] == "adam8bit");  // paged_adamw_8bit: bitsandbytes' 8-bit AdamW
  // Llama 3.1 8B (8.03e9 weights) under DDP: 2 B of bf16 weights, 2 B of bf16 gradients and 2 B of
  // 8-bit Adam states (two 1-byte moments) per weight, 16.1 GB each, nothing for a master copy.
  // Priced with an fp32 master copy and fp32 gradients it was a false memory-exceeds (113 GB).
  r.plan["cluster"]["gpu"] = "h100-sxm";
  Priced p = price(r.plan);
  const double weights = 8.03e9;
  CHECK(static_cast<double>(p.memory.params) == doctest::Approx(2 * weights).epsilon(0.01));
  CHECK(static_cast<double>(p.memory.grads) == doctest::Approx(2 * weights).epsilon(0.01));
  CHECK(static_cast<double>(p.memory.optimizer) == doctest::Approx(2 * weights).epsilon(0.01));
  CHECK_FALSE(has_rule(p.diags, "memory-exceeds"));
  // Under FSDP accelerate upcasts the weights (the fp32 master copy stays); an adapter run keeps
  // PEFT's fp32 adapters as the LLaMA-Factory reader prices them.
  ImportResult fsdp = import_data_ok("axolotl", "axolotl/fft-8b-liger-fsdp.yaml", world(1, 8));
  CHECK(!fsdp.plan["training"].contains("master_dtype"));
  ImportResult lora = import_data_ok("axolotl", "axolotl/lora-8b.yml", world(1, 8));
  CHECK(!lora.plan["training"].contains("master_dtype"));
}

TEST_CASE("axolotl_qlora_base_is_a_memory_saving_the_price_keeps") {
  // examples/mistral/mixtral/mixtral.yml trains a QLoRA on Mixtral 8x7B: 46.7e9 weights in 4-bit NF4
  // are ~23 GB, but planck prices the frozen base in bf16 (93 GB), over an 80 GB H100. The finding
  // carries the saving, so `planck verify` says the memory-exceeds as a warning naming load_in_4bit
  // (cli/verify_config.cc), not a false error.
  const std::string text = replace(read_data("axolotl/qlora.yml"), "base_model: NousResearch/Meta-Llama-3-8B",
                                   "base_model: mistralai/Mixtral-8x7B-v0.1");
  ImportResult r = import_ok(&import_axolotl, text, world(1, 8));
  REQUIRE(r.plan["model"] == "mixtral-8x7b");
  bool saving = false;
  for (const ImportFinding& f : r.findings) saving = saving || f.memory_saving == "load_in_4bit true";
  CHECK(saving);
  r.plan["cluster"]["gpu"] = "h100-sxm";
  CHECK(has_rule(price(r.plan).diags, "memory-exceeds"));  // the upper bound the warning states
}

}  // namespace
}  // namespace planck::import::test
