// Which launches the Megatron-LM importer reads as training: Megatron-LM's own example scripts
// that generate text (NVIDIA/Megatron-LM@d98e8a64 examples/academic_paper_scripts/detxoify_lm/
// generate-1.3b.sh runs generate_samples_gpt.py; examples/mamba/run_text_gen_server_8b.sh runs
// tools/run_mamba_text_generation_server.py) take the training flags but run no optimizer step:
// verified as training, one was "ok" and the other a false memory-exceeds (micro-batch 400).

#include <doctest/doctest.h>

#include <string>

#include "tests/import/import_test_util.h"

namespace planck::import::test {

TEST_CASE("megatron_generation_launches_are_not_read_as_training") {
  for (const char* file : {"megatron-lm/detxoify_generate-1.3b.sh", "megatron-lm/mamba_run_text_gen_server_8b.sh"}) {
    CAPTURE(file);
    const std::string why = import_error(&import_megatron, read_data(file), world(1, 8), file);
    CHECK(why.find("does not train") != std::string::npos);
    CHECK(why.find(std::string(file) + ":") != std::string::npos);  // located at the launch line
  }
  // Checkpoint converters take the model flags too (alibaba/Pai-Megatron-Patch@a098ca5
  // toolkits/model_checkpoints_convertor/llama/hf2mcore_convertor_llama3_1.sh runs `torchrun ...
  // hf2mcore_llama3_1.py --micro-batch-size 1 ...`, which loads and saves weights and steps no
  // optimizer): verified as training it was a memory-exceeds with optimizer states.
  for (const char* entry : {"hf2mcore_llama3_1.py", "mcore2hf_qwen2.py", "convert_ckpt.py"}) {
    CAPTURE(entry);
    const std::string why = import_error(
        &import_megatron,
        std::string("torchrun --nproc_per_node 8 ") + entry +
            " --num-layers 2 --hidden-size 256 --micro-batch-size 1\n",
        world(1, 8), "convert.sh");
    CHECK(why.find("does not train") != std::string::npos);
  }
  // Megatron's tasks/main.py evaluates for --task LAMBADA | WIKITEXT103 | ICT-ZEROSHOT-NQ | RETRIEVER-EVAL
  // and finetunes for RACE / MNLI / QQP (tasks/main.py:88-97, IEIT-Yuan/Yuan-2.0@2f59b3f, whose
  // examples/evaluate_zeroshot_gpt.sh runs `--task $TASK` with TASK="LAMBADA"); tasks/msdp/main.py
  // prompts and scores only.
  const std::string args = " --num-layers 2 --hidden-size 256 --num-attention-heads 4 --micro-batch-size 1 "
                           "--global-batch-size 8 --seq-length 512 --max-position-embeddings 512 --vocab-size 1024";
  CHECK(import_error(&import_megatron, "python ./tasks/main.py --task LAMBADA" + args + "\n", world(1, 8), "e.sh")
            .find("the evaluation --task LAMBADA") != std::string::npos);
  CHECK(import_error(&import_megatron, "python ./tasks/msdp/main.py --task MSDP-EVAL-F1" + args + "\n", world(1, 8),
                     "e.sh")
            .find("does not train") != std::string::npos);
  import_ok(&import_megatron, "python ./tasks/main.py --task MNLI" + args + "\n", world(1, 8), "f.sh");
  // tools/retro/main.py builds Retro's database and index (IEIT-Yuan/Yuan-2.0@2f59b3f
  // tools/retro/examples/preprocess_data.sh): Megatron's tools/ hold no training loop.
  CHECK(import_error(&import_megatron, "python -u tools/retro/main.py" + args + "\n", world(1, 8), "p.sh")
            .find("does not train") != std::string::npos);
  // A training entry point is still read (examples/gpt3/train_gpt3_175b_distributed.sh runs pretrain_gpt.py).
  ImportResult r = import_ok(&import_megatron, read_data("megatron-lm/train_gpt3_175b_distributed.sh"), world(16, 8),
                             "train_gpt3_175b_distributed.sh");
  CHECK(r.plan["parallelism"].contains("sequence_parallel"));
}

namespace {

// A Mixtral-8x7B-shaped launch (HF config.json: 32 layers, hidden 4096, ffn 14336, 32 heads, 8
// kv heads, vocab 32000, 8 experts).
const std::string kMixtral =
    "pretrain_gpt.py --num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 --num-attention-heads 32 "
    "--group-query-attention --num-query-groups 8 --vocab-size 32000 --make-vocab-size-divisible-by 1 "
    "--swiglu --untie-embeddings-and-output-weights --disable-bias-linear --normalization RMSNorm "
    "--position-embedding-type rope --num-experts 8 --seq-length 4096 --max-position-embeddings 4096 "
    "--micro-batch-size 1 --global-batch-size 64 --bf16 --expert-model-parallel-size 8 ";

}  // namespace

TEST_CASE("megatron_moe_routing_the_flags_state_is_kept_over_a_preset_of_the_same_shape") {
  // --moe-router-topk and --moe-ffn-hidden-size set TransformerConfig.moe_router_topk and
  // moe_ffn_hidden_size (NVIDIA/Megatron-LM@d98e8a6 megatron/training/arguments.py _add_moe_args):
  // the run routes as the script says, whatever preset shares the dense shape.
  ImportResult preset = import_ok(&import_megatron, kMixtral + "--moe-router-topk 2", world(1, 8));
  CHECK(preset.plan["model"] == "mixtral-8x7b");
  ImportResult top1 = import_ok(&import_megatron, kMixtral + "--moe-router-topk 1 --moe-ffn-hidden-size 7168",
                                world(1, 8));
  REQUIRE(top1.plan["model"].is_object());
  CHECK(top1.plan["model"]["experts_per_token"] == 1);
  CHECK(top1.plan["model"]["moe_ffn_hidden"] == 7168);
  CHECK(top1.plan["model"]["experts"] == 8);
}

TEST_CASE("megatron_vision_language_entry_scripts_say_their_encoder_is_not_priced") {
  // pretrain_vlm.py builds LLaVAModel with a vision transformer (NVIDIA/Megatron-LM@d144db4
  // pretrain_vlm.py:44-51); examples/multimodal/train.py builds --vision-model-type, "clip" by
  // default (@63be779 examples/multimodal/multimodal_args.py:12): neither is in planck's model.
  const std::string flags =
      "--num-layers 24 --hidden-size 1024 --num-attention-heads 16 --seq-length 576 "
      "--max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 8 --vocab-size 32000";
  for (const char* entry : {"pretrain_vlm.py ", "examples/multimodal/train.py "}) {
    CAPTURE(entry);
    ImportResult r = import_ok(&import_megatron, std::string(entry) + flags, world(1, 8));
    CHECK(findings(r, "setting-unmodelled", "vision encoder") == 1);
  }
  CHECK(findings(import_ok(&import_megatron, "pretrain_gpt.py " + flags, world(1, 8)), "setting-unmodelled",
                 "vision encoder") == 0);
}

TEST_CASE("megatron_nemo_hydra_launches_are_not_read_as_megatron_flags") {
  // NeMo 1.x's megatron_gpt_pretraining.py is a Hydra application (@hydra_runner(config_path="conf",
  // config_name="megatron_gpt_config"), NVIDIA/NeMo@v1.23.0 examples/nlp/language_modeling/
  // megatron_gpt_pretraining.py): its micro batch is model.micro_batch_size in the YAML, so
  // Megatron-LM's "no --micro-batch-size" refusal would be false. MLPerf v4.0's GPT-3 launch runs
  // megatron_gpt_pretraining_custom.py with overrides built elsewhere.
  for (const char* launch : {"python -u /workspace/llm/megatron_gpt_pretraining_custom.py $EXTRA_ARGS",
                             "python megatron_gpt_pretraining.py --config-path conf model.micro_batch_size=2"}) {
    CAPTURE(launch);
    ImportResult r = import_ok(&import_megatron, launch, world(1, 8));
    REQUIRE(r.unfollowed.size() == 1);
    CHECK(r.unfollowed[0].why.find("NeMo (Hydra) launch") != std::string::npos);
  }
}

TEST_CASE("megatron_rocm_detection_reads_runtime_variables_not_script_arrays") {
  // A shell array never reaches a process's environment (bash exports no arrays): HIP_PROF_ARGS as
  // an argument list says nothing about the GPU. GPU_MAX_HW_QUEUES is the HIP runtime's own
  // (ROCm/clr rocclr/utils/flags.hpp).
  const std::string launch = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --hidden-size 64 "
                             "--num-attention-heads 4 --seq-length 128 --max-position-embeddings 128 "
                             "--micro-batch-size 1 --global-batch-size 8 --vocab-size 512\n";
  ImportResult array = import_ok(&import_megatron, "HIP_PROF_ARGS=( --profile )\n" + launch, ImportOptions{}, "t.sh");
  CHECK_FALSE(array.plan["cluster"].contains("gpu"));
  ImportResult queues = import_ok(&import_megatron, "export GPU_MAX_HW_QUEUES=2\n" + launch, ImportOptions{}, "t.sh");
  CHECK(queues.plan["cluster"]["gpu"] == "mi300x");
}

}  // namespace planck::import::test
