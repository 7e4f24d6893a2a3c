// Per-step bytes of the lowered schedule against closed forms written here (docs/sources/simulator.md §2).

#include <doctest/doctest.h>

#include <string>

#include "core/schedule/collectives.h"
#include "sim_test_util.h"

namespace {

using planck::core::CollOp;
using planck::core::Phase;
namespace t = planck::sim::test;

// A small Llama-style model: L = 4, h = 256, f = 1024, a = 8, kv = 4, hd = 32, V = 1000, untied.
const char* kModel =
    R"("model": {"layers": 4, "hidden": 256, "ffn_hidden": 1024, "heads": 8, "kv_heads": 4, "vocab": 1000, "head_dim": 32})";
constexpr double kL = 4, kH = 256, kF = 1024, kA = 8, kKv = 4, kHd = 32, kV = 1000;
const double kLayer = t::llama_layer_params(kH, kF, kA, kKv, kHd);
const double kParams = kL * kLayer + 2 * kV * kH + kH;  // + embedding + head + final norm

std::string plan_json(std::int64_t nodes, std::int64_t gpn, const std::string& dims, const std::string& shape,
                      const std::string& parallelism, const std::string& training) {
  return R"({"format": "planck/1", "cluster": {"nodes": )" + std::to_string(nodes) + R"(, "gpus_per_node": )" +
         std::to_string(gpn) + R"(}, "mesh": {"dims": [)" + dims + R"(], "shape": [)" + shape +
         R"(]}, "parallelism": {)" + parallelism + "}, " + kModel + R"(, "training": {)" + training + "}}";
}

std::int64_t ring_sent(const planck::core::Schedule& s) {
  std::int64_t total = 0;
  for (const auto& c : s.collectives) total += planck::core::wire_bytes_per_rank(c.op, c.group_size, c.bytes_per_call) * c.calls_per_step;
  return total;
}

}  // namespace

TEST_CASE("sim_ddp_step_is_params_times_grad_bytes") {
  for (std::int64_t n : {2, 3, 7, 8, 16}) {
    auto plan = t::plan_from(plan_json(1, n, R"("dp")", std::to_string(n), R"("data_parallel": "ddp")",
                                       R"("seq_len": 128, "grad_accumulation": 1)"));
    auto s = t::lower_ok(plan, t::mesh_of(plan));
    const double grad_bytes = kParams * 4;  // reduce_dtype fp32
    CHECK(t::payload(s) == static_cast<std::int64_t>(grad_bytes));
    for (const auto& c : s.collectives) {
      CHECK(c.op == CollOp::kAllReduce);
      CHECK(c.group_size == n);
      CHECK(c.bytes_per_call <= 25 * 1024 * 1024);  // PyTorch DDP bucket_cap_mb = 25
    }
    // Ring all-reduce: 2(n-1)/n x S per rank (one bucket here: 17.8 MB < 25 MiB).
    REQUIRE(s.collectives.size() == 1);
    const std::int64_t S = s.collectives[0].bytes_per_call;
    CHECK(ring_sent(s) == (2 * (n - 1) * S + n - 1) / n);
  }
}

TEST_CASE("sim_ddp_buckets_of_25_mib_add_up") {
  // 4 x h of 4096 makes the gradient span several 25 MiB buckets: full buckets + the rest.
  auto plan = t::plan_from(R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 8},
    "mesh": {"dims": ["dp"], "shape": [8]}, "parallelism": {"data_parallel": "ddp"},
    "model": {"layers": 2, "hidden": 4096, "ffn_hidden": 14336, "heads": 32, "kv_heads": 8, "vocab": 128256},
    "training": {"seq_len": 128}})");
  auto s = t::lower_ok(plan, t::mesh_of(plan));
  const double params = 2 * t::llama_layer_params(4096, 14336, 32, 8, 128) + 2 * 128256.0 * 4096 + 4096;
  const std::int64_t grad = static_cast<std::int64_t>(params * 4);
  const std::int64_t bucket = 25LL * 1024 * 1024;
  REQUIRE(s.collectives.size() == 2);
  CHECK(s.collectives[0].bytes_per_call == bucket);
  CHECK(s.collectives[0].calls_per_step == grad / bucket);
  CHECK(s.collectives[1].bytes_per_call == grad % bucket);
  CHECK(t::payload(s) == grad);
}

TEST_CASE("sim_ddp_every_microbatch_is_k_times_last_microbatch") {
  for (std::int64_t k : {1, 2, 3, 7, 8}) {
    const std::string tr = R"("seq_len": 128, "grad_accumulation": )" + std::to_string(k);
    auto every = t::plan_from(plan_json(1, 8, R"("dp")", "8", R"("data_parallel": "ddp")", tr + R"(, "grad_sync": "every_microbatch")"));
    auto last = t::plan_from(plan_json(1, 8, R"("dp")", "8", R"("data_parallel": "ddp")", tr + R"(, "grad_sync": "last_microbatch")"));
    auto se = t::lower_ok(every, t::mesh_of(every));
    auto sl = t::lower_ok(last, t::mesh_of(last));
    CHECK(ring_sent(se) == k * ring_sent(sl));
    CHECK(t::payload(se) == k * t::payload(sl));
  }
}

TEST_CASE("sim_hsdp_replicate_all_reduce_is_one_over_shard_size") {
  for (std::int64_t shard : {2, 4, 8}) {
    auto plan = t::plan_from(plan_json(2, shard, R"("dp_replicate", "dp_shard")", "2, " + std::to_string(shard),
                                       R"("data_parallel": "hsdp")", R"("seq_len": 128, "grad_accumulation": 1)"));
    auto s = t::lower_ok(plan, t::mesh_of(plan));
    const std::int64_t rs = t::payload(s, "replicate");
    // Each unit's shard rounds up: at most one byte per unit (4 blocks + root) over G / S.
    const double expect = kParams * 4 / static_cast<double>(shard);
    CHECK(static_cast<double>(rs) >= expect);
    CHECK(static_cast<double>(rs) <= expect + 5);
    for (const auto& c : s.collectives) {
      if (c.role == "replicate") {
        CHECK(c.op == CollOp::kAllReduce);
        CHECK(c.group_size == 2);
        CHECK(c.dims == std::vector<std::string>{"dp_replicate"});
      }
    }
  }
}

TEST_CASE("sim_fsdp_gathers_per_unit_per_microbatch") {
  const std::int64_t k = 3;
  for (bool reshard : {true, false}) {
    auto plan = t::plan_from(plan_json(1, 8, R"("dp_shard")", "8",
                                       std::string(R"("data_parallel": "fsdp", "reshard_after_forward": )") + (reshard ? "true" : "false"),
                                       R"("seq_len": 128, "grad_accumulation": 3)"));
    auto s = t::lower_ok(plan, t::mesh_of(plan));
    std::int64_t ag_fwd = 0, ag_bwd = 0, rs = 0;
    for (const auto& c : s.collectives) {
      CHECK(c.role == "fsdp");
      if (c.op == CollOp::kAllGather && c.phase == Phase::kForward) ag_fwd += c.bytes_per_call * c.calls_per_step;
      if (c.op == CollOp::kAllGather && c.phase == Phase::kBackward) ag_bwd += c.bytes_per_call * c.calls_per_step;
      if (c.op == CollOp::kReduceScatter) rs += c.bytes_per_call * c.calls_per_step;
    }
    // ZeRO-3 / FSDP: all-gather the bf16 parameters every micro-batch, again in backward when
    // resharded (never the root), reduce-scatter fp32 gradients once (last_microbatch).
    CHECK(ag_fwd == k * static_cast<std::int64_t>(kParams * 2));
    CHECK(ag_bwd == (reshard ? k * static_cast<std::int64_t>(kL * kLayer * 2) : 0));
    CHECK(rs == static_cast<std::int64_t>(kParams * 4));
  }
}

// FSDP2 under torch.distributed.pipelining (issue 31). pytorch/pytorch@0138610331
// torch/distributed/pipelining/stage.py, _PipelineStageBase.backward_maybe_with_nosync, runs every
// micro-batch's backward with resharding after backward off:
//     elif isinstance(self.submod, FSDPModule):
//         self.submod.set_is_last_backward(False)
//         self.submod.set_reshard_after_backward(False)
//         self.submod.set_requires_gradient_sync(False)
//         result = perform_backward(backward_type)()
// and only perform_reduce_grad ("REDUCE_GRAD action is scheduled after all microbatches W, B
// actions") turns it back on and runs post_backward:
//         fsdp_module.set_is_last_backward(True)
//         fsdp_module.set_reshard_after_backward(True)
//         fsdp_module.set_requires_gradient_sync(True)
// So without reshard_after_forward a unit is gathered once per step; with it each forward
// reshards, the next backward gathers again and leaves it gathered for the following forward:
// 1 + k gathers, whatever the schedule. The reduce-scatter runs once, in REDUCE_GRAD.
TEST_CASE("sim_fsdp_under_pipeline_gathers_once_per_step") {
  const std::int64_t k = 8;
  // pp 2 of L = 4: the busiest stage holds 2 layers and max(embedding, head + final norm).
  const double stage_blocks = 2 * kLayer, root = kV * kH + kH;
  for (const char* schedule : {"1f1b", "gpipe", "interleaved_1f1b"}) {
    for (bool reshard : {true, false}) {
      CAPTURE(schedule);
      CAPTURE(reshard);
      const std::string vs = std::string(schedule) == "interleaved_1f1b" ? R"(, "virtual_stages": 2)" : "";
      auto plan = t::plan_from(plan_json(1, 8, R"("pp", "dp_shard")", "2, 4",
                                         std::string(R"("data_parallel": "fsdp", "pipeline_schedule": ")") + schedule +
                                             "\"" + vs + R"(, "reshard_after_forward": )" + (reshard ? "true" : "false"),
                                         R"("seq_len": 128, "grad_accumulation": 8)"));
      auto s = t::lower_ok(plan, t::mesh_of(plan));
      REQUIRE(s.micro_batches == k);
      std::int64_t ag_fwd = 0, ag_bwd = 0, rs = 0;
      for (const auto& c : s.collectives) {
        if (c.role != "fsdp") continue;
        if (c.op == CollOp::kAllGather && c.phase == Phase::kForward) ag_fwd += c.bytes_per_call * c.calls_per_step;
        if (c.op == CollOp::kAllGather && c.phase == Phase::kBackward) ag_bwd += c.bytes_per_call * c.calls_per_step;
        if (c.op == CollOp::kReduceScatter) rs += c.bytes_per_call * c.calls_per_step;
      }
      CHECK(ag_fwd == static_cast<std::int64_t>((stage_blocks + root) * 2));
      CHECK(ag_bwd == (reshard ? k * static_cast<std::int64_t>(stage_blocks * 2) : 0));
      CHECK(rs == static_cast<std::int64_t>((stage_blocks + root) * 4));
    }
  }
}

TEST_CASE("sim_zero1_and_zero2_reduce_scatter_policy") {
  const std::int64_t k = 4;
  for (const char* dp : {"zero1", "zero2"}) {
    auto plan = t::plan_from(plan_json(1, 8, R"("dp_shard")", "8", std::string(R"("data_parallel": ")") + dp + "\"",
                                       R"("seq_len": 128, "grad_accumulation": 4)"));
    auto s = t::lower_ok(plan, t::mesh_of(plan));
    std::int64_t rs = 0, ag = 0;
    for (const auto& c : s.collectives) {
      if (c.op == CollOp::kReduceScatter) rs += c.bytes_per_call * c.calls_per_step;
      if (c.op == CollOp::kAllGather) {
        ag += c.bytes_per_call * c.calls_per_step;
        CHECK(c.phase == Phase::kOptimizer);
      }
    }
    // DeepSpeed: stage 2 reduces every micro-batch, stage 1 at the boundary; both all-gather
    // the updated bf16 parameters once.
    CHECK(rs == (std::string(dp) == "zero2" ? k : 1) * static_cast<std::int64_t>(kParams * 4));
    CHECK(ag == static_cast<std::int64_t>(kParams * 2));
  }
}

TEST_CASE("sim_tensor_parallel_collectives_per_layer") {
  const std::int64_t seq = 256, mb = 2, k = 2, tp = 4;
  const std::int64_t A = seq * mb * static_cast<std::int64_t>(kH) * 2;  // (s/cp) b h, bf16
  for (bool sp : {false, true}) {
    auto plan = t::plan_from(plan_json(1, 4, R"("tp")", "4", std::string(R"("sequence_parallel": )") + (sp ? "true" : "false"),
                                       R"("seq_len": 256, "micro_batch": 2, "grad_accumulation": 2)"));
    auto s = t::lower_ok(plan, t::mesh_of(plan));
    std::int64_t layer_calls = 0, layer_sent = 0;
    for (const auto& c : s.collectives) {
      CHECK(c.role == "tp");
      CHECK(c.group_size == tp);
      if (c.bytes_per_call == A && c.calls_per_step > k) {  // per-layer entries (not embedding / loss)
        layer_calls += c.calls_per_step;
        layer_sent += planck::core::wire_bytes_per_rank(c.op, tp, A) * c.calls_per_step;
      }
    }
    // Narayanan §3.2: 4 all-reduces per layer per micro-batch, 8A(t-1)/t; with SP (Megatron-Core)
    // 4 all-gathers + 2 re-gathers + 4 reduce-scatters, 10A(t-1)/t.
    const std::int64_t per_layer_calls = sp ? 10 : 4;
    CHECK(layer_calls == per_layer_calls * static_cast<std::int64_t>(kL) * k);
    CHECK(layer_sent == (sp ? 10 : 8) * A * (tp - 1) / tp * static_cast<std::int64_t>(kL) * k);
  }
}

TEST_CASE("sim_pipeline_context_and_expert_bytes") {
  // pp: (s/cp) b h b_a per micro-batch each way, x v chunks (Megatron get_tensor_shapes).
  auto pp = t::plan_from(plan_json(1, 4, R"("pp")", "4", R"("pipeline_schedule": "interleaved_1f1b", "virtual_stages": 2)",
                                   R"("seq_len": 512, "grad_accumulation": 8)"));
  auto sp = t::lower_ok(pp, t::mesh_of(pp));
  REQUIRE(sp.collectives.size() == 2);
  for (const auto& c : sp.collectives) {
    CHECK(c.op == CollOp::kSendRecv);
    CHECK(c.bytes_per_call == 512 * static_cast<std::int64_t>(kH) * 2);
    CHECK(c.calls_per_step == 8 * 2);
  }
  // cp: K and V chunks, 2 x (s/cp) b kv hd b_a, cp-1 hops forward, 2(cp-1) backward per layer.
  auto cp = t::plan_from(plan_json(1, 4, R"("cp")", "4", "", R"("seq_len": 512, "grad_accumulation": 1)"));
  auto sc = t::lower_ok(cp, t::mesh_of(cp));
  std::int64_t hops = 0;
  for (const auto& c : sc.collectives) {
    CHECK(c.bytes_per_call == 2 * (512 / 4) * static_cast<std::int64_t>(kKv * kHd) * 2);
    hops += c.calls_per_step;
  }
  CHECK(hops == 3 * (4 - 1) * static_cast<std::int64_t>(kL));
  // ep: top-k copies of each token's hidden state, dispatch + combine, forward and backward.
  auto ep = t::plan_from(R"({"format": "planck/1", "cluster": {"nodes": 1, "gpus_per_node": 4},
    "mesh": {"dims": ["ep"], "shape": [4]},
    "model": {"layers": 2, "hidden": 256, "ffn_hidden": 1024, "heads": 8, "kv_heads": 4, "vocab": 1000,
              "experts": 8, "experts_per_token": 2, "moe_ffn_hidden": 512},
    "training": {"seq_len": 128, "grad_accumulation": 1}})");
  auto se = t::lower_ok(ep, t::mesh_of(ep));
  std::int64_t a2a_calls = 0;
  for (const auto& c : se.collectives) {
    if (c.op != CollOp::kAllToAll) continue;
    CHECK(c.bytes_per_call == 128 * 2 * 256 * 2);
    a2a_calls += c.calls_per_step;
  }
  CHECK(a2a_calls == 4 * 2);
}
