#include "sim/enumerate_search.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "core/mesh/mesh.h"
#include "core/mesh/roles.h"
#include "core/schedule/schedule.h"
#include "sim/enumerate_plan.h"
#include "sim/factorizations.h"
#include "sim/ep_overlap.h"
#include "sim/memory.h"
#include "sim/sim_checks.h"

namespace planck::sim {
namespace {


struct Strategy {
  core::DataParallel dp;
  bool reshard;
};

// Data-parallel strategies per (dp_replicate, dp_shard). Megatron-Core: DDP, the distributed
// optimizer (zero1) and Megatron-FSDP's optim_grads (zero2) / optim_grads_params (fsdp) over one
// data-parallel group, no replicate x shard split. torchtitan: DDP (replicate only), FSDP2 with
// and without resharding, HSDP; no ZeRO-1/2.
std::vector<Strategy> strategies(std::int64_t r, std::int64_t s, Framework fw) {
  using DP = core::DataParallel;
  if (r == 1 && s == 1) return {{DP::kNone, true}};
  if (s == 1) return {{DP::kDdp, true}};
  if (r == 1) {
    if (fw == Framework::kMegatron) return {{DP::kZero1, true}, {DP::kZero2, true}, {DP::kFsdp, true}};
    if (fw == Framework::kTorchtitan) return {{DP::kFsdp, true}, {DP::kFsdp, false}};
    return {{DP::kFsdp, true}, {DP::kFsdp, false}, {DP::kZero1, true}, {DP::kZero2, true}};
  }
  if (fw == Framework::kMegatron) return {};
  return {{DP::kHsdp, true}, {DP::kHsdp, false}};
}

// Activation checkpointing tried, least first. Megatron's selective recompute (of the attention
// core) saves nothing under flash attention, so Megatron gets none and full; torchtitan's
// op-level selective is `selective`.
std::vector<core::Checkpointing> checkpointing(Framework fw) {
  using C = core::Checkpointing;
  if (fw == Framework::kMegatron) return {C::kNone, C::kFull};
  return {C::kNone, C::kSelective, C::kFull};
}

constexpr std::int64_t kVirtualStages[] = {2, 3, 4, 6, 8};
constexpr std::int64_t kMaxSearchedMicroBatch = 16;

// Within one (mesh, strategy): comfortable before tight (unless allowed), then tokens per second
// (the work per step is the same for every schedule).
bool better(const Layout& a, const Layout& b, bool allow_tight) {
  if (!allow_tight && a.tight != b.tight) return b.tight;
  return a.tokens_per_s > b.tokens_per_s;
}

class Search {
 public:
  explicit Search(const EnumerateRequest& req)
      : req_(req), moe_(req.model.is_moe()), plan_(enumerate_base_plan(req)),
        ladder_(checkpointing_ladder(req.least_checkpointing, checkpointing(req.framework))) {}

  // training.fp8 of every layout: --fp8 or the template's.
  core::Fp8Recipe fp8() const { return plan_.training ? plan_.training->fp8 : core::Fp8Recipe::kNone; }

  // The (tp, cp, pp) splits searched, in the order their layouts are listed: TP degrees that
  // divide the heads (and the KV heads, or are divided by them) and stay inside one node unless
  // asked, context splits that divide the sequence's zig-zag chunks, pipelines of at most one
  // layer per stage.
  struct Split {
    std::int64_t tp, cp, pp;
  };
  std::vector<Split> splits() const {
    const std::int64_t n = req_.world;
    const auto& m = req_.model;
    const std::int64_t kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
    std::vector<Split> out;
    for (std::int64_t tp : divisors(n)) {
      // heads-indivisible / kv-heads-indivisible; TP inside one node unless asked.
      if (m.heads % tp != 0 || (kv % tp != 0 && tp % kv != 0)) continue;
      if (!req_.allow_cross_node_tp && core::link_domain(plan_.cluster) % tp != 0) continue;
      for (std::int64_t cp : divisors(n / tp)) {
        if (cp > 1 && req_.seq_len % (2 * cp) != 0) continue;  // seq-indivisible (zig-zag chunks)
        for (std::int64_t pp : divisors(n / tp / cp)) {
          if (pp > m.layers) continue;  // layers-indivisible (error: layers < pp)
          out.push_back({tp, cp, pp});
        }
      }
    }
    return out;
  }

  // Every layout of one split, appended to `sink` (its layouts in search order).
  void search(const Split& sp, std::vector<Layout>& sink) {
    sink_ = &sink;
    const auto [tp, cp, pp] = sp;
    const std::int64_t rest = req_.world / tp / cp / pp;
    for (std::int64_t ep : moe_ ? divisors(rest) : std::vector<std::int64_t>{1}) {
      // With ep > 1 the experts split over ep x cp, and x tp when etp = 1
      // (core/mesh/roles.h); both etp choices are tried where tp > 1. ep = 1 is a layout
      // without expert parallelism (no ep dim).
      const bool expert_parallel = moe_ && ep > 1;
      for (std::int64_t etp : (expert_parallel && tp > 1) ? std::vector<std::int64_t>{tp, 1}
                                                            : std::vector<std::int64_t>{0}) {
        const std::int64_t group = expert_parallel ? ep * cp * (etp == 1 ? tp : 1) : 1;
        if (group > 1 && req_.model.experts % group != 0) continue;  // experts-indivisible
        plan_.parallelism.etp = etp > 0 ? std::optional<std::int64_t>(etp) : std::nullopt;
        for (std::int64_t r : divisors(rest / ep)) try_mesh(pp, r, rest / ep / r, ep, cp, tp);
      }
    }
  }

 private:
  void try_mesh(std::int64_t pp, std::int64_t r, std::int64_t s, std::int64_t ep, std::int64_t cp, std::int64_t tp) {
    // ep is data parallel for the batch (docs/plan-format.md): every layout keeps the same
    // global batch, per_dp sequences on each data-parallel rank.
    const std::int64_t dp = r * s * ep;
    if (*req_.global_batch % dp != 0) return;  // batch-indivisible
    const std::int64_t per_dp = *req_.global_batch / dp;
    if (!req_.search_micro_batch && per_dp % req_.micro_batch != 0) return;
    if (ep > 1) {
      plan_.mesh.dims = {"pp", "dp_replicate", "dp_shard", "ep", "cp", "tp"};
      plan_.mesh.shape = {pp, r, s, ep, cp, tp};
    } else {
      plan_.mesh.dims = {"pp", "dp_replicate", "dp_shard", "cp", "tp"};
      plan_.mesh.shape = {pp, r, s, cp, tp};
    }
    auto mesh = core::Mesh::create(plan_.mesh.dims, plan_.mesh.shape);
    if (!mesh) return;
    // Sequence parallel wherever TP runs and the sequence splits (Megatron / torchtitan practice).
    plan_.parallelism.sequence_parallel = tp > 1 && (req_.seq_len / cp) % tp == 0;
    // TP communication overlap where the framework's users run it: Megatron's --tp-comm-overlap
    // (on in NVIDIA's published recipes and the Megatron-Core runs planck is validated on; it
    // needs sequence parallel). torchtitan's async TP is opt-in (torch.compile) and gained 9.2%
    // where planck's overlap model predicts 31% (docs/simulator.md), so it stays off there.
    // A template's own async_tp is its framework's setting, kept where sequence parallel runs.
    const bool async_tp = req_.base ? req_.base->parallelism.async_tp : req_.framework != Framework::kTorchtitan;
    plan_.parallelism.async_tp = async_tp && plan_.parallelism.sequence_parallel;
    for (const Strategy& st : strategies(r, s, req_.framework)) {
      plan_.parallelism.data_parallel = st.dp;
      plan_.parallelism.reshard_after_forward = st.reshard;
      std::optional<Candidate> best;
      explored_.clear();
      for (std::int64_t mb : micro_batches(pp, per_dp)) {
        const std::int64_t k = per_dp / mb;
        plan_.training->micro_batch = mb;
        plan_.training->grad_accumulation = k;
        std::optional<Candidate> at_mb;
        for (core::GradSync sync : grad_syncs(st.dp, k, pp)) {
          // Syncing every micro-batch only adds traffic; it can win only by sharding the
          // gradients where whole ones force checkpointing or crowd memory.
          if (sync == core::GradSync::kEveryMicrobatch && at_mb &&
              at_mb->layout.checkpointing == core::Checkpointing::kNone && !at_mb->layout.tight) {
            continue;
          }
          plan_.training->grad_sync = sync;
          auto c = try_strategy(*mesh, k);
          if (c && (!at_mb || better(c->layout, at_mb->layout, req_.allow_tight))) at_mb = std::move(c);
        }
        // Larger micro-batches help until activations force checkpointing: stop at the first
        // size that is no better than the best so far.
        if (!at_mb) continue;
        if (best && !better(at_mb->layout, best->layout, req_.allow_tight)) break;
        best = std::move(at_mb);
      }
      if (best) keep(*mesh, std::move(*best));
    }
  }

  // Micro-batch sizes tried: --micro-batch when given; else, without a pipeline (where the
  // micro-batch count sets no bubble), 1, 2, 4, 8 and 16 sequences where they divide the rank's
  // batch: fewer, larger micro-batches gather FSDP parameters and sync gradients less often
  // (torchtitan runs Llama 3 70B at local batch 16 without accumulation); with a pipeline, 1.
  std::vector<std::int64_t> micro_batches(std::int64_t pp, std::int64_t per_dp) const {
    if (!req_.search_micro_batch) return {req_.micro_batch};
    if (pp > 1) return {1};
    std::vector<std::int64_t> out;
    for (std::int64_t mb = 1; mb <= kMaxSearchedMicroBatch && per_dp % mb == 0; mb *= 2) out.push_back(mb);
    return out;
  }

  // Gradient sync over an accumulation window. Without a pipeline, FSDP / HSDP try both keeping
  // whole gradients until the last micro-batch (FSDP2 set_requires_gradient_sync(False)) and
  // reduce-scattering every micro-batch into sharded gradients (FSDP2's default in torchtitan's
  // accumulation loop). Pipeline stages sync on their last backward only
  // (torch.distributed.pipelining, Megatron); ZeRO-2 shards every micro-batch, DDP / ZeRO-1 sync
  // at the end.
  // A template that states its grad_sync keeps it (EnumerateRequest::grad_sync).
  std::vector<core::GradSync> grad_syncs(core::DataParallel dp, std::int64_t k, std::int64_t pp) const {
    using G = core::GradSync;
    if (req_.grad_sync) return {*req_.grad_sync};
    const bool sharded_params = dp == core::DataParallel::kFsdp || dp == core::DataParallel::kHsdp;
    if (sharded_params && k > 1 && pp <= 1) return {G::kLastMicrobatch, G::kEveryMicrobatch};
    return {G::kLastMicrobatch};
  }

  // The pipeline schedules a layout may run (docs/simulator.md "planck enumerate"): 1f1b,
  // interleaved_1f1b and interleaved_zb (ZB-H1 at v = 1) with v in kVirtualStages, zbv, and
  // dualpipev when m >= 2 pp; each stage must keep at least one of the L + 2 units
  // (step_pipeline.h stage_layers), and interleaving needs m a multiple of max(1, m / pp).
  // With expert parallelism, also the schedules Megatron's --overlap-moe-expert-parallel-comm
  // runs (pp = 1, interleaved_1f1b) with parallelism.ep_overlap; dualpipev has it by default.
  struct Pipeline {
    core::PipelineSchedule schedule;
    std::int64_t virtual_stages;
    std::optional<bool> ep_overlap;
  };
  struct Candidate {
    Layout layout;
    Pipeline pipeline;
  };
  std::vector<Pipeline> pipelines(std::int64_t pp, std::int64_t k, bool expert_parallel) const {
    using PS = core::PipelineSchedule;
    std::vector<Pipeline> out;
    const Framework fw = req_.framework;
    for (const auto& [sched, v] : pipeline_schedules(pp, k)) {
      // Megatron-Core runs 1F1B and interleaved 1F1B only (Megatron-LM
      // docs/api-guide/core/pipeline_parallel.md); torchtitan every schedule here
      // (torch.distributed.pipelining).
      const bool megatron = pp <= 1 || sched == PS::k1F1B || sched == PS::kInterleaved1F1B;
      if (fw == Framework::kMegatron && !megatron) continue;
      out.push_back({sched, v, std::nullopt});
      const bool combined_1f1b = pp <= 1 || sched == PS::kInterleaved1F1B;
      if (expert_parallel && combined_1f1b && fw != Framework::kTorchtitan) out.push_back({sched, v, true});
    }
    return out;
  }

  std::vector<std::pair<core::PipelineSchedule, std::int64_t>> pipeline_schedules(std::int64_t pp, std::int64_t k) const {
    using PS = core::PipelineSchedule;
    if (pp <= 1) return {{PS::k1F1B, 1}};
    const std::int64_t units = req_.model.layers + 2;
    std::vector<std::pair<PS, std::int64_t>> out = {{PS::k1F1B, 1}, {PS::kInterleavedZb, 1}};
    const bool rounds_ok = k % std::max<std::int64_t>(1, k / pp) == 0;
    for (std::int64_t v : kVirtualStages) {
      if (pp * v > units || !rounds_ok) continue;
      out.push_back({PS::kInterleaved1F1B, v});
      out.push_back({PS::kInterleavedZb, v});
    }
    if (2 * pp <= units) {
      out.push_back({PS::kZbv, 2});
      if (k >= 2 * pp) out.push_back({PS::kDualPipeV, 2});
    }
    if (!rounds_ok) std::erase_if(out, [](const auto& p) { return p.first == PS::kInterleavedZb; });
    return out;
  }

  // Every pipeline schedule for this (mesh, strategy, micro-batch); the fastest, those that fit
  // comfortably (at most memory-tight's 90% of capacity) first. With a template, every one is
  // also kept in explored_ for keep().
  std::optional<Candidate> try_strategy(const core::Mesh& mesh, std::int64_t k) {
    const core::Degrees d = core::degrees(mesh);
    std::optional<Candidate> best;
    for (const Pipeline& pl : pipelines(d.pp, k, moe_ && d.ep > 1)) {
      plan_.parallelism.pipeline_schedule = pl.schedule;
      plan_.parallelism.virtual_stages = pl.virtual_stages;
      plan_.parallelism.ep_overlap = pl.ep_overlap;
      auto l = try_pipeline(mesh, k);
      if (!l) continue;
      if (req_.checks) explored_.push_back({*l, pl});
      if (!best || better(*l, best->layout, req_.allow_tight)) best = Candidate{std::move(*l), pl};
    }
    return best;
  }

  // The layout kept for one (mesh, strategy): the search's best. With a template, the best that
  // passes every rule: rules see the whole plan (schedule, micro-batch, checkpointing too), so
  // the candidates explored (the best among them, first once sorted) are checked fastest first
  // until one is clean; if none is, the fastest is kept, rejected.
  void keep(const core::Mesh& mesh, Candidate best) {
    if (req_.checks) {
      std::stable_sort(explored_.begin(), explored_.end(), [this](const Candidate& a, const Candidate& b) {
        return better(a.layout, b.layout, req_.allow_tight);
      });
      std::size_t chosen = 0;
      for (std::size_t i = 0; i < explored_.size(); ++i) {
        if (vet(mesh, explored_[i])) {
          chosen = i;
          break;
        }
      }
      best = std::move(explored_[chosen]);
    }
    sink_->push_back(std::move(best.layout));
  }

  // Puts the candidate's choices back into plan_ and runs the template's checks on it.
  bool vet(const core::Mesh& mesh, Candidate& c) {
    plan_.parallelism.pipeline_schedule = c.pipeline.schedule;
    plan_.parallelism.virtual_stages = c.pipeline.virtual_stages;
    plan_.parallelism.ep_overlap = c.pipeline.ep_overlap;
    plan_.training->micro_batch = c.layout.micro_batch;
    plan_.training->grad_accumulation = c.layout.micro_batches;
    plan_.training->grad_sync = c.layout.grad_sync;
    plan_.training->activation_checkpointing = c.layout.checkpointing;
    plan_.training->recompute_every =
        c.layout.recompute_every > 0 ? std::optional(c.layout.recompute_every) : std::nullopt;
    plan_.training->recompute_num_layers =
        c.layout.recompute_num_layers > 0 ? std::optional(c.layout.recompute_num_layers) : std::nullopt;
    vet_layout(*req_.checks, plan_, mesh, c.layout);
    return c.layout.rejected.empty();
  }

  std::optional<Layout> try_pipeline(const core::Mesh& mesh, std::int64_t k) {
    // Memory needs only the lowering's scalar facts, so the (costlier) lowering runs once, for
    // the least activation checkpointing that fits (docs/simulator.md): comfortably unless
    // --allow-tight, else the least that fits at all, marked tight.
    core::Schedule facts;
    facts.world = mesh.world();
    facts.micro_batches = k;
    facts.data_parallel = *plan_.parallelism.data_parallel;
    facts.grad_sync = plan_.training->grad_sync;
    facts.seq_len = req_.seq_len;
    facts.micro_batch = plan_.training->micro_batch;
    const auto sched = *plan_.parallelism.pipeline_schedule;
    const bool v_shape = sched == core::PipelineSchedule::kZbv || sched == core::PipelineSchedule::kDualPipeV;
    facts.virtual_stages = mesh.size("pp") <= 1 ? 1 : static_cast<int>(v_shape ? 2 : plan_.parallelism.virtual_stages);
    std::optional<core::Checkpointing> chosen;
    bool tight = false;
    plan_.training->recompute_every.reset();
    plan_.training->recompute_num_layers.reset();
    for (auto ckpt : ladder_) {
      plan_.training->activation_checkpointing = ckpt;
      const Memory mem = memory(plan_, mesh, facts);
      if (memory_exceeds(mem)) continue;
      const bool is_tight = static_cast<double>(mem.peak) > kMemoryTightFraction * static_cast<double>(mem.capacity);
      if (!chosen || (!is_tight && tight)) {
        chosen = ckpt;
        tight = is_tight;
      }
      if (!is_tight || req_.allow_tight) break;
    }
    if (!chosen) return std::nullopt;
    plan_.training->activation_checkpointing = *chosen;
    // Full recompute only on as many layers as memory needs (Megatron's block method, or every
    // N-th layer; torchtitan removed its layer SAC in 114151ad4), as comfortably as all of them.
    if (*chosen == core::Checkpointing::kFull && req_.framework != Framework::kTorchtitan) {
      const double capacity = static_cast<double>(plan_.cluster.gpu.memory_bytes);
      narrow_recompute(plan_, mesh, facts, req_.framework == Framework::kMegatron,
                       tight ? capacity : kMemoryTightFraction * capacity);
    }
    auto schedule = core::lower(plan_, mesh);
    if (!schedule) return std::nullopt;
    const core::Degrees d = core::degrees(mesh);
    SimOptions so = req_.sim;
    so.exact_pipeline = false;
    SimResult r = simulate_schedule(plan_, mesh, std::move(*schedule), so);
    Layout l;
    l.dims = plan_.mesh.dims;
    l.shape = plan_.mesh.shape;
    l.data_parallel = *plan_.parallelism.data_parallel;
    l.reshard_after_forward = plan_.parallelism.reshard_after_forward;
    l.sequence_parallel = plan_.parallelism.sequence_parallel;
    l.async_tp = plan_.parallelism.async_tp;
    l.etp = plan_.parallelism.etp.value_or(0);
    l.pipeline_schedule = sched;
    l.virtual_stages = facts.virtual_stages;
    l.ep_overlap = moe_ && d.ep > 1 && ep_overlap_share(plan_, d.pp, facts.virtual_stages, k).share.has_value();
    l.checkpointing = *chosen;
    l.recompute_every = plan_.training->recompute_every.value_or(0);
    l.recompute_num_layers = plan_.training->recompute_num_layers.value_or(0);
    l.tight = tight;
    l.micro_batches = k;
    l.micro_batch = plan_.training->micro_batch;
    l.grad_sync = plan_.training->grad_sync;
    l.step_time_s = r.step.step_time_s;
    l.step_time_low_s = r.step.step_time_low_s;
    l.step_time_high_s = r.step.step_time_high_s;
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
    l.tokens_per_step = static_cast<double>(mesh.world() / (d.tp * d.pp * d.cp)) * static_cast<double>(k) *
                        static_cast<double>(plan_.training->micro_batch * req_.seq_len);
    l.tokens_per_s = r.step.step_time_s > 0 ? l.tokens_per_step / r.step.step_time_s : 0;
    return l;
  }

  const EnumerateRequest& req_;
  std::vector<Layout>* sink_ = nullptr;  // where keep() puts the layouts of the current split
  bool moe_ = false;
  core::Plan plan_;
  std::vector<core::Checkpointing> ladder_;
  std::vector<Candidate> explored_;  // with a template: every candidate of the current (mesh, strategy)
};

}  // namespace

void search_all(const EnumerateRequest& req, EnumerateResult& out) {
  Search first(req);
  out.fp8 = first.fp8();
  const auto splits = first.splits();
  const auto total = static_cast<std::int64_t>(splits.size());
  std::vector<std::vector<Layout>> found(splits.size());
  std::atomic<std::size_t> next{0};
  std::mutex progress_mutex;
  std::int64_t done = 0;
  if (req.progress) req.progress(0, total);
  auto work = [&](Search& s) {
    for (std::size_t i = next++; i < splits.size(); i = next++) {
      s.search(splits[i], found[i]);
      if (!req.progress) continue;
      const std::lock_guard<std::mutex> lock(progress_mutex);
      req.progress(++done, total);
    }
  };
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t threads =
      std::min<std::size_t>(splits.size(), req.threads > 0 ? static_cast<std::size_t>(req.threads) : cores);
  std::vector<std::thread> pool;
  std::vector<std::exception_ptr> failed(threads);
  for (std::size_t t = 1; t < threads; ++t) {
    pool.emplace_back([&, t] {
      try {
        Search s(req);
        work(s);
      } catch (...) {
        failed[t] = std::current_exception();
        next = splits.size();  // the others stop at their next split
      }
    });
  }
  try {
    work(first);
  } catch (...) {
    failed[0] = std::current_exception();
    next = splits.size();
  }
  for (auto& th : pool) th.join();
  for (const auto& e : failed) {
    if (e) std::rethrow_exception(e);
  }
  for (auto& f : found) {
    out.layouts.insert(out.layouts.end(), std::make_move_iterator(f.begin()), std::make_move_iterator(f.end()));
  }
}

}  // namespace planck::sim
