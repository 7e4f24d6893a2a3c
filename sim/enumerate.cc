#include "sim/enumerate.h"

#include <algorithm>
#include <limits>

#include "core/mesh/mesh.h"
#include "core/mesh/roles.h"
#include "core/schedule/schedule.h"
#include "sim/memory.h"

namespace planck::sim {
namespace {

std::vector<std::int64_t> divisors(std::int64_t n) {
  std::vector<std::int64_t> small, large;
  for (std::int64_t d = 1; d * d <= n; ++d) {
    if (n % d) continue;
    small.push_back(d);
    if (d != n / d) large.push_back(n / d);
  }
  small.insert(small.end(), large.rbegin(), large.rend());
  return small;
}

// Ordered factorizations of n into f factors: prod over primes p^e of C(e + f - 1, f - 1).
std::int64_t count_factorizations(std::int64_t n, int f) {
  std::int64_t total = 1;
  auto combos = [f](std::int64_t e) {
    std::int64_t c = 1;  // C(e + f - 1, f - 1), exact in int64 for e <= 31, f <= 6
    for (int i = 1; i < f; ++i) c = c * (e + i) / i;
    return c;
  };
  for (std::int64_t p = 2; p * p <= n; ++p) {
    std::int64_t e = 0;
    while (n % p == 0) {
      n /= p;
      ++e;
    }
    if (e) total *= combos(e);
  }
  if (n > 1) total *= combos(1);
  return total;
}

struct Strategy {
  core::DataParallel dp;
  bool reshard;
};

std::vector<Strategy> strategies(std::int64_t r, std::int64_t s) {
  using DP = core::DataParallel;
  if (r == 1 && s == 1) return {{DP::kNone, true}};
  if (s == 1) return {{DP::kDdp, true}};
  if (r == 1) return {{DP::kFsdp, true}, {DP::kFsdp, false}, {DP::kZero1, true}, {DP::kZero2, true}};
  return {{DP::kHsdp, true}, {DP::kHsdp, false}};
}

class Search {
 public:
  Search(const EnumerateRequest& req, EnumerateResult& out) : req_(req), out_(out) {
    moe_ = req.model.is_moe();
    dims_ = moe_ ? std::vector<std::string>{"pp", "dp_replicate", "dp_shard", "ep", "cp", "tp"}
                 : std::vector<std::string>{"pp", "dp_replicate", "dp_shard", "cp", "tp"};
    const std::int64_t gpn = std::min(req.gpus_per_node, req.world);
    plan_.cluster.gpus_per_node = gpn;
    plan_.cluster.nodes = req.world / gpn;
    plan_.cluster.gpu = req.gpu;
    plan_.gpu_given = true;
    plan_.model = req.model;
    plan_.mesh.dims = dims_;
    plan_.parallelism.present = true;
    plan_.parallelism.pipeline_schedule = core::PipelineSchedule::k1F1B;
    core::Training t;
    t.seq_len = req.seq_len;
    t.micro_batch = req.micro_batch;
    t.global_batch = req.global_batch;
    plan_.training = t;
  }

  void run() {
    const std::int64_t n = req_.world;
    const auto divs = divisors(n);
    const auto& m = req_.model;
    const std::int64_t kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
    std::int64_t done = 0;
    const std::int64_t total_tp = static_cast<std::int64_t>(divs.size());
    for (std::int64_t tp : divs) {
      if (req_.progress) req_.progress(done++, total_tp);
      // heads-indivisible / kv-heads-indivisible; TP inside one node unless asked.
      if (m.heads % tp != 0 || (kv % tp != 0 && tp % kv != 0)) continue;
      if (!req_.allow_cross_node_tp && plan_.cluster.gpus_per_node % tp != 0) continue;
      for (std::int64_t cp : divisors(n / tp)) {
        if (cp > 1 && req_.seq_len % (2 * cp) != 0) continue;  // seq-indivisible (zig-zag chunks)
        for (std::int64_t pp : divisors(n / tp / cp)) {
          if (pp > m.layers) continue;  // layers-indivisible (error: layers < pp)
          const std::int64_t rest = n / tp / cp / pp;
          for (std::int64_t ep : moe_ ? divisors(rest) : std::vector<std::int64_t>{1}) {
            if (ep > 1 && m.experts % ep != 0) continue;  // experts-indivisible
            for (std::int64_t r : divisors(rest / ep)) try_mesh(pp, r, rest / ep / r, ep, cp, tp);
          }
        }
      }
    }
    if (req_.progress) req_.progress(total_tp, total_tp);
  }

 private:
  void try_mesh(std::int64_t pp, std::int64_t r, std::int64_t s, std::int64_t ep, std::int64_t cp, std::int64_t tp) {
    std::int64_t k = 1;
    if (req_.global_batch) {
      const std::int64_t per_step = req_.micro_batch * r * s;
      if (*req_.global_batch % per_step != 0) return;  // batch-indivisible
      k = *req_.global_batch / per_step;
    }
    plan_.mesh.shape = moe_ ? std::vector<std::int64_t>{pp, r, s, ep, cp, tp} : std::vector<std::int64_t>{pp, r, s, cp, tp};
    auto mesh = core::Mesh::create(plan_.mesh.dims, plan_.mesh.shape);
    if (!mesh) return;
    plan_.training->grad_accumulation = k;
    // Sequence parallel wherever TP runs and the sequence splits (Megatron / torchtitan practice).
    plan_.parallelism.sequence_parallel = tp > 1 && (req_.seq_len / cp) % tp == 0;
    for (const Strategy& st : strategies(r, s)) {
      plan_.parallelism.data_parallel = st.dp;
      plan_.parallelism.reshard_after_forward = st.reshard;
      try_strategy(*mesh, k);
    }
  }

  void try_strategy(const core::Mesh& mesh, std::int64_t k) {
    // Memory needs only the lowering's scalar facts, so the (costlier) lowering runs once, for
    // the least activation checkpointing that fits (docs/simulator.md).
    core::Schedule facts;
    facts.world = mesh.world();
    facts.micro_batches = k;
    facts.data_parallel = *plan_.parallelism.data_parallel;
    facts.grad_sync = plan_.training->grad_sync;
    facts.seq_len = req_.seq_len;
    facts.micro_batch = req_.micro_batch;
    facts.virtual_stages = 1;
    for (auto ckpt : {core::Checkpointing::kNone, core::Checkpointing::kSelective, core::Checkpointing::kFull}) {
      plan_.training->activation_checkpointing = ckpt;
      const Memory mem = memory(plan_, mesh, facts);
      if (mem.peak > mem.capacity) continue;
      auto schedule = core::lower(plan_, mesh);
      if (!schedule) return;
      SimResult r = simulate_schedule(plan_, mesh, std::move(*schedule), req_.sim);
      Layout l;
      l.dims = plan_.mesh.dims;
      l.shape = plan_.mesh.shape;
      l.data_parallel = *plan_.parallelism.data_parallel;
      l.reshard_after_forward = plan_.parallelism.reshard_after_forward;
      l.sequence_parallel = plan_.parallelism.sequence_parallel;
      l.checkpointing = ckpt;
      l.micro_batches = k;
      l.step_time_s = r.step.step_time_s;
      l.compute_time_s = r.step.compute_time_s;
      l.exposed_comm_time_s = r.step.exposed_comm_time_s;
      l.memory_peak = r.memory.peak;
      l.bytes_sent_per_rank = r.step.bytes_sent_per_rank;
      l.flops_per_rank = r.flops_per_rank;
      l.tflops_per_gpu = r.tflops_per_gpu;
      l.mfu = r.mfu;
      l.bubble_fraction = r.bubble_fraction;
      l.gemm_s = r.compute.gemm_s;
      l.attention_s = r.compute.attention_s;
      l.memory_bound_s = r.compute.memory_s;
      l.recompute_s = r.compute.recompute_s;
      const core::Degrees d = core::degrees(mesh);
      l.tokens_per_step = static_cast<double>(mesh.world() / (d.tp * d.pp * d.cp)) * static_cast<double>(k) *
                          static_cast<double>(req_.micro_batch * req_.seq_len);
      l.tokens_per_s = r.step.step_time_s > 0 ? l.tokens_per_step / r.step.step_time_s : 0;
      out_.layouts.push_back(std::move(l));
      return;
    }
  }

  const EnumerateRequest& req_;
  EnumerateResult& out_;
  bool moe_ = false;
  std::vector<std::string> dims_;
  core::Plan plan_;
};

void rank_and_mark(std::vector<Layout>& layouts, bool by_throughput) {
  std::stable_sort(layouts.begin(), layouts.end(), [by_throughput](const Layout& a, const Layout& b) {
    if (by_throughput && a.tokens_per_s != b.tokens_per_s) return a.tokens_per_s > b.tokens_per_s;
    if (a.step_time_s != b.step_time_s) return a.step_time_s < b.step_time_s;
    if (a.memory_peak != b.memory_peak) return a.memory_peak < b.memory_peak;
    return a.nontrivial_dims() < b.nontrivial_dims();
  });
  // Pareto front of (ranking key, memory): in ranked order, a layout is on it when no better-or-
  // equal one uses less or equal memory (ties on both keep the first).
  std::int64_t best_mem = std::numeric_limits<std::int64_t>::max();
  for (auto& l : layouts) {
    l.pareto = l.memory_peak < best_mem;
    best_mem = std::min(best_mem, l.memory_peak);
  }
}

}  // namespace

int Layout::nontrivial_dims() const {
  return static_cast<int>(std::count_if(shape.begin(), shape.end(), [](std::int64_t s) { return s > 1; }));
}

core::Result<EnumerateResult> enumerate(const EnumerateRequest& req) {
  if (req.world < 1 || req.world > core::Mesh::kMaxWorld) {
    return core::Status::error("--world " + std::to_string(req.world) + " must be between 1 and 2147483647");
  }
  if (req.gpus_per_node < 1) {
    return core::Status::error("--gpus-per-node " + std::to_string(req.gpus_per_node) + " must be >= 1");
  }
  if (req.world > req.gpus_per_node && req.world % req.gpus_per_node != 0) {
    return core::Status::error("--world " + std::to_string(req.world) + " is not a multiple of --gpus-per-node " +
                               std::to_string(req.gpus_per_node) + ": nodes must be whole");
  }
  if (req.seq_len < 1 || req.micro_batch < 1) {
    return core::Status::error("--seq-len " + std::to_string(req.seq_len) + " and --micro-batch " +
                               std::to_string(req.micro_batch) + " must be >= 1");
  }
  if (req.global_batch && *req.global_batch < 1) {
    return core::Status::error("--global-batch " + std::to_string(*req.global_batch) + " must be >= 1");
  }
  const auto& m = req.model;
  if (m.layers < 1 || m.hidden < 1 || m.heads < 1 || m.vocab < 1) {
    return core::Status::error("model '" + m.name + "' needs layers, hidden, heads and vocab >= 1");
  }
  if (req.gpu.memory_bytes <= 0 || req.gpu.bf16_tflops <= 0) {
    return core::Status::error("gpu '" + req.gpu.name + "' needs memory_bytes and bf16_tflops > 0");
  }
  EnumerateResult out;
  out.world = req.world;
  out.considered = count_factorizations(req.world, m.is_moe() ? 6 : 5);
  Search search(req, out);
  search.run();
  out.valid = static_cast<std::int64_t>(out.layouts.size());
  rank_and_mark(out.layouts, req.rank_by_throughput);
  return out;
}

}  // namespace planck::sim
