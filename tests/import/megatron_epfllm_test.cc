// epfLLM/Megatron-LLM launches (import/megatron/epfllm.cc): checked against the fork's own argparse
// and its model flags read as Megatron-LM's. Expected values from epfLLM/Megatron-LLM's
// megatron/arguments.py @806a833, cited per case.

#include <doctest/doctest.h>

#include <string>

#include "tests/import/import_test_util.h"

namespace planck::import::test {

namespace {

// A Llama-shaped launch in epfLLM's spelling (its docs/guide/getting_started.md writes the same flags).
// epfLLM has no --vocab_size (the tokenizer's file sets it): planck guesses it from the preset of the
// same layers, hidden size, heads and kv heads (Llama 3 8B's) and says so.
std::string epfllm_launch(const std::string& extra) {
  return "torchrun --nproc_per_node 8 finetune.py --tensor_model_parallel_size 2 --pipeline_model_parallel_size 1 "
         "--num_layers 32 --hidden_size 4096 --num_attention_heads 32 --seq_length 4096 "
         "--max_position_embeddings 4096 --micro_batch_size 1 --global_batch_size 64 --bf16 "
         "--position_embedding_type rotary --use_rms_norm --num_attention_heads_kv 8 " +
         extra + "\n";
}

}  // namespace

TEST_CASE("megatron_epfllm_launch_reads_its_own_flags") {
  // examples/finetune.sh (@806a833) writes every flag with underscores, as epfLLM's argparse defines
  // them (arguments.py: `--tensor_model_parallel_size`, ..., finetune.py's --metrics, --data_type):
  // none is unknown to the fork that runs it. Read against Megatron-LM's argparse each was an
  // unknown-key warning (41 on this script).
  ImportOptions o = world(1, 8);
  o.sets.emplace_back("1", "llama2");
  auto r = import_file("megatron", data_path("megatron-lm/audit7/epfllm_finetune.sh"), o);
  REQUIRE_MESSAGE(r.is_ok(), (r.is_ok() ? std::string() : r.message()));
  for (const ImportFinding& f : r->findings) CHECK_MESSAGE(f.rule != "unknown-key", f.message);
}

TEST_CASE("megatron_epfllm_model_flags_are_upstreams_in_its_spelling") {
  // :425 --num_attention_heads_kv (GQA), :447 --use_rms_norm, :457 --glu_activation, :475
  // --no_tie_embed_logits; :444 --use_bias is store_true, so the linears have no biases without it.
  ImportResult r = import_ok(
      &import_megatron, epfllm_launch("--glu_activation swiglu --ffn_hidden_size 11008 --no_tie_embed_logits"),
      world(1, 8), "llama.sh");
  const auto& m = r.plan["model"];
  CHECK(m["kv_heads"] == 8);
  CHECK(m["ffn_hidden"] == 11008);
  // Absent keys are the plan format's defaults (docs/plan-format.md): gated_mlp true, biases and
  // tied_embeddings false.
  CHECK(m.value("gated_mlp", true) == true);
  CHECK(m.value("biases", false) == false);
  CHECK(m.value("tied_embeddings", false) == false);
  CHECK_FALSE(finding_says(r, "unknown-key", ""));

  // Without --ffn_hidden_size epfLLM takes 4 x hidden (arguments.py:233-234) whatever the GLU, where
  // Megatron-LM's --swiglu takes 2/3 of it; embeddings tied (:475).
  ImportResult d = import_ok(&import_megatron, epfllm_launch("--glu_activation geglu"), world(1, 8), "llama.sh");
  CHECK(d.plan["model"]["ffn_hidden"] == 4 * 4096);
  CHECK(d.plan["model"].value("tied_embeddings", false) == true);
  // --use_bias: biases.
  ImportResult b = import_ok(&import_megatron, epfllm_launch("--use_bias"), world(1, 8), "llama.sh");
  CHECK(b.plan["model"].value("biases", false) == true);
  // --transformer_impl defaults to local (:384): the fork's ParallelAttention materialises the
  // scores, and --use_flash_attn runs flash-attn's FlashSelfAttention (FlashAttention-2).
  CHECK(b.plan["training"]["attention"] == "standard");
  ImportResult fa = import_ok(&import_megatron, epfllm_launch("--use_flash_attn"), world(1, 8), "llama.sh");
  CHECK(fa.plan["training"]["attention_kernel"] == "fa2");
  CHECK(fa.plan["training"].value("attention", "flash") == "flash");
  // A launch in this spelling is recognised without --framework.
  CHECK(detect_framework("llama.sh", epfllm_launch("")) == "megatron");
}

TEST_CASE("megatron_epfllm_refuses_dashed_spellings_and_says_its_unpriced_shapes") {
  // argparse with allow_abbrev=False (arguments.py:16-17) knows --micro_batch_size only: the dashed
  // spelling stops it at start-up.
  ImportResult r = import_ok(&import_megatron, epfllm_launch("--train-iters 10"), world(1, 8), "llama.sh");
  CHECK(finding_says(r, "unknown-key", "--train-iters is not a flag epfLLM/Megatron-LLM defines"));
  CHECK(finding_says(r, "unknown-key", "--train_iters"));
  // Falcon's parallel attention (:469) and Mistral's sliding window (:479) are said, not dropped.
  ImportResult f = import_ok(&import_megatron, epfllm_launch("--parallel_attn --sliding_window_size 4096"),
                             world(1, 8), "falcon.sh");
  CHECK(finding_says(f, "setting-unmodelled", "--parallel_attn"));
  CHECK(finding_says(f, "setting-unmodelled", "--sliding_window_size 4096"));
}

TEST_CASE("megatron_underscore_flag_names_the_fork_only_when_it_spells_it_so") {
  // Megatron-LM's launch with --activations_checkpoint_method: epfLLM does not define it (its
  // arguments.py has --recompute_method), so the warning does not say epfLLM would read it.
  const std::string upstream =
      "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --hidden-size 256 --num-attention-heads 4 "
      "--seq-length 512 --max-position-embeddings 512 --micro-batch-size 1 --global-batch-size 8 --vocab-size 1024 ";
  ImportResult a =
      import_ok(&import_megatron, upstream + "--activations_checkpoint_method uniform\n", world(1, 8), "gpt.sh");
  CHECK(finding_says(a, "unknown-key", "no fork planck knows spells it so"));
  ImportResult t = import_ok(&import_megatron, upstream + "--train_iters 10\n", world(1, 8), "gpt.sh");
  CHECK(finding_says(t, "unknown-key", "as epfLLM/Megatron-LLM, which spells it so, would"));
}

}  // namespace planck::import::test
