// LoRA / PEFT where the configs state them (issue 30): LLaMA-Factory YAMLs (finetuning_type,
// lora_rank, lora_target), Megatron-Bridge recipes' peft (LoRA on Megatron's fused linears) and
// torchtitan's LoRAConverter target_modules. Frozen base weights keep their weights but take no
// gradients or optimizer states; adapters are priced from rank and targets. Expected memory is
// the closed form: adapters r x (in + out) per targeted matrix (Hu et al. 2021, LoRA §4.1), the
// weights 2 bytes each in bf16, adapter gradients in the reduce dtype and 12 optimizer bytes
// (ZeRO §3.1: fp32 master + Adam m, v) per adapter parameter.

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "core/mesh/plan_mesh.h"
#include "core/plan/plan_load.h"
#include "core/plan/presets.h"
#include "core/plan/trainable.h"
#include "core/schedule/schedule.h"
#include "sim/memory.h"
#include "tests/import/import_test_util.h"

namespace planck::import::test {
namespace {

sim::Memory memory_of(const nlohmann::ordered_json& plan) {
  core::LoadedPlan lp = core::load_plan_text(plan.dump(2), "imported.json");
  REQUIRE_MESSAGE(lp.plan.has_value(), plan.dump(2));
  auto mesh = core::plan_mesh(*lp.plan, nullptr);
  REQUIRE(mesh.has_value());
  auto schedule = core::lower(*lp.plan, *mesh);
  REQUIRE(schedule.is_ok());
  return sim::memory(*lp.plan, *mesh, *schedule);
}

bool has_finding(const ImportResult& r, const std::string& rule, const std::string& text) {
  for (const ImportFinding& f : r.findings) {
    if (f.rule == rule && f.message.find(text) != std::string::npos) return true;
  }
  return false;
}

// Llama-3-8B (meta-llama/Meta-Llama-3-8B config.json): hidden 4096, 32 heads and 8 KV heads of
// 128, ffn 14336, 32 layers, vocab 128256, untied.
constexpr double kH = 4096, kKv = 1024, kF = 14336, kLayers = 32;
constexpr double kWeights = kLayers * (2 * kH * kH + 2 * kH * kKv + 3 * kH * kF + 2 * kH) + 2 * 128256.0 * kH + kH;

TEST_CASE("peft_llamafactory_lora_all_on_llama3_8b_ddp_is_the_closed_form") {
  // hiyouga/LLaMA-Factory@ff6d4d12:examples/extras/loraplus/llama3_lora_sft.yaml: Meta-Llama-3-8B-
  // Instruct, finetuning_type lora, lora_rank 8, lora_target all, per_device_train_batch_size 1,
  // gradient_accumulation_steps 8, cutoff_len 2048, bf16, no deepspeed (torchrun DDP).
  const std::string path = data_path("llama-factory/examples/extras/loraplus/llama3_lora_sft.yaml");
  auto imported = import_file("llama-factory", path, world(1, 8));
  REQUIRE_MESSAGE(imported.is_ok(), (imported.is_ok() ? std::string() : imported.message()));
  const ImportResult& r = *imported;
  CHECK(detect_framework(path, read_data("llama-factory/examples/extras/loraplus/llama3_lora_sft.yaml")) ==
        "llama-factory");
  CHECK(r.findings.empty());  // every key is LLaMA-Factory's or the Hugging Face trainer's
  CHECK(r.plan["model"] == "llama3-8b");
  CHECK(r.plan["parallelism"]["data_parallel"] == "ddp");
  CHECK(r.plan["training"]["lora_rank"] == 8);
  CHECK_FALSE(r.plan["training"].contains("lora_targets"));  // "all": every linear of each layer
  CHECK(r.plan["training"]["seq_len"] == 2048);
  CHECK(r.plan["training"]["micro_batch"] == 1);
  CHECK(r.plan["training"]["grad_accumulation"] == 8);
  CHECK(r.plan["training"]["activation_checkpointing"] == "full");  // LLaMA-Factory's default
  // q 4096+4096, k and v 4096+1024 each, o 4096+4096, gate and up 4096+14336, down 14336+4096.
  const double adapters = kLayers * 8 * (2 * (kH + kH) + 2 * (kH + kKv) + 3 * (kH + kF));
  const sim::Memory m = memory_of(r.plan);
  CHECK(static_cast<double>(m.params) == doctest::Approx((kWeights + adapters) * 2).epsilon(1e-9));
  CHECK(static_cast<double>(m.grads) == doctest::Approx(adapters * 4).epsilon(1e-9));
  CHECK(static_cast<double>(m.optimizer) == doctest::Approx(adapters * 12).epsilon(1e-9));

  // The classic target set q_proj,v_proj: only those two matrices get adapters.
  std::string text = read_data("llama-factory/examples/extras/loraplus/llama3_lora_sft.yaml");
  text.replace(text.find("lora_target: all"), 16, "lora_target: q_proj,v_proj");
  ImportResult qv = import_ok(import_llama_factory, text, world(1, 8), path);
  CHECK(qv.plan["training"]["lora_targets"] == nlohmann::ordered_json::array({"q", "v"}));
  const double qv_adapters = kLayers * 8 * ((kH + kH) + (kH + kKv));
  CHECK(static_cast<double>(memory_of(qv.plan).optimizer) == doctest::Approx(qv_adapters * 12).epsilon(1e-9));
  // A module Llama has not: said, not priced.
  text.replace(text.find("q_proj,v_proj"), 13, "q_proj,c_attn");
  ImportResult bad = import_ok(import_llama_factory, text, world(1, 8), path);
  CHECK(has_finding(bad, "setting-unmodelled", "lora_target c_attn"));
  // A key neither LLaMA-Factory nor the trainer defines.
  std::string typo = read_data("llama-factory/examples/extras/loraplus/llama3_lora_sft.yaml");
  typo.replace(typo.find("lora_rank:"), 10, "lora_rnak:");
  ImportResult u = import_ok(import_llama_factory, typo, world(1, 8), path);
  CHECK(has_finding(u, "unknown-key", "did you mean 'lora_rank'"));
}

TEST_CASE("peft_llamafactory_deepspeed_yaml_fills_the_auto_values_and_says_qlora") {
  // examples/train_lora/qwen3_lora_sft_ds3.yaml names examples/deepspeed/ds_z3_config.json (every
  // batch and dtype field "auto"): the run is ZeRO-3 with the YAML's micro-batch 1, accumulation 2
  // and bf16, filled as Hugging Face's HfTrainerDeepSpeedConfig does, so no "auto" is left to warn.
  auto ds3 = import_file("llama-factory", data_path("llama-factory/examples/train_lora/qwen3_lora_sft_ds3.yaml"),
                         world(2, 8));
  REQUIRE_MESSAGE(ds3.is_ok(), (ds3.is_ok() ? std::string() : ds3.message()));
  CHECK(ds3->plan["parallelism"]["data_parallel"] == "zero3");
  CHECK(ds3->plan["training"]["micro_batch"] == 1);
  CHECK(ds3->plan["training"]["grad_accumulation"] == 2);
  CHECK(ds3->plan["training"]["global_batch"] == 1 * 2 * 16);
  CHECK(ds3->plan["training"]["param_dtype"] == "bf16");
  CHECK(ds3->plan["training"]["lora_rank"] == 8);
  for (const ImportFinding& f : ds3->findings) CHECK_MESSAGE(f.message.find("auto") == std::string::npos, f.message);
  // QLoRA (examples/extras/fsdp_qlora/llama3_lora_sft.yaml quantization_bit 4): the 4-bit base is said.
  auto qlora = import_file("llama-factory", data_path("llama-factory/examples/extras/fsdp_qlora/llama3_lora_sft.yaml"),
                           world(1, 8));
  REQUIRE(qlora.is_ok());
  CHECK(has_finding(*qlora, "setting-unmodelled", "quantization_bit 4"));
  const std::string q = read_data("llama-factory/examples/extras/fsdp_qlora/llama3_lora_sft.yaml");
  const int line = 1 + static_cast<int>(std::count(q.begin(), q.begin() + static_cast<std::ptrdiff_t>(q.find("quantization_bit")), '\n'));
  CHECK(qlora->findings.front().line == line);
}

TEST_CASE("peft_megatron_bridge_lora_recipe_adapts_the_fused_linears") {
  // NVIDIA-NeMo/Megatron-Bridge@067f987d recipes/llama/h100/llama3.py llama3_8b_peft_1gpu_h100_bf16_config:
  // peft_scheme "lora" (its default) -> default_peft_config -> LoRA(), then dim 8 (the recipe's
  // `peft_cfg.dim = 8`), target_modules LoRA's default linear_qkv, linear_proj, linear_fc1,
  // linear_fc2 (peft/lora.py): one adapter per fused matrix.
  auto all = import_all("megatron-bridge",
                        data_path("megatron-bridge/067f987d/src/megatron/bridge/recipes/llama/h100/llama3.py:"
                                  "llama3_8b_peft_1gpu_h100_bf16_config"),
                        world(1, 1));
  REQUIRE_MESSAGE(all.is_ok(), (all.is_ok() ? std::string() : all.message()));
  const ImportResult& r = (*all)[0].result;
  REQUIRE(r.unfollowed.empty());
  CHECK(r.plan["model"] == "llama3-8b");
  CHECK(r.plan["training"]["lora_rank"] == 8);
  CHECK(r.plan["training"]["lora_targets"] == nlohmann::ordered_json::array({"qkv", "o", "gate_up", "down"}));
  // linear_qkv 4096 -> 4096 + 2 x 1024, linear_proj 4096 -> 4096, linear_fc1 4096 -> 2 x 14336,
  // linear_fc2 14336 -> 4096.
  const double adapters = kLayers * 8 * ((kH + kH + 2 * kKv) + (kH + kH) + (kH + 2 * kF) + (kF + kH));
  const sim::Memory m = memory_of(r.plan);
  CHECK(static_cast<double>(m.optimizer) == doctest::Approx(adapters * 12).epsilon(1e-9));
  CHECK(static_cast<double>(m.params) == doctest::Approx((kWeights + adapters) * 2).epsilon(1e-9));
}

TEST_CASE("peft_torchtitan_lora_converter_target_modules_are_read") {
  // pytorch/torchtitan@b5bcd76c llama3 registry llama3_debugmodel_float8_emulate_lora:
  // LoRAConverter.Config(rank=8, target_modules=["wq", "wkv", "wo"]); wkv builds wk and wv
  // (models/common/attention.py), so the adapters sit on q, k, v and o.
  auto all = import_all("torchtitan",
                        data_path("torchtitan/pkg-b5bcd76c/torchtitan/models/llama3/config_registry.py:"
                                  "llama3_debugmodel_float8_emulate_lora"),
                        world(1, 8));
  REQUIRE(all.is_ok());
  const ImportResult& r = (*all)[0].result;
  CHECK(r.plan["training"]["lora_targets"] == nlohmann::ordered_json::array({"q", "k", "v", "o"}));
  CHECK_FALSE(has_finding(r, "setting-unmodelled", "target_modules"));
  // The per-layer count of those targets against r (in + out) by hand, on Llama-3-8B.
  core::Training t;
  t.lora_rank = 8;
  t.lora_targets = {"q", "k", "v", "o"};
  const core::ModelSpec m = *core::model_preset("llama3-8b");
  CHECK(core::lora_layer_params(m, false, t) == 8 * (2 * (kH + kH) + 2 * (kH + kKv)));
}

}  // namespace
}  // namespace planck::import::test
