// Expert-parallel groups of imported plans against the rank lists each framework builds.
// Expected lists are derived by hand from the frameworks' documented index arithmetic:
//  - Megatron-Core parallel_state.py initialize_model_parallel: dense RankGenerator order
//    "tp-cp-ep-dp-pp" with ep = 1, expert RankGenerator [etp, ep, edp, pp], first token fastest
//    (NVIDIA/Megatron-LM@d98e8a64 megatron/core/parallel_state.py:269-371, 857-895);
//  - torchtitan ParallelDims.build_mesh: dense mesh (pp, dp_replicate, dp_shard, cp, tp), sparse
//    mesh (pp, dp_replicate, efsdp, ep[, etp]), row-major, last name fastest
//    (pytorch/torchtitan@b5bcd76c torchtitan/distributed/parallel_dims.py:211-330; early 2026
//    @9810191b for etp);
//  - DeepSpeed utils/groups.py _create_expert_and_data_parallel: EP = consecutive blocks of
//    ep_size ranks, EDP = range(i, world, ep_size) (deepspeedai/DeepSpeed@edaa7221:304-398).
// docs/plan-format.md "Mixture of experts" says how planck's mesh represents them.

#include <doctest/doctest.h>

#include <string>

#include "core/mesh/roles.h"
#include "core/plan/hf_config.h"
#include "core/plan/presets.h"
#include "core/schedule/schedule.h"
#include "tests/import/import_test_util.h"

namespace planck::import::test {
namespace {

using Groups = std::vector<std::vector<std::int64_t>>;

// The communicators of `role` in the imported plan.
Groups role_groups(const ImportResult& r, const std::string& role) {
  core::LoadedPlan lp = core::load_plan_text(r.plan.dump(), "imported.json");
  REQUIRE(lp.plan.has_value());
  auto mesh = core::plan_mesh(*lp.plan, nullptr);
  REQUIRE(mesh.has_value());
  auto dims = core::role_dims(*lp.plan, *mesh, role);
  REQUIRE_MESSAGE(dims.has_value(), "no role " << role);
  core::GroupSet gs = mesh->groups(*dims);
  Groups out;
  for (std::int64_t g = 0; g < gs.num_groups(); ++g) out.push_back(gs.members(g));
  return out;
}

std::string megatron(const std::string& flags) {
  return "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 4 --hidden-size 256 --num-attention-heads 8 "
         "--seq-length 1024 --vocab-size 1024 --micro-batch-size 1 --global-batch-size 64 --num-experts 8 "
         "--sequence-parallel " +
         flags + "\n";
}

TEST_CASE("moe_groups_megatron_case_b_world8_tp2_ep4_etp1") {
  // dp = 8 / 2 = 4, edp = 8 / (1 x 4) = 2. Dense rank = t + 2d, expert rank = e + 4 ed.
  ImportResult r = import_ok(&import_megatron,
                             megatron("--tensor-model-parallel-size 2 --expert-model-parallel-size 4 "
                                      "--expert-tensor-parallel-size 1"),
                             world(1, 8), "train.sh");
  CHECK(role_groups(r, "ep") == Groups{{0, 1, 2, 3}, {4, 5, 6, 7}});
  CHECK(role_groups(r, "edp") == Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}});
  CHECK(role_groups(r, "dp") == Groups{{0, 2, 4, 6}, {1, 3, 5, 7}});
  CHECK(role_groups(r, "tp") == Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}});
  CHECK(r.plan["parallelism"]["etp"] == 1);
}

TEST_CASE("moe_groups_megatron_case_b_prime_etp_equals_tp") {
  // etp = tp = 2, ep 4: edp = 8 / (2 x 4) = 1. Expert rank = et + 2 e.
  ImportResult r = import_ok(&import_megatron,
                             megatron("--tensor-model-parallel-size 2 --expert-model-parallel-size 4"),
                             world(1, 8), "train.sh");
  CHECK(role_groups(r, "ep") == Groups{{0, 2, 4, 6}, {1, 3, 5, 7}});
  CHECK(role_groups(r, "etp") == Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}});
  // Every expert shard is unique: no expert-data-parallel group.
  core::LoadedPlan lp = core::load_plan_text(r.plan.dump(), "imported.json");
  REQUIRE(lp.plan.has_value());
  auto mesh = core::plan_mesh(*lp.plan, nullptr);
  REQUIRE(mesh.has_value());
  CHECK(core::expert_degrees(*lp.plan, *mesh).edp == 1);
  CHECK(core::expert_degrees(*lp.plan, *mesh).ep == 4);
}

TEST_CASE("moe_groups_megatron_case_a_world16_tp2_pp2_ep2") {
  // dp = 16 / (2 x 2) = 4; etp = tp: edp = 16 / (2 x 2 x 2) = 2.
  // Expert rank = et + 2 e + 4 ed + 8 p.
  ImportResult r = import_ok(&import_megatron,
                             megatron("--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 "
                                      "--expert-model-parallel-size 2"),
                             world(2, 8), "train.sh");
  CHECK(role_groups(r, "ep") == Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}});
  CHECK(role_groups(r, "edp") == Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}, {8, 12}, {9, 13}, {10, 14}, {11, 15}});
  CHECK(role_groups(r, "dp") == Groups{{0, 2, 4, 6}, {1, 3, 5, 7}, {8, 10, 12, 14}, {9, 11, 13, 15}});
  CHECK(role_groups(r, "pp") == Groups{{0, 8}, {1, 9}, {2, 10}, {3, 11}, {4, 12}, {5, 13}, {6, 14}, {7, 15}});

  // Case A': etp = 1, edp = 16 / (1 x 2 x 2) = 4; the EP pairs are the dense TP pairs.
  ImportResult r1 = import_ok(&import_megatron,
                              megatron("--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 "
                                       "--expert-model-parallel-size 2 --expert-tensor-parallel-size 1"),
                              world(2, 8), "train.sh");
  CHECK(role_groups(r1, "ep") == Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}});
  CHECK(role_groups(r1, "edp") == Groups{{0, 2, 4, 6}, {1, 3, 5, 7}, {8, 10, 12, 14}, {9, 11, 13, 15}});
}

TEST_CASE("moe_groups_megatron_partial_tp_group_is_refused") {
  // tp 4, ep 2, etp 1: Megatron's EP pair is half a TP group, which no mesh dim expresses.
  std::string err = import_error(&import_megatron,
                                 megatron("--tensor-model-parallel-size 4 --expert-model-parallel-size 2 "
                                          "--expert-tensor-parallel-size 1"),
                                 world(1, 8), "train.sh");
  CHECK(err.find("multiple of 4") != std::string::npos);
}

std::string titan(const std::string& parallelism) {
  return "[model]\nname = \"deepseek_v3\"\nflavor = \"671B\"\n[training]\nlocal_batch_size = 1\nseq_len = 4096\n"
         "[parallelism]\n" +
         parallelism;
}

TEST_CASE("moe_groups_torchtitan_world16_dp_shard8_tp2_ep4") {
  // HEAD (no ETP, i.e. etp 1): efsdp = 8 x 2 / 4 = 4, sparse mesh (efsdp=4, ep=4): rank = e + 4 f.
  ImportResult r = import_ok(&import_torchtitan,
                             titan("data_parallel_shard_degree = 8\ntensor_parallel_degree = 2\n"
                                   "expert_parallel_degree = 4\n"),
                             world(2, 8));
  CHECK(role_groups(r, "ep") == Groups{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}});
  CHECK(role_groups(r, "edp") == Groups{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}});
  // Dense FSDP stays torchtitan's dp_shard: [0,2,...,14], [1,3,...,15].
  CHECK(role_groups(r, "fsdp") == Groups{{0, 2, 4, 6, 8, 10, 12, 14}, {1, 3, 5, 7, 9, 11, 13, 15}});
  // The batch still divides by dp_shard 8: local 1 x 8.
  CHECK(r.plan["training"]["global_batch"] == 8);

  // Early 2026, etp = tp = 2: efsdp = 8 x 2 / (2 x 4) = 2, rank = et + 2 e + 8 f.
  ImportResult r2 = import_ok(&import_torchtitan,
                              titan("data_parallel_shard_degree = 8\ntensor_parallel_degree = 2\n"
                                    "expert_parallel_degree = 4\nexpert_tensor_parallel_degree = 2\n"),
                              world(2, 8));
  CHECK(role_groups(r2, "ep") == Groups{{0, 2, 4, 6}, {1, 3, 5, 7}, {8, 10, 12, 14}, {9, 11, 13, 15}});
  CHECK(role_groups(r2, "etp") ==
        Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}});
  CHECK(role_groups(r2, "edp") == Groups{{0, 8}, {1, 9}, {2, 10}, {3, 11}, {4, 12}, {5, 13}, {6, 14}, {7, 15}});
}

TEST_CASE("moe_groups_deepspeed_autoep_world8_ep4") {
  // No TP (legacy E+D): EP [0..3], [4..7]; EDP range(i, 8, 4).
  const std::string cfg =
      R"({"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1, "zero_optimization": {"stage": 1},
          "expert_parallel": {"enabled": true, "autoep_size": 4}})";
  ImportResult r = import_ok(&import_deepspeed, cfg, world(1, 8));
  CHECK(role_groups(r, "ep") == Groups{{0, 1, 2, 3}, {4, 5, 6, 7}});
  CHECK(role_groups(r, "edp") == Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}});
  CHECK(r.plan["parallelism"]["data_parallel"] == "zero1");
  // AutoEP + AutoTP 2 (folding tables): TP [0,1]..; dense DP [0,2,4,6]; EP [0..3]; EDP [0,4]...
  const std::string tp_cfg =
      R"({"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1, "zero_optimization": {"stage": 1},
          "tensor_parallel": {"autotp_size": 2}, "expert_parallel": {"enabled": true, "autoep_size": 4}})";
  ImportResult t = import_ok(&import_deepspeed, tp_cfg, world(1, 8));
  CHECK(role_groups(t, "ep") == Groups{{0, 1, 2, 3}, {4, 5, 6, 7}});
  CHECK(role_groups(t, "edp") == Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}});
  CHECK(role_groups(t, "fsdp") == Groups{{0, 2, 4, 6}, {1, 3, 5, 7}});
}

// The lowered plan of an import.
core::Schedule lowered(const ImportResult& r, core::Plan* plan_out = nullptr) {
  core::LoadedPlan lp = core::load_plan_text(r.plan.dump(), "imported.json");
  REQUIRE(lp.plan.has_value());
  auto mesh = core::plan_mesh(*lp.plan, nullptr);
  REQUIRE(mesh.has_value());
  auto s = core::lower(*lp.plan, *mesh);
  REQUIRE(s.is_ok());
  if (plan_out) *plan_out = *lp.plan;
  return *s;
}

TEST_CASE("moe_import_torchtitan_deepseek_v3_671b_with_ep64") {
  // The shipped TOML (ep 1, etp 1, dp_shard -1) with expert_parallel_degree = 64, on 32 x 8.
  std::string text = read_data("moe/deepseek_v3_671b.toml");
  const std::string from = "expert_parallel_degree = 1";
  REQUIRE(text.find(from) != std::string::npos);
  text.replace(text.find(from), from.size(), "expert_parallel_degree = 64");
  ImportResult r = import_ok(&import_torchtitan, text, world(32, 8));
  // dp_shard 256 = efsdp 4 x ep 64 (etp 1, cp 1, tp 1: EP borrows 64 of dp_shard).
  CHECK(dims_of(r) == Dims{"pp", "dp_replicate", "dp_shard", "ep", "cp", "tp"});
  CHECK(shape_of(r) == Shape{1, 1, 4, 64, 1, 1});
  CHECK(r.plan["model"] == "deepseek-v3");
  // The batch divides by torchtitan's dp_shard 256: local 4 x 256.
  CHECK(r.plan["training"]["global_batch"] == 4 * 256);
  core::Plan plan;
  core::Schedule s = lowered(r, &plan);
  CHECK(s.micro_batches == 1);
  bool a2a = false;
  for (const auto& c : s.collectives) {
    if (c.op != core::CollOp::kAllToAll) continue;
    a2a = true;
    CHECK(c.group_size == 64);
    // local_batch_size 4 x 4096 tokens x top-8 rows of 7168 bf16 values per rank per call.
    CHECK(c.bytes_per_call == std::int64_t{4} * 4096 * 8 * 7168 * 2);
  }
  CHECK(a2a);
  auto mesh = core::plan_mesh(plan, nullptr);
  REQUIRE(mesh.has_value());
  const auto ed = core::expert_degrees(plan, *mesh);
  CHECK(ed.ep == 64);
  CHECK(ed.edp == 4);
}

TEST_CASE("moe_import_expert_all_to_all_overlap") {
  // Megatron's --overlap-moe-expert-parallel-comm (opt-in) -> parallelism.ep_overlap true.
  ImportResult m = import_ok(&import_megatron, megatron("--expert-model-parallel-size 8 --overlap-moe-expert-parallel-comm"),
                             world(1, 8), "train.sh");
  CHECK(m.plan["parallelism"]["ep_overlap"] == true);
  ImportResult plain = import_ok(&import_megatron, megatron("--expert-model-parallel-size 8"), world(1, 8), "train.sh");
  CHECK_FALSE(plain.plan["parallelism"].contains("ep_overlap"));
  // torchtitan: DualPipeV with pp 2, ep 64; its default (true) is planck's default for
  // dualpipev, so only an explicit false is written.
  std::string text = read_data("moe/deepseek_v3_671b.toml");
  auto set = [&text](const std::string& from, const std::string& to) {
    REQUIRE(text.find(from) != std::string::npos);
    text.replace(text.find(from), from.size(), to);
  };
  set("expert_parallel_degree = 1", "expert_parallel_degree = 64");
  set("pipeline_parallel_degree = 1", "pipeline_parallel_degree = 2");
  set(R"(pipeline_parallel_schedule = "Interleaved1F1B")", R"(pipeline_parallel_schedule = "DualPipeV")");
  ImportResult on = import_ok(&import_torchtitan, text, world(32, 8));
  CHECK(on.plan["parallelism"]["pipeline_schedule"] == "dualpipev");
  CHECK_FALSE(on.plan["parallelism"].contains("ep_overlap"));
  set("expert_parallel_degree = 64", "expert_parallel_degree = 64\npipeline_parallel_expert_parallel_overlap = false");
  ImportResult off = import_ok(&import_torchtitan, text, world(32, 8));
  CHECK(off.plan["parallelism"]["ep_overlap"] == false);
}

TEST_CASE("moe_import_megatron_mixtral_example") {
  // examples/mixtral: tp 1, pp 4, ep 8 on 4 nodes x 8: dp = 32 / 4 = 8, edp = 32 / (1 x 8 x 4) = 1.
  ImportResult r = import_ok(&import_megatron, read_data("moe/train_mixtral_8x7b_distributed.sh"), world(4, 8),
                             "train.sh");
  CHECK(dims_of(r) == Dims{"pp", "dp", "ep", "cp", "tp"});
  CHECK(shape_of(r) == Shape{4, 1, 8, 1, 1});
  CHECK(role_groups(r, "ep").size() == 4);  // one EP group of 8 per pipeline stage
  CHECK(role_groups(r, "ep")[0] == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
  // Megatron's micro-batches: 256 / (1 x dp 8) = 32.
  CHECK(r.plan["training"]["grad_accumulation"] == 256 / 8);
}

TEST_CASE("moe_import_deepspeed_autoep_example") {
  // DeepSpeedExamples AutoEP ZeRO-1: autoep_size 8 on one node of 8.
  ImportResult r = import_ok(&import_deepspeed, read_data("moe/ds_autoep_zero1_qwen3_5_moe.json"), world(1, 8));
  CHECK(dims_of(r) == Dims{"dp", "ep", "tp"});
  CHECK(shape_of(r) == Shape{1, 8, 1});
  CHECK(role_groups(r, "ep") == Groups{{0, 1, 2, 3, 4, 5, 6, 7}});
}

TEST_CASE("presets_match_their_hugging_face_configs") {
  const std::pair<const char*, const char*> cases[] = {
      {"deepseek-v3", "deepseek-ai--DeepSeek-V3_config.json"},
      {"kimi-k2", "moonshotai--Kimi-K2-Instruct_config.json"},
      {"llama4-scout", "meta-llama--Llama-4-Scout-17B-16E-Instruct_config.json"},
      {"llama4-maverick", "meta-llama--Llama-4-Maverick-17B-128E-Instruct_config.json"},
      {"qwen3-30b-a3b", "Qwen--Qwen3-30B-A3B_config.json"},
      {"qwen3-235b-a22b", "Qwen--Qwen3-235B-A22B_config.json"},
      {"gpt-oss-20b", "openai--gpt-oss-20b_config.json"},
      {"gpt-oss-120b", "openai--gpt-oss-120b_config.json"},
      {"mixtral-8x7b", "mistralai--Mixtral-8x7B-v0.1_config.json"},
      {"mixtral-8x22b", "mistralai--Mixtral-8x22B-v0.1_config.json"},
      {"qwen3-0.6b", "Qwen--Qwen3-0.6B_config.json"},
      {"qwen3-1.7b", "Qwen--Qwen3-1.7B_config.json"},
      {"qwen3-8b", "Qwen--Qwen3-8B_config.json"},
      {"qwen3-32b", "Qwen--Qwen3-32B_config.json"},
  };
  for (const auto& c : cases) {
    const std::string preset = c.first, file = c.second;  // clang 14: no structured binding in CAPTURE
    CAPTURE(preset);
    auto hf = nlohmann::json::parse(read_data(std::string("hf/") + file));
    REQUIRE(core::is_hf_config(hf));
    auto m = core::model_from_hf_config(hf);
    REQUIRE(m.is_ok());
    m->erase("name");
    core::LoadedPlan lp = core::load_plan_text(
        R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 1}, "mesh": {"dims": ["tp"], "shape": [1]},
            "model": )" + m->dump() + "}",
        file);
    REQUIRE(lp.plan.has_value());
    core::ModelSpec a = *lp.plan->model, b = *core::model_preset(preset);
    a.name = b.name;
    CHECK(a.layers == b.layers);
    CHECK(a.expert_groups == b.expert_groups);
    CHECK(a.expert_groups_per_token == b.expert_groups_per_token);
    CHECK(a.hidden == b.hidden);
    CHECK(a.ffn_hidden == b.ffn_hidden);
    CHECK(a.heads == b.heads);
    CHECK(a.kv_heads == b.kv_heads);
    if (b.kv_lora_rank == 0) CHECK(a.effective_head_dim() == b.effective_head_dim());  // MLA has its own dims
    CHECK(a.vocab == b.vocab);
    CHECK(a.experts == b.experts);
    CHECK(a.experts_per_token == b.experts_per_token);
    CHECK(a.moe_ffn_hidden == b.moe_ffn_hidden);
    CHECK(a.shared_experts == b.shared_experts);
    CHECK(a.dense_layers == b.dense_layers);
    CHECK(a.moe_layer_count() == b.moe_layer_count());
    CHECK(a.kv_lora_rank == b.kv_lora_rank);
    CHECK(a.q_lora_rank == b.q_lora_rank);
    CHECK(a.tied_embeddings == b.tied_embeddings);
  }
  // DeepSeek-V3's config.json: n_group 8, topk_group 4 (group-limited routing); Kimi K2's n_group
  // 1 means unlimited, so nothing is set.
  auto ds = core::model_from_hf_config(nlohmann::json::parse(read_data("hf/deepseek-ai--DeepSeek-V3_config.json")));
  REQUIRE(ds.is_ok());
  CHECK((*ds)["expert_groups"] == 8);
  CHECK((*ds)["expert_groups_per_token"] == 4);
  auto kimi = core::model_from_hf_config(nlohmann::json::parse(read_data("hf/moonshotai--Kimi-K2-Instruct_config.json")));
  REQUIRE(kimi.is_ok());
  CHECK_FALSE(kimi->contains("expert_groups"));
  // Llama 4 Maverick: every 2nd of 48 layers is MoE (interleave_moe_layer_step 2).
  CHECK(core::model_preset("llama4-maverick")->moe_layer_count() == 24);
  // A config without the shape says so.
  auto bad = core::model_from_hf_config(nlohmann::json{{"model_type", "mystery"}, {"hidden_size", 8}});
  REQUIRE(!bad.is_ok());
  CHECK(bad.message().find("num_hidden_layers") != std::string::npos);
}

}  // namespace
}  // namespace planck::import::test
