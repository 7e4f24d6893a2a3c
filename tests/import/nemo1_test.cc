// NeMo 1.x Hydra YAML importer: NeMo's own configs (NVIDIA/NeMo@8cfedd7) and two of the
// NeMo-Framework-Launcher's (tests/data/nemo1/PROVENANCE.md). Expected values come from the
// config text and NeMo's code at 8cfedd7 (nemo/collections/nlp/models/language_modeling/
// megatron_base_model.py, megatron_gpt_model.py), cited where used.

#include <doctest/doctest.h>

#include <string>

#include "tests/import/import_test_util.h"

namespace planck::import::test {
namespace {

std::string nemo1_data(const std::string& name) { return read_data("../nemo1/" + name); }

// A small config in NeMo's shape; `model_keys` are added under model:.
std::string nemo1_small(const std::string& model_keys, const std::string& trainer = "  devices: 8\n  num_nodes: 2\n") {
  return "trainer:\n" + trainer + "  precision: bf16\nmodel:\n  micro_batch_size: 2\n  global_batch_size: 64\n"
         "  tensor_model_parallel_size: 2\n  encoder_seq_length: 1024\n  num_layers: 8\n  hidden_size: 1024\n"
         "  num_attention_heads: 16\n  megatron_amp_O2: true\n  mcore_gpt: true\n  transformer_engine: true\n"
         "  tokenizer:\n    library: megatron\n    type: GPT2BPETokenizer\n  optim:\n    name: fused_adam\n" +
         model_keys;
}

TEST_CASE("import_nemo1_detects_nemo_configs") {
  CHECK(detect_framework("megatron_gpt_config.yaml", nemo1_data("megatron_gpt_config.yaml")) == "nemo");
  CHECK(detect_framework("megatron_llama_config.yaml", nemo1_data("megatron_llama_config.yaml")) == "nemo");
  CHECK(detect_framework("llama2_70b.yaml", nemo1_data("llama2_70b.yaml")) == "nemo");
  CHECK(detect_framework("gpt3_5b.yaml", nemo1_data("gpt3_5b.yaml")) == "nemo");
  CHECK((find_importer("nemo") == &import_nemo1));
  // A Lingua YAML has no trainer: / model: pair.
  CHECK(detect_framework("debug.yaml", read_data("lingua/debug.yaml")) == "lingua");
}

TEST_CASE("import_nemo1_megatron_gpt_config") {
  const std::string text = nemo1_data("megatron_gpt_config.yaml");
  ImportResult r = import_ok(&import_nemo1, text, ImportOptions{}, "megatron_gpt_config.yaml");
  CHECK(r.unfollowed.empty());
  // trainer.devices 1 x trainer.num_nodes 1 (lines 8-9): one GPU; tp 1, pp 1 (lines 84-85).
  CHECK(r.plan["cluster"]["nodes"] == 1);
  CHECK(r.plan["cluster"]["gpus_per_node"] == 1);
  CHECK(!r.world_assumed);
  CHECK(shape_of(r) == Shape{1, 1, 1, 1});
  // micro 4, global 8 (lines 81-82) over dp 1: 2 micro-batches a step.
  CHECK(r.plan["training"]["micro_batch"] == 4);
  CHECK(r.plan["training"]["global_batch"] == 8);
  CHECK(r.plan["training"]["grad_accumulation"] == 2);
  CHECK(r.plan["training"]["seq_len"] == 512);  // encoder_seq_length, line 90
  // 12 layers, hidden 768, ffn 3072, 12 heads (lines 92-95); GPT2BPETokenizer (line 137): 50257.
  CHECK(r.plan["model"]["layers"] == 12);
  CHECK(r.plan["model"]["hidden"] == 768);
  CHECK(r.plan["model"]["ffn_hidden"] == 3072);
  CHECK(r.plan["model"]["heads"] == 12);
  CHECK(r.plan["model"]["vocab"] == 50257);
  CHECK(r.plan["model"]["tied_embeddings"] == true);  // share_embeddings_and_output_weights True, line 119
  // precision bf16 with megatron_amp_O2 True (lines 11, 152): bf16 parameters
  // (megatron_base_model.py:128-135); fused_adam (line 305) is not the distributed optimizer.
  CHECK(r.plan["training"]["param_dtype"] == "bf16");
  CHECK(r.plan["parallelism"]["data_parallel"] == "ddp");
  CHECK(r.plan["training"]["optimizer"] == "adamw");
  // transformer_engine False, mcore_gpt True: Megatron-Core's local spec, unfused attention
  // (megatron_gpt_model.py:155-158).
  CHECK(r.plan["training"]["attention"] == "standard");
  CHECK(r.plan["training"]["activation_checkpointing"] == "none");
  // Interpolations in keys planck does not read (exp_manager's ${multiply:...}, line 64) and the
  // `data_prefix: ???` (line 277) are left alone.
  CHECK(findings(r, "unknown-key") == 0);
  CHECK(r.positions.at("/training/micro_batch") == 81);
  core::Diagnostics d = verify(r);
  CHECK_MESSAGE(!d.has_errors(), error_rules(d));
}

TEST_CASE("import_nemo1_megatron_llama_config") {
  const std::string text = nemo1_data("megatron_llama_config.yaml");
  ImportResult r = import_ok(&import_nemo1, text, ImportOptions{}, "megatron_llama_config.yaml");
  CHECK(r.unfollowed.empty());
  // tokenizer library sentencepiece, `model: ???` (lines 93-95): the vocabulary is the tokenizer
  // file's, which is not read, and no preset has this shape: the model is left out, and said.
  CHECK(!r.plan.contains("model"));
  CHECK(any_contains(r.warnings, "model left out"));
  CHECK(r.plan["training"]["seq_len"] == 4096);  // line 56
  // precision 32 (line 6): fp32 parameters (utils_funcs.py:43-57).
  CHECK(r.plan["training"]["param_dtype"] == "fp32");
  CHECK(shape_of(r) == Shape{1, 1, 1, 1});  // trainer.devices 1, num_nodes 1 (lines 4-5)
  // With NeMo's override_vocab_size (megatron_gpt_model.py:496) the model is whole: 32 layers,
  // hidden 4096, ffn 11008, 32 heads, 32 query groups (lines 58-61, 88), untied (line 85).
  ImportResult v = import_ok(&import_nemo1, replace(text, "  num_query_groups: 32", "  override_vocab_size: 32000\n"
                                                    "  num_query_groups: 32"), ImportOptions{});
  const auto& m = v.plan["model"];
  if (m.is_string()) {
    CHECK(m == "llama2-7b");
  } else {
    CHECK(m["layers"] == 32);
    CHECK(m["hidden"] == 4096);
    CHECK(m["ffn_hidden"] == 11008);
    CHECK(m["heads"] == 32);
    CHECK(m["kv_heads"] == 32);
    CHECK(m["vocab"] == 32000);
    CHECK(m.value("tied_embeddings", false) == false);
  }
  core::Diagnostics d = verify(v);
  CHECK_MESSAGE(!d.has_errors(), error_rules(d));
}

TEST_CASE("import_nemo1_launcher_llama2_70b") {
  const std::string text = nemo1_data("llama2_70b.yaml");
  ImportResult r = import_ok(&import_nemo1, text, ImportOptions{}, "llama2_70b.yaml");
  CHECK(r.unfollowed.empty());
  // 128 nodes x 8 devices (lines 15-16); tp 4, pp 4 (lines 59-60): dp = 1024 / 16 = 64.
  CHECK(r.plan["cluster"]["nodes"] == 128);
  CHECK(r.plan["cluster"]["gpus_per_node"] == 8);
  CHECK(dims_of(r) == Dims{"pp", "dp", "cp", "tp"});
  CHECK(shape_of(r) == Shape{4, 64, 1, 4});
  // vp 5 (line 61): 80 layers / pp 4 = 20 per stage, 5 chunks (megatron_base_model.py:184-191).
  CHECK(r.plan["parallelism"]["virtual_stages"] == 5);
  CHECK(r.plan["parallelism"]["sequence_parallel"] == true);  // line 126
  // optim.name mcore_distributed_optim (line 153): the distributed optimizer (megatron_base_model.py:151-152).
  CHECK(r.plan["parallelism"]["data_parallel"] == "zero1");
  CHECK(r.plan["training"]["micro_batch"] == 1);
  CHECK(r.plan["training"]["global_batch"] == 2048);
  CHECK(r.plan["training"]["grad_accumulation"] == 2048 / 64);
  CHECK(r.plan["model"]["layers"] == 80);
  CHECK(r.plan["model"]["hidden"] == 8192);
  CHECK(r.plan["model"]["ffn_hidden"] == 28672);
  CHECK(r.plan["model"]["heads"] == 64);
  CHECK(r.plan["model"]["kv_heads"] == 8);
  CHECK(r.plan["training"]["param_dtype"] == "bf16");
  // granularity null with method block (lines 121-122): no recompute.
  CHECK(r.plan["training"]["activation_checkpointing"] == "none");
  core::Diagnostics d = verify(r);
  CHECK_MESSAGE(!d.has_errors(), error_rules(d));
}

TEST_CASE("import_nemo1_launcher_gpt3_5b_resolves_multiply") {
  const std::string text = nemo1_data("gpt3_5b.yaml");
  ImportResult r = import_ok(&import_nemo1, text, ImportOptions{}, "gpt3_5b.yaml");
  CHECK(r.unfollowed.empty());
  // ffn_hidden_size: ${multiply:4, ${.hidden_size}} (line 71; NeMo's multiply resolver,
  // nemo/core/config/hydra_runner.py:48): 4 x 4096.
  CHECK(r.plan["model"]["ffn_hidden"] == 4 * 4096);
  CHECK(r.positions.at("/model/ffn_hidden") == 71);
  // 16 nodes x 8 (lines 16-17), tp 1 pp 1: dp 128; micro 4, global 2048: 4 micro-batches.
  CHECK(shape_of(r) == Shape{1, 128, 1, 1});
  CHECK(r.plan["training"]["grad_accumulation"] == 2048 / (4 * 128));
  CHECK(r.plan["parallelism"]["data_parallel"] == "zero1");
}

TEST_CASE("import_nemo1_interpolation") {
  // Absolute and relative references, and sum.
  ImportResult r = import_ok(&import_nemo1,
                             nemo1_small("  ffn_hidden_size: ${sum:${model.hidden_size},${.hidden_size}}\n"
                                         "  num_query_groups: ${..model.tensor_model_parallel_size}\n"),
                             ImportOptions{});
  CHECK(r.plan["model"]["ffn_hidden"] == 2048);
  CHECK(r.plan["model"]["kv_heads"] == 2);
  CHECK(r.plan["cluster"]["nodes"] == 2);
  CHECK(r.plan["cluster"]["gpus_per_node"] == 8);
  // Unresolvable in a key that sets the layout: config-unfollowed at its line, the key named.
  ImportResult env = import_ok(&import_nemo1, replace(nemo1_small(""), "tensor_model_parallel_size: 2",
                                                      "tensor_model_parallel_size: ${oc.env:TP}"),
                               ImportOptions{}, "cfg.yaml");
  REQUIRE(env.unfollowed.size() == 1);
  CHECK(env.unfollowed[0].file == "cfg.yaml");
  CHECK(env.unfollowed[0].line == 8);
  CHECK(env.unfollowed[0].settings == "model.tensor_model_parallel_size");
  CHECK(env.unfollowed[0].why.find("environment") != std::string::npos);
  ImportResult missing = import_ok(&import_nemo1, nemo1_small("  kv_channels: ${model.nothing_here}\n"),
                                   ImportOptions{});
  REQUIRE(missing.unfollowed.size() == 1);
  CHECK(missing.unfollowed[0].why.find("model.nothing_here") != std::string::npos);
  ImportResult mandatory = import_ok(&import_nemo1, nemo1_small("  kv_channels: ???\n"), ImportOptions{});
  REQUIRE(mandatory.unfollowed.size() == 1);
  CHECK(mandatory.unfollowed[0].why.find("mandatory") != std::string::npos);
}

TEST_CASE("import_nemo1_hostile_interpolations_are_refused") {
  // A cycle, a chain deeper than the bound, and a doubling string: refused, never looped on.
  ImportResult cycle = import_ok(&import_nemo1, nemo1_small("  kv_channels: ${model.ffn_hidden_size}\n"
                                                            "  ffn_hidden_size: ${model.kv_channels}\n"),
                                 ImportOptions{});
  REQUIRE(!cycle.unfollowed.empty());
  CHECK(cycle.unfollowed[0].why.find("cycle") != std::string::npos);
  std::string chain = "  kv_channels: ${model.c0}\n";
  for (int i = 0; i < 40; ++i) chain += "  c" + std::to_string(i) + ": ${model.c" + std::to_string(i + 1) + "}\n";
  chain += "  c40: 64\n";
  ImportResult deep = import_ok(&import_nemo1, nemo1_small(chain), ImportOptions{});
  REQUIRE(!deep.unfollowed.empty());
  CHECK(deep.unfollowed[0].why.find("deep") != std::string::npos);
  std::string laughs = "  kv_channels: ${model.l0}\n";
  for (int i = 0; i < 30; ++i) {
    laughs += "  l" + std::to_string(i) + ": ${model.l" + std::to_string(i + 1) + "}${model.l" +
              std::to_string(i + 1) + "}\n";
  }
  laughs += "  l30: xxxxxxxx\n";
  ImportResult wide = import_ok(&import_nemo1, nemo1_small(laughs), ImportOptions{});
  CHECK(!wide.unfollowed.empty());
}

TEST_CASE("import_nemo1_keys_and_refusals") {
  ImportResult typo = import_ok(&import_nemo1, nemo1_small("  tensor_model_paralel_size: 4\n"), ImportOptions{});
  CHECK(findings(typo, "unknown-key", "tensor_model_paralel_size") == 1);
  // A Megatron-Core TransformerConfig field is a NeMo model key (megatron_base_model.py:600-613).
  ImportResult field = import_ok(&import_nemo1, nemo1_small("  moe_grouped_gemm: false\n"), ImportOptions{});
  CHECK(findings(field, "unknown-key") == 0);
  // vp > 1 needs megatron_amp_O2 (megatron_gpt_model.py:361-362).
  const std::string o1 = replace(nemo1_small("  pipeline_model_parallel_size: 2\n"
                                             "  virtual_pipeline_model_parallel_size: 2\n"),
                                 "megatron_amp_O2: true", "megatron_amp_O2: false");
  CHECK(import_error(&import_nemo1, o1, ImportOptions{}, "c.yaml").find("c.yaml:") == 0);
  // O1 bf16: fp32 parameters under autocast, said as setting-unmodelled.
  ImportResult amp = import_ok(&import_nemo1, replace(nemo1_small(""), "megatron_amp_O2: true",
                                                      "megatron_amp_O2: false"), ImportOptions{});
  CHECK(findings(amp, "setting-unmodelled", "autocast") == 1);
  // distributed_fused_adam -> the distributed optimizer; activations_checkpoint full/uniform.
  ImportResult dist = import_ok(&import_nemo1, replace(nemo1_small("  activations_checkpoint_granularity: full\n"
                                                                   "  activations_checkpoint_method: uniform\n"
                                                                   "  activations_checkpoint_num_layers: 1\n"),
                                                       "name: fused_adam", "name: distributed_fused_adam"),
                                ImportOptions{});
  CHECK(dist.plan["parallelism"]["data_parallel"] == "zero1");
  CHECK(dist.plan["training"]["activation_checkpointing"] == "full");
  CHECK(shape_of(dist) == Shape{1, 8, 1, 2});
  // An unsupported activation is NeMo's ValueError (utils_funcs.py:182-195).
  CHECK(import_error(&import_nemo1, nemo1_small("  activation: tanh\n"), ImportOptions{}).find("tanh") !=
        std::string::npos);
}

}  // namespace
TEST_CASE("import_nemo1_other_models_and_generation_configs_are_refused") {
  // NeMo's configs of other models share trainer: and model: (NVIDIA/NeMo@8cfedd7 examples/nlp/
  // language_modeling/conf): T5 (model.mcore_t5, encoder: / decoder: sections built by
  // megatron_lm_encoder_decoder_model.py), BERT (model.mcore_bert, megatron_bert_model.py), Mamba
  // (model.hybrid_override_pattern, megatron_mamba_model.py). Read as GPTs they verified `ok` with their own
  // keys unknown. The generation config (tuning/conf/megatron_gpt_generate_config.yaml: an inference:
  // section for megatron_gpt_generate.py) trains nothing.
  const auto refused = [](const std::string& file) {
    return import_error(&import_nemo1, nemo1_data(file), world(1, 8), file);
  };
  CHECK(refused("megatron_t5_config.yaml").find("T5") != std::string::npos);
  CHECK(refused("megatron_bert_config.yaml").find("a NeMo BERT config (model.mcore_bert)") != std::string::npos);
  CHECK(refused("megatron_mamba_config.yaml").find("Mamba") != std::string::npos);
  const std::string gen = refused("megatron_gpt_generate_config.yaml");
  CHECK(gen.find("generation config") != std::string::npos);
  CHECK(gen.find("megatron_gpt_generate_config.yaml:") != std::string::npos);  // names the line
  // The GPT configs are still read.
  CHECK(import_ok(&import_nemo1, nemo1_data("megatron_gpt_config.yaml"), world(1, 8), "g.yaml").plan.contains("mesh"));
}

}  // namespace planck::import::test
