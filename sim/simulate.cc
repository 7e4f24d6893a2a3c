#include "sim/simulate.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/base/saturating.h"
#include "core/mesh/roles.h"
#include "sim/compute.h"
#include "sim/model.h"

namespace planck::sim {
namespace {

// Which collectives hide under compute. Data-parallel syncs are issued asynchronously per
// bucket / unit while backward (and FSDP's prefetched forward all-gathers) computes (PyTorch DDP
// reducer, FSDP2 prefetching; Zhao et al. VLDB'23 §3.3); ring attention overlaps each K/V hop
// with the attention block of the previous chunk (Liu et al., Ring Attention, 2023). Tensor-
// parallel collectives, expert all-to-all and pipeline p2p sit on the critical path of each
// layer / micro-batch, and the optimizer-phase all-gather of ZeRO-1/2 follows the step.
bool overlappable(const core::ScheduledCollective& c) {
  if (c.phase != core::Phase::kForward && c.phase != core::Phase::kBackward) return false;
  return c.role == "dp" || c.role == "fsdp" || c.role == "replicate" || c.role == "cp";
}

// Compute of one step on the busiest rank: the per-kernel model (sim/compute.h), or, when the
// plan sets training.mfu, model FLOPs at that utilisation with recompute in the kernel model's
// proportion. Busiest stage: ceil(L / pp) layers plus the head (the last stage).
ComputeBreakdown step_compute(const core::Plan& plan, const core::Degrees& d, const core::Schedule& schedule,
                              const Memory& mem, double flops_per_rank, const SimOptions& options) {
  const core::ModelSpec& model = *plan.model;
  const core::GpuSpec& gpu = plan.cluster.gpu;
  const core::Training tr = plan.training.value_or(core::Training{});
  ComputeShape shape = compute_shape(plan, d, schedule);
  shape.gemm_scale = options.topology && options.topology->compute ? options.topology->compute->gemm_scale : 1.0;
  const core::RankParams rp = core::rank_params(model, d.pp, d.tp, d.ep);
  PassTimes layers;
  if (rp.dense_layers > 0) layers += layer_times(model, gpu, shape, false) * static_cast<double>(rp.dense_layers);
  if (rp.moe_layers > 0) layers += layer_times(model, gpu, shape, true) * static_cast<double>(rp.moe_layers);
  const PassTimes head = head_times(model, gpu, shape);
  const double m = static_cast<double>(schedule.micro_batches);
  ComputeBreakdown c;
  c.gemm_s = m * (layers.forward.gemm_s + layers.backward.gemm_s + head.forward.gemm_s + head.backward.gemm_s);
  c.attention_s = m * (layers.forward.attention_s + layers.backward.attention_s);
  c.memory_s = m * (layers.forward.memory_s + layers.backward.memory_s + head.forward.memory_s + head.backward.memory_s);
  c.recompute_s = m * layers.recompute.total_s();
  // Optimizer step over this rank's parameter shard (the optimizer states memory already holds it).
  const double opt_bytes = optimizer_bytes_per_param(tr.optimizer, core::dtype_bytes(tr.param_dtype));
  c.optimizer_s = opt_bytes > 0 ? optimizer_times(gpu, static_cast<double>(mem.optimizer) / opt_bytes).memory_s : 0;
  c.memory_s += c.optimizer_s;
  c.layers_forward_s = layers.forward.total_s();
  c.layers_backward_s = layers.backward.total_s() + layers.recompute.total_s();
  c.head_forward_s = head.forward.total_s();
  c.head_backward_s = head.backward.total_s();
  if (!tr.mfu) return c;
  // training.mfu: model FLOPs at that share of the BF16 peak, forward a third of them.
  c.mfu_override = *tr.mfu;
  const double executed = layers.forward.flops + layers.backward.flops + head.forward.flops + head.backward.flops;
  const double recompute = executed > 0 ? layers.recompute.flops / executed : 0;
  const double per_mb = flops_per_rank / std::max(1.0, m) / (gpu.bf16_tflops * 1e12 * *tr.mfu);
  c.layers_forward_s = per_mb / 3.0;
  c.layers_backward_s = per_mb * (2.0 / 3.0 + recompute);
  c.head_forward_s = c.head_backward_s = 0;
  c.gemm_s = c.attention_s = c.memory_s = c.optimizer_s = 0;
  c.recompute_s = m * per_mb * recompute;
  return c;
}

}  // namespace

SimResult simulate_schedule(const core::Plan& plan, const core::Mesh& mesh, core::Schedule schedule,
                            const SimOptions& options) {
  SimResult r;
  r.world = mesh.world();
  const core::GpuSpec& gpu = plan.cluster.gpu;
  const std::int64_t gpn = plan.cluster.gpus_per_node;
  double overlap_fwd = 0, overlap_bwd = 0, exposed = 0;
  // A schedule uses a handful of distinct communicators; place each once.
  std::vector<std::pair<std::vector<std::string>, Placement>> placed;
  auto place_of = [&](const std::vector<std::string>& dims) {
    for (const auto& [d, p] : placed) {
      if (d == dims) return p;
    }
    placed.emplace_back(dims, core::placement_of(mesh, dims, gpn));
    return placed.back().second;
  };
  r.collectives.reserve(schedule.collectives.size());
  for (auto& entry : schedule.collectives) {
    TimedCollective t;
    t.entry = std::move(entry);
    const core::ScheduledCollective& c = t.entry;
    const Placement place = place_of(c.dims);
    const CallCost cost = predict_time(c, place, gpu, options.topology, options.cost);
    t.bytes_sent_per_rank = cost.wire_bytes;
    t.time_s = cost.time_s;
    t.link = cost.link;
    t.algorithm = cost.algorithm;
    t.overlapped = overlappable(c);
    r.step.bytes_sent_per_rank = core::sat_add(r.step.bytes_sent_per_rank, t.bytes_sent_per_rank);
    r.step.comm_time_s += t.time_s;
    if (!t.overlapped) {
      exposed += t.time_s;
    } else {
      (c.phase == core::Phase::kForward ? overlap_fwd : overlap_bwd) += t.time_s;
    }
    r.collectives.push_back(std::move(t));
  }

  const core::Degrees d = core::degrees(mesh);
  r.memory = memory(plan, mesh, schedule);
  const double m = static_cast<double>(schedule.micro_batches);
  if (plan.model) {
    const double tokens = m * static_cast<double>(schedule.micro_batch) * static_cast<double>(schedule.seq_len) /
                          static_cast<double>(d.cp);
    r.flops_per_rank = flops_per_token(*plan.model, schedule.seq_len) * tokens / static_cast<double>(d.tp * d.pp);
    r.compute = step_compute(plan, d, schedule, r.memory, r.flops_per_rank, options);
  }
  const auto sched = plan.parallelism.pipeline_schedule.value_or(core::PipelineSchedule::k1F1B);
  r.bubble_fraction = bubble_fraction(sched, d.pp, schedule.virtual_stages, schedule.micro_batches);
  const ComputeBreakdown& c = r.compute;
  const double fwd = m * (c.layers_forward_s + c.head_forward_s);
  const double bwd = m * (c.layers_backward_s + c.head_backward_s);
  r.compute.bubble_s = (fwd + bwd) * r.bubble_fraction;
  r.step.compute_time_s = fwd + bwd + r.compute.bubble_s + c.optimizer_s;
  // Overlap inside each phase: what the phase's compute cannot hide is exposed.
  exposed += std::max(0.0, overlap_fwd - fwd) + std::max(0.0, overlap_bwd - bwd);
  r.step.exposed_comm_time_s = exposed;
  r.step.step_time_s = r.step.compute_time_s + exposed;
  const double peak = gpu.bf16_tflops * 1e12;
  if (r.step.step_time_s > 0 && std::isfinite(r.step.step_time_s)) {
    r.tflops_per_gpu = r.flops_per_rank / r.step.step_time_s / 1e12;
    r.mfu = peak > 0 ? r.tflops_per_gpu * 1e12 / peak : 0;
  }
  r.notes = schedule.notes;
  if (options.topology) {
    std::vector<std::pair<LinkClass, core::CollOp>> used;
    for (const auto& t : r.collectives) {
      if (t.entry.group_size > 1) used.emplace_back(t.link, t.entry.op);
    }
    const std::string gaps = missing_figures(*options.topology, used);
    if (!gaps.empty()) {
      r.notes.push_back("partial topology profile: it has no figures for " + gaps + "; those collectives use the GPU "
                        "preset " + gpu.name + " (calibrate those links, or add a \"default\" entry per link)");
    }
  }
  schedule.collectives.clear();  // moved into r.collectives
  r.schedule = std::move(schedule);
  return r;
}

core::Status configure_sim_options(SimOptions& options, std::optional<Topology>& storage,
                                   const std::string& topology_path, bool nvls, bool no_tree) {
  options.cost.allow_nvls = nvls;
  options.cost.allow_tree = !no_tree;
  options.topology = nullptr;
  if (topology_path.empty()) return core::Status::ok();
  auto t = load_topology(topology_path);
  if (!t) return core::Status::error("--topology: " + t.message());
  storage = std::move(*t);
  options.topology = &*storage;
  return core::Status::ok();
}

core::Result<SimResult> simulate(const core::Plan& plan, const core::Mesh& mesh, const SimOptions& options) {
  auto schedule = core::lower(plan, mesh);
  if (!schedule) return schedule.status();
  return simulate_schedule(plan, mesh, std::move(*schedule), options);
}

}  // namespace planck::sim
