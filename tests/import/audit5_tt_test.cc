// Audit 5 (torchtitan TOML, Lingua and BLT YAML from third-party sources): the configs of
// tests/data/import/{torchtitan,lingua}/audit5 (PROVENANCE.md). Each expected value is the
// framework's own behaviour, cited at the check that produces it.

#include <doctest/doctest.h>

#include <string>

#include "tests/import/import_test_util.h"

namespace planck::import::test {
namespace {

bool has(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

bool has_rule(const ImportResult& r, const std::string& rule, const std::string& needle = "") {
  for (const ImportFinding& f : r.findings) {
    if (f.rule == rule && has(f.message, needle)) return true;
  }
  return false;
}

const char* kTt2503 = "torchtitan/audit5/tt_main2503_llama3_70b.toml";

// D1. pytorch/torchtitan@15a832d torchtitan/models/llama/parallelize_llama.py:53-58: with tp
// enabled, enable_async_tensor_parallel and not training.compile raises RuntimeError.
TEST_CASE("audit5_async_tp_without_compile_is_refused_as_torchtitan_refuses_it") {
  const std::string text =
      replace(read_data(kTt2503), "[experimental]\n", "[experimental]\nenable_async_tensor_parallel = true\n");
  const std::string e = import_error(&import_torchtitan, text, world(8, 8));
  CHECK(has(e, "config:45: [experimental] enable_async_tensor_parallel = true with tensor_parallel_degree 8"));
  CHECK(has(e, "Async TP requires --training.compile"));
  CHECK(has(e, "set [training] compile = true"));
  // Compiled, torchtitan runs it: async TP is priced on the compiled stack.
  ImportResult ok = import_ok(&import_torchtitan, replace(text, "compile = false", "compile = true"), world(8, 8));
  CHECK(ok.plan["parallelism"]["async_tp"] == true);
  CHECK(ok.plan["training"]["stack"] == "torchtitan_compile");
  // tp 1: the check sits inside `if parallel_dims.tp_enabled`, so torchtitan starts.
  CHECK(import_ok(&import_torchtitan, replace(text, "tensor_parallel_degree = 8", "tensor_parallel_degree = 1"),
                  world(8, 8))
            .plan["parallelism"]
            .value("async_tp", false) == false);
}

// @d240be0 torchtitan/distributed/tensor_parallel.py:15-20: [compile] enable and "model" in
// components, else RuntimeError. The corpus's llama3_405b.toml (main@d240be0) ships async TP compiled.
TEST_CASE("audit5_async_tp_needs_the_model_in_compile_components") {
  std::string text;
  {
    std::ifstream in(std::string(PLANCK_TEST_DATA_DIR) + "/corpus/torchtitan/llama3_405b.toml");
    REQUIRE(in.good());
    std::ostringstream os;
    os << in.rdbuf();
    text = os.str();
  }
  CHECK(import_ok(&import_torchtitan, text, world(16, 8)).plan["parallelism"]["async_tp"] == true);
  const std::string off = import_error(&import_torchtitan, replace(text, "enable=true", "enable=false"), world(16, 8));
  CHECK(has(off, "config:42: [parallelism] enable_async_tensor_parallel"));
  CHECK(has(off, "\"model\" in components"));
  const std::string loss_only = replace(text, "components = [\"model\", \"loss\"]", "components = [\"loss\"]");
  CHECK(has(import_error(&import_torchtitan, loss_only, world(16, 8)), "Async TP requires"));
}

// D2. @15a832d torchtitan/distributed/pipeline.py:123-127: batch_size % n_microbatches != 0 raises
// ValueError; 8 % 4 == 0 gives 4 micro-batches of 2.
TEST_CASE("audit5_pipeline_microbatches_that_do_not_divide_the_local_batch_are_refused") {
  std::string text = replace(read_data(kTt2503), "pipeline_parallel_degree = 1\n",
                             "pipeline_parallel_degree = 4\npipeline_parallel_microbatches = 16\n");
  const std::string e = import_error(&import_torchtitan, text, world(8, 8));
  CHECK(has(e, "config:47: [training] batch_size 8 does not split into [experimental] "
               "pipeline_parallel_microbatches 16"));
  CHECK(has(e, "Batch size 8 must be divisible by number of microbatches 16"));
  ImportResult ok =
      import_ok(&import_torchtitan, replace(text, "microbatches = 16", "microbatches = 4"), world(8, 8));
  CHECK(ok.plan["training"]["micro_batch"] == 2);
  CHECK(ok.plan["training"]["grad_accumulation"] == 4);
  // debug_model_3d_mast.toml (@47fd328): batch 4 on pp 16 with no count: torchtitan then cut the
  // batch into pp = 16 micro-batches (pipelining_utils.py:52-54), and torch's schedule raises.
  const std::string mast = import_error(&import_torchtitan,
                                        read_data("torchtitan/audit5/tt_br_zb_debug_model_3d_mast.toml"), world(16, 8));
  CHECK(has(mast, "config:29: [training] batch_size 4 does not split into"));
}

// D4. @15a832d torchtitan/models/llama/pipeline_llama.py:84-85,122: num_stages = len(splits) + 1;
// pipeline.py:158-161: stages_per_rank = num_stages // pp, asserted to divide.
TEST_CASE("audit5_pipeline_split_points_set_the_stages_a_rank") {
  const std::string base = replace(read_data(kTt2503), "pipeline_parallel_degree = 1\n",
                                   "pipeline_parallel_degree = 2\npipeline_parallel_schedule = \"Interleaved1F1B\"\n"
                                   "pipeline_parallel_split_points = [SPLITS]\n");
  auto with = [&](const std::string& splits) { return replace(base, "[SPLITS]", splits); };
  // llama3 70B has 80 layers; generate_split_points (pipeline.py:27-80) cuts 8 stages at every 10th.
  ImportResult even = import_ok(&import_torchtitan,
                                with("[\"layers.10\", \"layers.20\", \"layers.30\", \"layers.40\", \"layers.50\", "
                                     "\"layers.60\", \"layers.70\"]"),
                                world(8, 8));
  CHECK(even.plan["parallelism"]["virtual_stages"] == 4);
  CHECK(!has_rule(even, "setting-unmodelled"));
  ImportResult uneven = import_ok(&import_torchtitan,
                                  with("[\"layers.4\", \"layers.8\", \"layers.12\", \"layers.16\", \"layers.20\", "
                                       "\"layers.24\", \"layers.28\"]"),
                                  world(8, 8));
  CHECK(uneven.plan["parallelism"]["virtual_stages"] == 4);
  CHECK(has_rule(uneven, "setting-unmodelled", "layers a stage: 4, 4, 4, 4, 4, 4, 4, 52"));
  // Three stages over pp 2: "num_stages 3 must be evenly divisible by pp_size 2".
  CHECK(has(import_error(&import_torchtitan, with("[\"layers.20\", \"layers.40\"]"), world(8, 8)),
            "num_stages 3 must be evenly divisible by pp_size 2"));
  // The argparse era's string_list (config_manager.py@47fd328:28-29) splits one string on commas:
  // debug_model_3d.toml's 7 points on pp 4 are 8 stages, 2 a rank.
  ImportResult zb = import_ok(&import_torchtitan, read_data("torchtitan/audit5/tt_br_zb_debug_model_3d.toml"),
                              world(8, 8));
  CHECK(zb.plan["parallelism"]["virtual_stages"] == 2);
}

// D8. @4d3a84f torchtitan/experiments/gpt_oss/__init__.py:34,38: flavours "20B" (24 layers, 32
// experts) and "120B" (36 layers, 128 experts), model/args.py's other defaults: gpt-oss's shapes.
TEST_CASE("audit5_gpt_oss_upper_case_flavours_are_the_gpt_oss_presets") {
  CHECK(import_data_ok("torchtitan", "torchtitan/audit5/tt_pr1754_gpt_oss_20b.toml", world(1, 8)).plan["model"] ==
        "gpt-oss-20b");
  CHECK(import_data_ok("torchtitan", "torchtitan/audit5/tt_pr1754_gpt_oss_120b.toml", world(1, 8)).plan["model"] ==
        "gpt-oss-120b");
}

// D5. facebookresearch/lingua@437d680 apps/main/train.py:649-650 merges the file into
// OmegaConf.structured(TrainArgs()), struct mode: an unknown key raises ConfigKeyError.
TEST_CASE("audit5_lingua_unknown_keys_say_lingua_refuses_them") {
  ImportResult muon = import_data_ok("lingua", "lingua/audit5/lingua_jg_muon_optimizer_1B.yaml", world(1, 8));
  CHECK(has_rule(muon, "unknown-key", "optim.optimizer is not a key the framework knows (Lingua refuses it"));
  ImportResult dbx = import_data_ok("lingua", "lingua/audit5/lingua_dbx_llama_1B.yaml", world(1, 8));
  CHECK(has_rule(dbx, "unknown-key", "logging.mlflow"));
  CHECK(!has_rule(dbx, "unknown-key", "ignored"));
}

// D6. facebookresearch/blt@9774ed4 bytelatent/args.py:297-336 (TrainArgs: max_steps, entropy_model,
// train_entropy_model, eval_on_gpus) and :125-151 (DataloaderArgs); train.py:261-264 builds
// LMTransformer(args.entropy_model) when train_entropy_model. FeedForward (base_transformer.py:
// 452-462): int(2 x 4 x 768 / 3) = 2048, x 1.0, rounded up to 256: 2048.
TEST_CASE("audit5_blt_entropy_model_config_trains_its_entropy_model") {
  ImportResult r = import_data_ok("lingua", "lingua/audit5/blt_entropy_model.yaml", world(1, 8));
  CHECK(!has_rule(r, "unknown-key"));
  REQUIRE(r.plan["model"].is_object());
  CHECK(r.plan["model"]["layers"] == 14);
  CHECK(r.plan["model"]["hidden"] == 768);
  CHECK(r.plan["model"]["heads"] == 12);
  CHECK(r.plan["model"]["ffn_hidden"] == 2048);
  CHECK(r.plan["model"]["vocab"] == 260);
  CHECK(has_rule(r, "setting-unmodelled", "entropy_model.sliding_window"));
}

// D7. lingua@437d680 apps/mamba/core_mamba.py:36-60 (BaseMambaArgs: state_dim, n_groups,
// conv_size, ...): a Mamba-2 mixer, which apps/main's LMTransformerArgs does not have.
TEST_CASE("audit5_lingua_mamba_is_left_out_as_unmodelled_layers") {
  ImportResult r = import_data_ok("lingua", "lingua/audit5/lingua_mamba_420M_ctx_3072.yaml", world(1, 8));
  CHECK(has_rule(r, "model-unmodelled-layers", "model.{n_groups, state_dim, conv_size, dt_bias, D_has_head_dim}"));
  CHECK(!r.plan.contains("model"));
  // With a vocabulary it is still no transformer.
  const std::string text = replace(read_data("lingua/audit5/lingua_mamba_420M_ctx_3072.yaml"), "  n_layers: 24\n",
                                   "  n_layers: 24\n  vocab_size: 32000\n");
  CHECK(!import_ok(&import_lingua, text, world(1, 8)).plan.contains("model"));
  // jgcb00/lingua's model.attention / model.mlp: the heads are nested, so the model is left out and
  // the warning names the keys (n_heads is set, under model.attention).
  ImportResult fan = import_data_ok("lingua", "lingua/audit5/lingua_jg_fan_1B.yaml", world(1, 8));
  CHECK(any_contains(fan.warnings, "model.{attention, mlp} are not apps/main's LMTransformerArgs"));
  CHECK(any_contains(fan.warnings, "model left out"));
}

}  // namespace
}  // namespace planck::import::test
