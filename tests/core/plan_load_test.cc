#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "check_util.h"
#include "core/mesh/plan_mesh.h"
#include "core/plan/presets.h"

using namespace planck;
using planck::test::check_text;
using planck::test::plan;

TEST_CASE("core_load a full plan: every section typed, defaults applied") {
  auto c = check_text(R"({
    "format": "planck/1", "name": "x", "notes": ["n"],
    "cluster": {"nodes": 2, "gpus_per_node": 8, "gpu": {"preset": "a100-80g", "nic_gbps": 12.5}},
    "mesh": {"dims": ["dp_replicate", "dp_shard"], "shape": [2, -1]},
    "parallelism": {"data_parallel": "hsdp", "pipeline_schedule": "Interleaved1F1B", "virtual_stages": 2},
    "model": {"preset": "llama3-8b", "layers": 16},
    "training": {"global_batch": 64, "seq_len": 4096, "grad_sync": "every_microbatch"},
    "rank_program": {"steps": ["dp_rank = dp_replicate.rank"], "outputs": {"dp": ["dp_replicate"]}},
    "groups": {"fsdp": [[0,1,2,3,4,5,6,7],[8,9,10,11,12,13,14,15]]}
  })");
  REQUIRE(c.loaded.plan);
  const auto& p = *c.loaded.plan;
  CHECK(p.cluster.gpu.name == "a100-80g");
  CHECK(p.cluster.gpu.nic_gbps == 12.5);
  CHECK(p.cluster.gpu.memory_bytes == 81920LL * 1024 * 1024);
  CHECK(p.parallelism.pipeline_schedule == core::PipelineSchedule::kInterleaved1F1B);
  CHECK(p.model->layers == 16);
  CHECK(p.model->hidden == 4096);
  CHECK(p.training->micro_batch == 1);
  CHECK_FALSE(p.training->grad_accumulation.has_value());
  CHECK(p.training->grad_sync == core::GradSync::kEveryMicrobatch);
  CHECK(p.rank_program->outputs.size() == 1);
  auto mesh = core::plan_mesh(p, nullptr);
  REQUIRE(mesh);
  CHECK(mesh->to_string() == "mesh[dp_replicate=2,dp_shard=8]");
  CHECK(c.diags.items().empty());
}

TEST_CASE("core_load plan-schema: unknown keys get did-you-mean and the key's position") {
  auto c = check_text(
      "{\"format\": \"planck/1\",\n \"cluster\": {\"nodes\": 1, \"gpus_per_node\": 8},\n"
      " \"mesh\": {\"dims\": [\"dp\"], \"shape\": [8]},\n \"trainng\": {}}");
  const auto* d = c.find("plan-schema");
  REQUIRE(d);
  CHECK(d->pointer == "/trainng");
  CHECK(d->line == 4);
  CHECK(d->column == 2);
  CHECK(d->message.find("did you mean 'training'") != std::string::npos);
  CHECK_FALSE(c.loaded.plan);
}

TEST_CASE("core_load plan-schema: missing fields, wrong types, unknown presets, out-of-range values") {
  struct Case {
    std::string text, pointer, words;
  };
  const Case cases[] = {
      {R"({"cluster": {"nodes": 1, "gpus_per_node": 8}, "mesh": {"dims": ["dp"], "shape": [8]}})", "",
       "missing required field 'format'"},
      {R"({"format": "planck/2", "cluster": {"nodes": 1, "gpus_per_node": 8}, "mesh": {"dims": ["dp"], "shape": [8]}})",
       "/format", "unsupported format"},
      {R"({"format": "planck/1", "mesh": {"dims": ["dp"], "shape": [8]}})", "", "missing required section 'cluster'"},
      {R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8}})", "", "missing required section 'mesh'"},
      {R"({"format": "planck/1", "cluster": {"nodes": "2", "gpus_per_node": 8}, "mesh": {"dims": ["dp"], "shape": [8]}})",
       "/cluster/nodes", "must be an integer, not a string"},
      {R"({"format": "planck/1", "cluster": {"nodes": 1.5, "gpus_per_node": 8}, "mesh": {"dims": ["dp"], "shape": [8]}})",
       "/cluster/nodes", "must be an integer"},
      {R"({"format": "planck/1", "cluster": {"nodes": 0, "gpus_per_node": 8}, "mesh": {"dims": ["dp"], "shape": [8]}})",
       "/cluster/nodes", "out of range"},
      {R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8, "gpu": "b20"}, "mesh": {"dims": ["dp"], "shape": [8]}})",
       "/cluster/gpu", "did you mean 'b200'"},
      {R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8}, "mesh": {"dims": ["dp"], "shape": [8]}, "model": "llama3-8c"})",
       "/model", "did you mean 'llama3-8b'"},
      {R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8}, "mesh": {"dims": ["dp"], "shape": [8, 1]}})",
       "/mesh/shape", "1 names but 'mesh.shape' has 2"},
      {R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8}, "mesh": {"dims": ["dp"], "shape": [18446744073709551615]}})",
       "/mesh/shape/0", "does not fit in 64 bits"},
      {R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8}, "mesh": {"dims": ["dp"], "shape": [8]}, "parallelism": {"data_parallel": "hsdpp"}})",
       "/parallelism/data_parallel", "did you mean 'hsdp'"},
      {R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8}, "mesh": {"dims": ["dp"], "shape": [8]}, "training": {"micro_batch": -1}})",
       "/training/micro_batch", "out of range"},
      {R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8}, "mesh": {"dims": ["dp"], "shape": [8]}, "model": {"layers": 2}})",
       "/model", "a custom model needs 'hidden'"},
      {R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8}, "mesh": {"dims": ["dp"], "shape": [8]}, "groups": {"tp": [[0, -1]]}})",
       "/groups/tp/0/1", "out of range"},
      {R"([1, 2])", "", "must be a JSON object"},
      {R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8}, "mesh": {"dims": ["dp"], "shape": [8]}, "training": {"activation_checkpointing": "selective", "recompute_every": 2}})",
       "/training/recompute_every", "narrows full activation checkpointing"},
      {R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8}, "mesh": {"dims": ["dp"], "shape": [8]}, "training": {"recompute_num_layers": 2}})",
       "/training/recompute_num_layers", "activation_checkpointing is \"none\""},
      {R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8}, "mesh": {"dims": ["dp"], "shape": [8]}, "training": {"activation_checkpointing": "full", "recompute_every": 0}})",
       "/training/recompute_every", "out of range"},
      {R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8}, "mesh": {"dims": ["dp"], "shape": [8]}, "training": {"activation_checkpointing": "full", "recompute_every": 2, "recompute_num_layers": 1}})",
       "/training/recompute_num_layers", "both set"},
      {R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8}, "mesh": {"dims": ["dp"], "shape": [8]}, "training": {"fp8": "rowwize"}})",
       "/training/fp8", "did you mean 'rowwise'"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    auto r = check_text(c.text);
    CHECK_FALSE(r.loaded.plan);
    const auto* d = r.find("plan-schema");
    REQUIRE(d);
    CHECK(d->pointer == c.pointer);
    CHECK(d->message.find(c.words) != std::string::npos);
    CHECK(d->line >= 1);
  }
}

TEST_CASE("core_load enum values and presets ignore case; h100 is the SXM part") {
  // Issue 17: "FSDP", "H100" and "Llama3-8B" are what users type; each loads as the canonical value.
  auto r = check_text(R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8, "gpu": "H100"},
      "mesh": {"dims": ["dp_shard"], "shape": [8]}, "model": "Llama3-8B",
      "parallelism": {"data_parallel": "FSDP"},
      "training": {"activation_checkpointing": "Selective", "grad_sync": "Last_Microbatch"}})");
  REQUIRE(r.loaded.plan);
  const auto& p = *r.loaded.plan;
  CHECK(p.cluster.gpu.name == "h100-sxm");
  REQUIRE(p.model);
  CHECK(p.model->name == "llama3-8b");
  CHECK(p.parallelism.data_parallel == planck::core::DataParallel::kFsdp);
  REQUIRE(p.training);
  CHECK(p.training->activation_checkpointing == planck::core::Checkpointing::kSelective);
  CHECK(p.training->grad_sync == planck::core::GradSync::kLastMicrobatch);
}

TEST_CASE("core_load plan-syntax for truncated JSON, empty files and directories") {
  const std::string text = "{\"format\": \"planck/1\", \"cluster\": {\"nodes\": 1,";
  auto truncated = check_text(text);
  const auto* d = truncated.find("plan-syntax");
  REQUIRE(d);
  CHECK(d->line == 1);
  CHECK(d->column == static_cast<int>(text.size()) + 1);  // just past the last byte
  CHECK(check_text("").find("plan-syntax"));

  auto dir = core::load_plan_file(std::filesystem::temp_directory_path().string());
  REQUIRE(dir.diagnostics.items().size() == 1);
  CHECK(dir.diagnostics.items()[0].rule == "plan-syntax");
  CHECK(dir.diagnostics.items()[0].message.find("is a directory") != std::string::npos);

  auto missing = core::load_plan_file("/nonexistent/plan.json");
  REQUIRE(missing.diagnostics.items().size() == 1);
  CHECK(missing.diagnostics.items()[0].message.find("/nonexistent/plan.json") != std::string::npos);
}

TEST_CASE("core_load every bundled plan loads and has a notes line") {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(PLANCK_PLANS_DIR)) {
    if (entry.path().extension() != ".json") continue;
    CAPTURE(entry.path().string());
    auto loaded = core::load_plan_file(entry.path().string());
    REQUIRE(loaded.plan);
    CHECK(loaded.plan->notes.size() >= 1);
    CHECK(core::plan_mesh(*loaded.plan, nullptr));
    ++n;
  }
  CHECK(n >= 6);
}

TEST_CASE("core_presets parameter counts match the published model sizes") {
  // docs/sources/simulator.md §6: Llama-3 8B 8.030B, 70B 70.55B, 405B 405.85B; Mixtral 46.70B total and
  // 12.88B active; DeepSeek-V3 671.0B; GPT-3 174.6B.
  struct Case {
    const char* name;
    double total_b, tol_b;
  };
  const Case cases[] = {{"llama3-8b", 8.030, 0.01},    {"llama3-70b", 70.55, 0.05}, {"llama3-405b", 405.85, 0.1},
                        {"mixtral-8x7b", 46.70, 0.05}, {"deepseek-v3", 671.0, 1.0}, {"gpt3-175b", 174.6, 0.1}};
  for (const auto& c : cases) {
    CAPTURE(c.name);
    auto m = core::model_preset(c.name);
    REQUIRE(m);
    auto pc = core::param_counts(*m);
    CHECK(std::abs(pc.total / 1e9 - c.total_b) < c.tol_b);
  }
  auto mixtral = core::param_counts(*core::model_preset("mixtral-8x7b"));
  CHECK(std::abs(mixtral.active / 1e9 - 12.88) < 0.05);
  auto l8 = core::param_counts(*core::model_preset("llama3-8b"));
  CHECK(std::abs(l8.attention / 1e6 - 41.9) < 0.1);
}

// Which layers full checkpointing recomputes. torchtitan's layer SAC wraps a block when its
// running count is a multiple of N (activation_checkpoint.py _apply_ac_to_transformer_block:
// `_count % ac_freq == 0`), so floor(L / N) of a rank's L blocks; Megatron's block method
// recomputes the first N layers of each chunk (transformer_block.py _checkpointed_forward,
// `layer_idx < recompute_num_layers`), so min(L, N x chunks) when chunks hold L / chunks each.
TEST_CASE("core_recomputed_layers: torchtitan layer SAC and Megatron's block method") {
  core::Training t;
  CHECK(core::recomputed_layers(t, 32, 1) == 0);  // no checkpointing
  t.activation_checkpointing = core::Checkpointing::kSelective;
  CHECK(core::recomputed_layers(t, 32, 1) == 0);  // op-level: no layer runs its whole forward again
  t.activation_checkpointing = core::Checkpointing::kFull;
  CHECK(core::recomputed_layers(t, 32, 1) == 32);
  t.recompute_every = 3;
  CHECK(core::recomputed_layers(t, 32, 1) == 10);  // blocks 3, 6, ..., 30
  CHECK(core::recomputed_layers(t, 8, 4) == 2);    // counted over the rank's chunks together
  t.recompute_every = 40;
  CHECK(core::recomputed_layers(t, 32, 1) == 0);
  t.recompute_every.reset();
  t.recompute_num_layers = 5;
  CHECK(core::recomputed_layers(t, 32, 1) == 5);
  CHECK(core::recomputed_layers(t, 16, 2) == 10);  // 5 of each 8-layer chunk
  CHECK(core::recomputed_layers(t, 16, 4) == 16);  // chunks of 4: all of each
  t.recompute_num_layers = std::int64_t{1} << 40;  // the loader's bound: no overflow
  CHECK(core::recomputed_layers(t, 16, 1 << 20) == 16);
}
