// Enumeration counts on small worlds, counted by hand in the comments.

#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "core/plan/presets.h"
#include "sim/enumerate.h"
#include "sim/enumerate_plan.h"
#include "sim_test_util.h"

namespace {

using planck::core::DataParallel;

planck::sim::EnumerateRequest small(std::int64_t world, std::int64_t gpn, std::int64_t heads) {
  planck::sim::EnumerateRequest r;
  r.world = world;
  r.gpus_per_node = gpn;
  r.model.name = "tiny";
  r.model.layers = 4;
  r.model.hidden = 64;
  r.model.ffn_hidden = 256;
  r.model.heads = heads;
  r.model.kv_heads = heads;
  r.model.vocab = 128;
  r.gpu = *planck::core::gpu_preset("h100-sxm");
  r.seq_len = 256;
  return r;
}

// 2 GPUs in one node, a 2-expert top-1 MoE: ep 2 is the only expert-parallel layout.
planck::sim::EnumerateRequest small_moe() {
  auto r = small(2, 2, 2);
  r.model.experts = 2;
  r.model.experts_per_token = 1;
  r.model.moe_ffn_hidden = 128;
  return r;
}

}  // namespace

TEST_CASE("sim_enumerate_world_4_by_hand") {
  // 4 = pp x r x s x cp x tp: C(2 + 4, 4) = 15 ordered factorizations. Strategies per (r, s):
  // (1,1) none; (r>1,1) ddp; (1,s>1) fsdp, fsdp without reshard, zero1, zero2; both > 1: hsdp x 2.
  // (r,s) = (1,1): pp x cp x tp = 4 has 6 orderings -> 6; (2,1): 3 -> 3; (4,1): 1 -> 1;
  // (1,2): 3 x 4 = 12; (1,4): 1 x 4 = 4; (2,2): 1 x 2 = 2. Total 28 layouts.
  auto r = planck::sim::enumerate(small(4, 4, 4));
  REQUIRE(r.is_ok());
  CHECK(r->considered == 15);
  CHECK(r->valid == 28);
  CHECK(r->layouts.size() == 28);
  // heads 2: tp = 4 is out; only (pp, r, s, cp) = (1,1,1,1) with tp 4 -> 27.
  auto h2 = planck::sim::enumerate(small(4, 4, 2));
  REQUIRE(h2.is_ok());
  CHECK(h2->valid == 27);
  // 2 GPUs per node: tp = 4 would cross nodes -> 27 again; allowed -> 28.
  auto cross = small(4, 2, 4);
  CHECK(planck::sim::enumerate(cross)->valid == 27);
  cross.allow_cross_node_tp = true;
  CHECK(planck::sim::enumerate(cross)->valid == 28);
}

TEST_CASE("sim_enumerate_global_batch_and_sizes") {
  // Global batch 2, micro-batch 1: r x s must divide 2: (1,1) 6 + (2,1) 3 + (1,2) 12 = 21.
  auto req = small(4, 4, 4);
  req.global_batch = 2;
  auto r = planck::sim::enumerate(req);
  REQUIRE(r.is_ok());
  CHECK(r->valid == 21);
  for (const auto& l : r->layouts) {
    const std::int64_t dp = l.shape[1] * l.shape[2];
    CHECK(l.micro_batches * dp == 2);
  }
  // World 1: one factorization, one layout. World 7 (prime), heads 7: C(1+4,4) = 5
  // factorizations; s = 7 gives 4 strategies, r = 7 one, the other 3 one each -> 8.
  CHECK(planck::sim::enumerate(small(1, 8, 4))->valid == 1);
  auto req7 = small(7, 7, 7);
  req7.model.layers = 8;     // pp 7 needs 7 layers
  req7.seq_len = 14 * 16;    // cp 7 needs seq % 14 == 0
  auto seven = planck::sim::enumerate(req7);
  CHECK(seven->considered == 5);
  CHECK(seven->valid == 8);
  // 12 = 2^2 x 3: C(6,4) x C(5,4) = 15 x 5 = 75 factorizations.
  CHECK(planck::sim::enumerate(small(12, 12, 12))->considered == 75);
}

TEST_CASE("sim_enumerate_moe_varies_ep") {
  // 2 GPUs, 6 factors: C(1 + 5, 5) = 6 factorizations; experts 2 allow ep 2. Layouts: tp 2 (1),
  // cp 2 (1), pp 2 (1), ep 2 (1), r 2 ddp (1), s 2 (4 strategies) = 9.
  auto req = small_moe();
  auto r = planck::sim::enumerate(req);
  REQUIRE(r.is_ok());
  CHECK(r->considered == 6);
  CHECK(r->valid == 9);
  // Only the ep 2 layout has an ep dim (ep 1 means no expert parallelism).
  int with_ep = 0;
  for (const auto& l : r->layouts) {
    if (l.dims.size() == 6 && l.dims[3] == "ep") ++with_ep;
  }
  CHECK(with_ep == 1);
  // 3 experts do not split over 2 ranks: ep 2 drops out -> 8.
  req.model.experts = 3;
  CHECK(planck::sim::enumerate(req)->valid == 8);
}

TEST_CASE("sim_enumerate_csv_columns_hold_for_layouts_without_ep") {
  // The 2-GPU MoE case above: the ep 2 layout has 6 dims, the others 5. Every CSV row has the
  // header's column count, and each dim's value sits under its own name (ep 1 where absent).
  auto req = small_moe();
  auto r = planck::sim::enumerate(req);
  REQUIRE(r.is_ok());
  std::istringstream in(planck::sim::enumerate_to_csv(*r, -1));
  auto split = [](const std::string& line) {
    std::vector<std::string> out;
    std::stringstream ss(line);
    for (std::string f; std::getline(ss, f, ',');) out.push_back(f);
    return out;
  };
  std::string line;
  REQUIRE(std::getline(in, line));
  const auto header = split(line);
  const std::vector<std::string> dims = {"pp", "dp_replicate", "dp_shard", "ep", "cp", "tp"};
  REQUIRE(header.size() > dims.size());
  CHECK(std::vector<std::string>(header.begin() + 1, header.begin() + 7) == dims);
  std::size_t rows = 0;
  for (std::size_t i = 0; std::getline(in, line); ++i, ++rows) {
    const auto row = split(line);
    REQUIRE(row.size() == header.size());
    const auto& l = r->layouts[i];
    for (std::size_t c = 0; c < dims.size(); ++c) {
      const auto it = std::find(l.dims.begin(), l.dims.end(), dims[c]);
      const std::int64_t want = it == l.dims.end() ? 1 : l.shape[static_cast<std::size_t>(it - l.dims.begin())];
      CHECK(row[c + 1] == std::to_string(want));
    }
    // The column after the dims is the strategy, whatever the layout's dim count.
    CHECK(row[7] == planck::core::to_string(l.data_parallel));
  }
  CHECK(rows == r->layouts.size());
}

TEST_CASE("sim_enumerate_ranking_pareto_and_no_fit") {
  auto r = planck::sim::enumerate(small(8, 8, 8));
  REQUIRE(r.is_ok());
  REQUIRE(!r->layouts.empty());
  CHECK(r->layouts.front().pareto);
  std::int64_t best_mem = r->layouts.front().memory_peak;
  for (std::size_t i = 1; i < r->layouts.size(); ++i) {
    const auto& a = r->layouts[i - 1];
    const auto& b = r->layouts[i];
    CHECK(a.step_time_s <= b.step_time_s);
    // On the front exactly when it needs less memory than everything ranked before it.
    CHECK(b.pareto == (b.memory_peak < best_mem));
    best_mem = std::min(best_mem, b.memory_peak);
  }
  // A GPU too small for anything: no layout is valid (planck enumerate exits 1).
  auto tiny = small(8, 8, 8);
  tiny.gpu.memory_bytes = 1000;
  auto none = planck::sim::enumerate(tiny);
  REQUIRE(none.is_ok());
  CHECK(none->valid == 0);
  CHECK(none->considered == 35);  // C(3 + 4, 4)
  // Bad sizes are errors naming the value.
  auto bad = small(12, 8, 8);
  auto e = planck::sim::enumerate(bad);
  REQUIRE_FALSE(e.is_ok());
  CHECK(e.message().find("12") != std::string::npos);
}

TEST_CASE("sim_enumerate_llama3_8b_64_gpus_keeps_tp_in_node") {
  auto req = small(64, 8, 8);
  req.model = *planck::core::model_preset("llama3-8b");
  req.seq_len = 8192;
  auto r = planck::sim::enumerate(req);
  REQUIRE(r.is_ok());
  CHECK(r->valid > 0);
  for (const auto& l : r->layouts) {
    CHECK(l.shape[4] <= 8);                 // tp inside a node
    CHECK(32 % l.shape[4] == 0);            // heads
    if (l.data_parallel == DataParallel::kDdp) CHECK(l.shape[2] == 1);
  }
}

TEST_CASE("sim_enumerate_framework_keeps_to_what_it_runs") {
  // World 4 as in sim_enumerate_world_4_by_hand, counted per framework:
  // megatron: (1,1) none 6; (2,1) ddp 3; (4,1) ddp 1; (1,2) zero1, zero2, fsdp: 3 x 3 = 9;
  //   (1,4) 3 x 1 = 3; (2,2) no replicate x shard split in Megatron-Core: 0. Total 22.
  // torchtitan: 6 + 3 + 1 + (1,2) fsdp with and without reshard 3 x 2 = 6 + (1,4) 2 + (2,2) hsdp
  //   x 2 = 2. Total 20.
  using planck::sim::Framework;
  using PS = planck::core::PipelineSchedule;
  using C = planck::core::Checkpointing;
  auto req = small(4, 4, 4);
  req.framework = Framework::kMegatron;
  auto meg = planck::sim::enumerate(req);
  REQUIRE(meg.is_ok());
  CHECK(meg->valid == 22);
  CHECK(meg->framework == Framework::kMegatron);
  for (const auto& l : meg->layouts) {
    CHECK(l.data_parallel != DataParallel::kHsdp);
    CHECK(!(l.data_parallel == DataParallel::kFsdp && !l.reshard_after_forward));
    CHECK((l.pipeline_schedule == PS::k1F1B || l.pipeline_schedule == PS::kInterleaved1F1B));
    CHECK(l.checkpointing != C::kSelective);
  }
  req.framework = Framework::kTorchtitan;
  auto tt = planck::sim::enumerate(req);
  REQUIRE(tt.is_ok());
  CHECK(tt->valid == 20);
  for (const auto& l : tt->layouts) {
    CHECK(l.data_parallel != DataParallel::kZero1);
    CHECK(l.data_parallel != DataParallel::kZero2);
    CHECK_FALSE(l.async_tp);  // torchtitan's async TP is opt-in
  }
  // Megatron's --tp-comm-overlap wherever sequence parallel runs (it requires it).
  for (const auto& l : meg->layouts) CHECK(l.async_tp == l.sequence_parallel);
  // Interleaved zero-bubble is torchtitan's (ScheduleInterleavedZeroBubble), never Megatron's,
  // also where pipelines have micro-batches to schedule.
  req.global_batch = 4;
  req.seq_len = 256;
  req.framework = Framework::kMegatron;
  auto meg_pp = planck::sim::enumerate(req);
  REQUIRE(meg_pp.is_ok());
  for (const auto& l : meg_pp->layouts) CHECK(l.pipeline_schedule != PS::kInterleavedZb);
}

TEST_CASE("sim_enumerate_micro_batch_search_keeps_the_batch") {
  // World 4, 16 sequences per step: every layout runs micro_batch x grad_accumulation x dp = 16.
  // Without a pipeline the micro-batch is searched over 1, 2, 4, 8, 16 (those dividing the rank's
  // batch); pipelined layouts keep 1; only FSDP / HSDP without a pipeline sync every micro-batch.
  auto req = small(4, 4, 4);
  req.global_batch = 16;
  req.search_micro_batch = true;
  auto r = planck::sim::enumerate(req);
  REQUIRE(r.is_ok());
  REQUIRE(!r->layouts.empty());
  for (const auto& l : r->layouts) {
    std::int64_t pp = 1, dp = 1;
    for (std::size_t i = 0; i < l.dims.size(); ++i) {
      if (l.dims[i] == "pp") pp = l.shape[i];
      if (l.dims[i] == "dp_replicate" || l.dims[i] == "dp_shard") dp *= l.shape[i];
    }
    CHECK(l.micro_batch * l.micro_batches * dp == 16);
    CHECK((l.micro_batch == 1 || l.micro_batch == 2 || l.micro_batch == 4 || l.micro_batch == 8 || l.micro_batch == 16));
    if (pp > 1) CHECK(l.micro_batch == 1);
    if (l.grad_sync == planck::core::GradSync::kEveryMicrobatch) {
      CHECK(pp == 1);
      CHECK(l.micro_batches > 1);
      CHECK((l.data_parallel == DataParallel::kFsdp || l.data_parallel == DataParallel::kHsdp));
    }
  }
  // Pinned: every layout runs the asked micro-batch.
  req.search_micro_batch = false;
  req.micro_batch = 2;
  auto pinned = planck::sim::enumerate(req);
  REQUIRE(pinned.is_ok());
  for (const auto& l : pinned->layouts) CHECK(l.micro_batch == 2);
}

TEST_CASE("sim_enumerate_fsdp_tp8_takes_a_larger_micro_batch") {
  // Llama 3 70B on 256 H100s, 1,024 sequences of 8,192: tp 8 x FSDP 32 re-gathers the 70B / 8
  // parameters for every micro-batch, so with 32 one-sequence micro-batches per rank the
  // gathers (2 x 31/32 x 17.6 GB per rank per micro-batch over the network) outrun the compute;
  // the search takes a larger micro-batch (torchtitan runs this layout at local batch 16) and it
  // is never slower than micro-batch 1.
  auto req = planck::sim::test::h100_request("llama3-70b", 256, 1024, 8192);
  auto find = [](const planck::sim::EnumerateResult& r) -> const planck::sim::Layout* {
    for (const auto& l : r.layouts) {
      if (l.shape == std::vector<std::int64_t>{1, 1, 32, 1, 8} && l.data_parallel == DataParallel::kFsdp &&
          l.reshard_after_forward) {
        return &l;
      }
    }
    return nullptr;
  };
  auto one = planck::sim::enumerate(req);
  req.search_micro_batch = true;
  auto searched = planck::sim::enumerate(req);
  REQUIRE(one.is_ok());
  REQUIRE(searched.is_ok());
  const auto* a = find(*one);
  const auto* b = find(*searched);
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  CHECK(a->micro_batch == 1);
  CHECK(b->micro_batch > 1);
  CHECK(b->tokens_per_s >= a->tokens_per_s);
}

TEST_CASE("enumerate_checkpointing_ladder_starts_at_the_templates_choice") {
  using C = planck::core::Checkpointing;
  using planck::sim::checkpointing_ladder;
  const std::vector<C> any = {C::kNone, C::kSelective, C::kFull}, megatron = {C::kNone, C::kFull};
  // Without a template the framework's list is unchanged.
  CHECK(checkpointing_ladder(C::kNone, any) == any);
  CHECK(checkpointing_ladder(C::kNone, megatron) == megatron);
  // A template's choice is the lightest tried; only heavier ones follow (none < selective_attention
  // < selective < full, by what each recomputes).
  CHECK(checkpointing_ladder(C::kSelective, any) == std::vector<C>{C::kSelective, C::kFull});
  CHECK(checkpointing_ladder(C::kSelectiveAttention, any) ==
        std::vector<C>{C::kSelectiveAttention, C::kSelective, C::kFull});
  CHECK(checkpointing_ladder(C::kSelective, megatron) == std::vector<C>{C::kSelective, C::kFull});
  CHECK(checkpointing_ladder(C::kFull, any) == std::vector<C>{C::kFull});
}

TEST_CASE("enumerate_without_checks_marks_nothing") {
  // No template: no rule runs, no layout carries a verdict, the result says it was not checked.
  auto r = planck::sim::enumerate(small(8, 8, 8));
  REQUIRE(r);
  CHECK(!r->checked);
  CHECK(r->rejected == 0);
  for (const auto& l : r->layouts) CHECK((l.rejected.empty() && l.warnings.empty() && l.unchecked.empty()));
}

TEST_CASE("sim_enumerate_threads_do_not_change_the_result") {
  // Splits are searched side by side and listed in split order: one thread and several give the
  // same layouts in the same order, byte for byte, dense and MoE, and progress counts every split
  // once, ending at the total.
  auto dense = small(64, 8, 8);
  auto moe = small(16, 8, 4);
  moe.model.experts = 8;
  moe.model.experts_per_token = 2;
  moe.model.moe_ffn_hidden = 128;
  for (auto req : {dense, moe}) {
    req.threads = 1;
    std::vector<std::int64_t> seen;
    std::int64_t total = -1;
    req.progress = [&](std::int64_t done, std::int64_t all) {
      seen.push_back(done);
      total = all;
    };
    auto one = planck::sim::enumerate(req);
    REQUIRE(one.is_ok());
    REQUIRE(total > 1);
    CHECK(seen.front() == 0);
    CHECK(seen.back() == total);
    CHECK(static_cast<std::int64_t>(seen.size()) == total + 1);
    seen.clear();
    req.threads = 3;
    auto three = planck::sim::enumerate(req);
    REQUIRE(three.is_ok());
    CHECK(seen.back() == total);
    REQUIRE(one->layouts.size() > 10);
    CHECK(planck::sim::enumerate_to_json(*one, -1) == planck::sim::enumerate_to_json(*three, -1));
  }
}
