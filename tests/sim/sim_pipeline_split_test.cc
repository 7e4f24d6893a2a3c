// Megatron-LM's pipeline split (core/plan/pipeline_split.h): the splits Megatron's own CI runs
// are accepted and built as Megatron builds them; the ones it refuses are layers-indivisible
// errors citing its check. Rules: NVIDIA/Megatron-LM@d98e8a64dd
// megatron/core/transformer/transformer_config.py:2229-2405,
// megatron/core/transformer/transformer_block.py:95-202,
// megatron/core/transformer/pipeline_parallel_layer_layout.py.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/check/checks.h"
#include "core/plan/pipeline_split.h"
#include "sim/simulate.h"
#include "sim_test_util.h"

namespace {

namespace t = planck::sim::test;
using planck::core::Parallelism;
using V = std::vector<std::int64_t>;

planck::core::Diagnostics verify(const planck::core::Plan& plan) { return t::verify_plan(plan); }

const planck::core::Diagnostic* find(const planck::core::Diagnostics& d, const std::string& rule) {
  for (const auto& x : d.items()) {
    if (x.rule == rule) return &x;
  }
  return nullptr;
}

// Qwen3-235B-A22B (94 layers) over pp 32 x v 3 on 1,024 GPUs, with `split` in parallelism.
std::string qwen3_235b_pp32(const std::string& split) {
  return R"({"format": "planck/1", "cluster": {"nodes": 128, "gpus_per_node": 8, "gpu": "h100-sxm"},
    "mesh": {"dims": ["pp", "dp", "ep"], "shape": [32, 4, 8]},
    "parallelism": {"data_parallel": "zero1", "pipeline_schedule": "interleaved_1f1b", "virtual_stages": 3)" +
         split + R"(},
    "model": "qwen3-235b-a22b", "training": {"global_batch": 2048, "micro_batch": 1, "seq_len": 4096}})";
}

}  // namespace

TEST_CASE("pipeline_split_embedding_and_loss_counted_as_layers") {
  // Megatron-LM's CI case gpt3_mcore_te_tp1_pp4_vp2_account_for_embedding_loss_in_pipeline_split
  // (tests/functional_tests/test_cases/gpt/.../model_config.yaml:7,41-42,52-53): 6 layers, pp 4,
  // 2 chunks per rank, both flags. (6 + 2) / 4 = 2 per rank, 1 per chunk; the first chunk gives its
  // layer to the embedding, the last to the loss (transformer_block.py:148-202).
  Parallelism p;
  p.account_for_embedding_in_pipeline_split = p.account_for_loss_in_pipeline_split = true;
  auto s = planck::core::megatron_split(p, 6, 4, 2);
  REQUIRE(s.is_ok());
  CHECK(s->layers == V{0, 1, 1, 1, 1, 1, 1, 0});
  CHECK(s->embedding_stage == 0);
  CHECK(s->loss_stage == 7);
  // 94 layers over pp 32 x v 3: 96 / 32 = 3 per rank, 1 per chunk.
  auto q = planck::core::megatron_split(p, 94, 32, 3);
  REQUIRE(q.is_ok());
  V want(96, 1);
  want.front() = want.back() = 0;
  CHECK(q->layers == want);
  // Only the embedding flag: 95 is not a multiple of 32 (transformer_config.py:2373-2402).
  Parallelism e;
  e.account_for_embedding_in_pipeline_split = true;
  auto bad = planck::core::megatron_split(e, 94, 32, 3);
  REQUIRE(!bad.is_ok());
  CHECK(bad.message().find("transformer_config.py:2373-2402") != std::string::npos);
  // 10 layers + 2 over pp 4 = 3 per rank, not divisible by v 2 (transformer_config.py:2405-2415).
  CHECK(!planck::core::megatron_split(p, 10, 4, 2).is_ok());
}

TEST_CASE("pipeline_split_uneven_first_and_last_stage") {
  // Megatron-LM's CI case gpt3_mcore_te_tp1_pp4_vp1_uneven_pipeline (model_config.yaml:7,41,51-52):
  // 12 layers, pp 4, --decoder-first/last-pipeline-num-layers 2: the middle two ranks take
  // (12 - 4) / 2 = 4 each (transformer_block.py:103-146).
  Parallelism p;
  p.first_stage_layers = 2;
  p.last_stage_layers = 2;
  auto s = planck::core::megatron_split(p, 12, 4, 1);
  REQUIRE(s.is_ok());
  CHECK(s->layers == V{2, 4, 4, 2});
  // With 2 chunks per rank each rank's layers split over its chunks, model order chunk x pp + rank.
  auto v2 = planck::core::megatron_split(p, 12, 4, 2);
  REQUIRE(v2.is_ok());
  CHECK(v2->layers == V{1, 2, 2, 1, 1, 2, 2, 1});
  // Refusals: 9 middle layers over 2 ranks (:2349-2355); first 3 not divisible by v 2
  // (:2306-2317); with the account-for flags (:2229-2239); 4 + 4 layers over pp 2 leaves 0
  // middle layers, accepted.
  p.first_stage_layers = 1;
  CHECK(planck::core::megatron_split(p, 12, 4, 1).message().find("2349-2355") != std::string::npos);
  p.first_stage_layers = 3;
  CHECK(planck::core::megatron_split(p, 12, 4, 2).message().find("2306-2317") != std::string::npos);
  p.account_for_loss_in_pipeline_split = true;
  CHECK(planck::core::megatron_split(p, 12, 4, 1).message().find("2229-2239") != std::string::npos);
  Parallelism two;
  two.first_stage_layers = two.last_stage_layers = 4;
  auto ok = planck::core::megatron_split(two, 8, 2, 1);
  REQUIRE(ok.is_ok());
  CHECK(ok->layers == V{4, 4});
  CHECK(!planck::core::megatron_split(two, 9, 2, 1).is_ok());  // 1 middle layer, 0 middle ranks (:2341-2346)
}

TEST_CASE("pipeline_split_layout_strings_as_megatron_parses_them") {
  // Megatron-LM CI: moe/gpt3_moe_mcore_te_tp2_pp2_ep4_etp1_no_mtp_no_a2a_ovlp_fine_grained_offloading
  // (model_config.yaml:16,52,54): 15 layers, pp 2, "Et*3|(tt|)*6L" -> Ettt | tt x 6 | L, 8 stages,
  // 4 chunks per rank (pipeline_parallel_layer_layout.py parse_str_to_list).
  auto stages = planck::core::parse_pipeline_layout("Et*3|(tt|)*6L");
  REQUIRE(stages.is_ok());
  CHECK(*stages == std::vector<std::string>{"Ettt", "tt", "tt", "tt", "tt", "tt", "tt", "L"});
  Parallelism p;
  p.pipeline_layout = "Et*3|(tt|)*6L";
  auto s = planck::core::megatron_split(p, 15, 2, 1);
  REQUIRE(s.is_ok());
  CHECK(s->virtual_stages == 4);
  CHECK(s->layers == V{3, 2, 2, 2, 2, 2, 2, 0});
  CHECK(s->loss_stage == 7);
  // mixtral/deepseekv3_proxy_flex_tp1pp4emp16etp1cp1_release (model_config.yaml:23-24,62,76):
  // 14 layers and 1 MTP layer, pp 4, "Et*2|(tt|)*5t|tmL": 8 stages, the MTP layer with the loss.
  p.pipeline_layout = "Et*2|(tt|)*5t|tmL";
  auto d = planck::core::megatron_split(p, 14, 4, 2);
  REQUIRE(d.is_ok());
  CHECK(d->layers == V{2, 2, 2, 2, 2, 2, 1, 1});
  CHECK(d->mtp_layers == 1);
  // Refusals: 7 stages over pp 2 (:41-45); the wrong layer count (:107-110); an unknown
  // character (:314-318); the loss not last; a virtual_stages that disagrees (transformer_config.py:2275-2282).
  p.pipeline_layout = "Et*3|(tt|)*5L";
  CHECK(planck::core::megatron_split(p, 13, 2, 1).message().find(":41-45") != std::string::npos);
  p.pipeline_layout = "Et*3|(tt|)*6L";
  CHECK(planck::core::megatron_split(p, 16, 2, 1).message().find(":107-110") != std::string::npos);
  CHECK(planck::core::megatron_split(p, 15, 2, 2).message().find("2275-2282") != std::string::npos);
  p.pipeline_layout = "Ex*3|(tt|)*6L";
  CHECK(planck::core::megatron_split(p, 15, 2, 1).message().find(":314-318") != std::string::npos);
  p.pipeline_layout = "Ett|Lt";
  CHECK(!planck::core::megatron_split(p, 3, 2, 1).is_ok());
  // Commas are cosmetic; "(|ab)*2" style groups unroll before single characters.
  auto c = planck::core::parse_pipeline_layout("E,t*2|(t|)*2,L");
  REQUIRE(c.is_ok());
  CHECK(*c == std::vector<std::string>{"Ett", "t", "t", "L"});
}

TEST_CASE("pipeline_split_94_layers_pp32_v3_verifies_and_prices_head_only_chunk") {
  // The issue's case: 94 layers over pp 32 x v 3 = 96 stages is layers-indivisible (an error:
  // fewer layers than stages) without Megatron's flags, and verifies with both account-for flags.
  auto plain = verify(t::plan_from(qwen3_235b_pp32("")));
  const auto* e = find(plain, "layers-indivisible");
  REQUIRE(e != nullptr);
  CHECK(e->severity == planck::core::Severity::kError);
  const std::string flags =
      R"(, "account_for_embedding_in_pipeline_split": true, "account_for_loss_in_pipeline_split": true)";
  auto plan = t::plan_from(qwen3_235b_pp32(flags));
  CHECK(find(verify(plan), "layers-indivisible") == nullptr);
  auto only_embedding = verify(t::plan_from(qwen3_235b_pp32(R"(, "account_for_embedding_in_pipeline_split": true)")));
  const auto* refused = find(only_embedding, "layers-indivisible");
  REQUIRE(refused != nullptr);
  CHECK(refused->message.find("Megatron-LM refuses") != std::string::npos);
  CHECK(refused->pointer == "/parallelism/account_for_embedding_in_pipeline_split");
  // simulate builds Megatron's split: the first chunk only the embedding, the last only the head
  // and loss, which it prices as the head's forward and backward (no transformer layer).
  auto mesh = t::mesh_of(plan);
  auto r = planck::sim::simulate(plan, mesh);
  REQUIRE(r.is_ok());
  V want(96, 1);
  want.front() = want.back() = 0;
  CHECK(r->layers_per_stage == want);
  // An uneven split with first/last stages the same way.
  auto uneven = t::plan_from(qwen3_235b_pp32(R"(, "first_stage_layers": 3, "last_stage_layers": 1)"));
  const auto uneven_found = verify(uneven);  // kept alive: find() points into it
  const auto* u = find(uneven_found, "layers-indivisible");
  REQUIRE(u != nullptr);  // last 1 is not divisible by virtual_stages 3
  CHECK(u->message.find("2325-2336") != std::string::npos);
}
