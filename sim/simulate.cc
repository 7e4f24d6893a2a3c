#include "sim/simulate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "core/base/format.h"
#include "core/base/saturating.h"
#include "core/mesh/roles.h"
#include "core/plan/pipeline_split.h"
#include "core/plan/presets.h"
#include "sim/compute.h"
#include "sim/format.h"
#include "sim/ep_overlap.h"
#include "sim/model.h"
#include "sim/moe_band.h"
#include "sim/overlap.h"
#include "sim/stack_cost.h"
#include "sim/step_pipeline.h"
#include "sim/uncertainty.h"

namespace planck::sim {
namespace {

// Compute of one step on the busiest rank: the per-kernel model (sim/compute.h), or, when the
// plan sets training.mfu, model FLOPs at that utilisation with recompute in the kernel model's
// proportion. Busiest stage: ceil(L / pp) layers plus the head (the last stage).
ComputeBreakdown step_compute(const core::Plan& plan, const core::Mesh& mesh, const core::Schedule& schedule,
                              const Memory& mem, double flops_per_rank, const SimOptions& options) {
  const core::Degrees d = core::degrees(mesh);
  const core::ModelSpec& model = *plan.model;
  const core::GpuSpec& gpu = plan.cluster.gpu;
  const core::Training tr = plan.training.value_or(core::Training{});
  ComputeShape shape = compute_shape(plan, mesh, schedule);
  shape.gemm_scale = options.topology && options.topology->compute ? options.topology->compute->gemm_scale : 1.0;
  shape.expert_gemm_scale = options.moe.expert_gemm_scale.value_or(gpu.compute.grouped_gemm_scale);
  std::tie(shape.moe_layer_overhead_s, shape.moe_host_launch_s) =
      moe_host_times(tr, options.moe.layer_overhead_s, options.moe.host_launch_s);
  const core::RankParams rp = core::rank_params(model, d.pp, d.tp, shape.ep, shape.etp);
  PassTimes layers;
  if (rp.dense_layers > 0) layers += layer_times(model, gpu, shape, false) * static_cast<double>(rp.dense_layers);
  if (rp.moe_layers > 0) layers += layer_times(model, gpu, shape, true) * static_cast<double>(rp.moe_layers);
  // Partial full recompute (training.recompute_every / recompute_num_layers) re-runs the forward
  // of only its share of the rank's layers.
  const std::int64_t recomputed = core::recomputed_layers(tr, rp.layers(), schedule.virtual_stages);
  if (const std::int64_t n = rp.layers(); n > 0 && tr.activation_checkpointing == core::Checkpointing::kFull) {
    layers.recompute = layers.recompute * (static_cast<double>(recomputed) / static_cast<double>(n));
  }
  // FSDP2's copy-out of each gathered unit and copy-in of each reduce-scatter run on the compute
  // stream (sim/stack_cost.h).
  const FsdpCopyBytes copies = fsdp2_copy_bytes(plan, schedule);
  layers.forward.memory_s += memory_seconds(gpu, copies.forward);
  layers.backward.memory_s += memory_seconds(gpu, copies.backward);
  const PassTimes head = head_times(model, gpu, shape);
  const double m = static_cast<double>(schedule.micro_batches);
  ComputeBreakdown c;
  c.rank_layers = rp.layers();
  c.recomputed_layers = recomputed;
  c.linear_dtype = shape.linear_dtype;
  c.fp8 = tr.fp8;
  c.gemm_s = m * (layers.forward.gemm_s + layers.backward.gemm_s + head.forward.gemm_s + head.backward.gemm_s);
  c.attention_s = m * (layers.forward.attention_s + layers.backward.attention_s);
  c.memory_s = m * (layers.forward.memory_s + layers.backward.memory_s + head.forward.memory_s + head.backward.memory_s);
  c.recompute_s = m * layers.recompute.total_s();
  // Multi-token prediction on the stage that holds the loss: counted with the head.
  if (const std::int64_t mtp = core::trained_mtp_layers(plan); mtp > 0) {
    PassTimes p = mtp_times(model, gpu, shape) * static_cast<double>(mtp);
    c.mtp_layers = mtp;
    c.mtp_forward_s = p.forward.total_s();
    c.mtp_backward_s = p.backward.total_s() + p.recompute.total_s();
    c.mtp_weight_grad_s = p.backward.gemm_s / 2;
    c.gemm_s += m * (p.forward.gemm_s + p.backward.gemm_s);
    c.attention_s += m * (p.forward.attention_s + p.backward.attention_s);
    c.memory_s += m * (p.forward.memory_s + p.backward.memory_s);
    c.recompute_s += m * p.recompute.total_s();
  }
  // Optimizer step over this rank's parameter shard (the optimizer states memory already holds it).
  // It moves what an AdamW step over the same shard would, scaled by the optimizer's bytes
  // (sim/memory.h optimizer_bytes; AdamW with fp32 master: 12 a parameter). An offloaded step
  // runs on the host (its CPU time is not priced; simulate notes it).
  const double opt_bytes = optimizer_bytes(tr).total();
  if (opt_bytes > 0 && mem.optimizer > 0) {
    const double shard = static_cast<double>(mem.optimizer) / opt_bytes;
    c.optimizer_s = optimizer_times(gpu, shard * (4 + opt_bytes) / 16.0).memory_s;
  }
  c.memory_s += c.optimizer_s;
  if (gpu.host_gbps > 0) c.host_s = static_cast<double>(mem.host_traffic) / (gpu.host_gbps * 1e9);
  c.layers_forward_s = layers.forward.total_s();
  c.layers_backward_s = layers.backward.total_s() + layers.recompute.total_s();
  c.head_forward_s = head.forward.total_s();
  c.head_backward_s = head.backward.total_s();
  // The backward GEMMs are dX and dW of equal FLOPs (time_gemms): half is the weight gradient.
  c.layers_weight_grad_s = layers.backward.gemm_s / 2;
  c.head_weight_grad_s = head.backward.gemm_s / 2;
  c.layers_forward_gemm_s = layers.forward.gemm_s;
  c.layers_backward_gemm_s = layers.backward.gemm_s;
  c.layers_forward_attention_s = layers.forward.attention_s;
  c.layers_backward_attention_s = layers.backward.attention_s;
  c.layers = rp.layers();
  if (!tr.mfu) return c;
  // training.mfu: model FLOPs at that share of the BF16 peak, forward a third of them.
  c.mfu_override = *tr.mfu;
  const double executed = layers.forward.flops + layers.backward.flops + head.forward.flops + head.backward.flops;
  const double recompute = executed > 0 ? layers.recompute.flops / executed : 0;
  const double per_mb = flops_per_rank / std::max(1.0, m) / (gpu.bf16_tflops * 1e12 * *tr.mfu);
  c.layers_forward_s = per_mb / 3.0;
  c.layers_backward_s = per_mb * (2.0 / 3.0 + recompute);
  c.head_forward_s = c.head_backward_s = 0;
  // No kernel split under training.mfu: all of it counts as GEMM, the weight gradient a third.
  c.layers_weight_grad_s = per_mb / 3.0;
  c.head_weight_grad_s = 0;
  c.layers_forward_gemm_s = c.layers_forward_s;
  c.layers_backward_gemm_s = c.layers_backward_s;
  c.layers_forward_attention_s = c.layers_backward_attention_s = 0;
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
  const std::int64_t gpn = core::link_domain(plan.cluster);
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
    r.step.bytes_sent_per_rank = core::sat_add(r.step.bytes_sent_per_rank, t.bytes_sent_per_rank);
    r.step.comm_time_s += t.time_s;
    r.collectives.push_back(std::move(t));
  }

  const core::Degrees d = core::degrees(mesh);
  r.memory = memory(plan, mesh, schedule);
  const double m = static_cast<double>(schedule.micro_batches);
  if (plan.model) {
    const double tokens = m * static_cast<double>(schedule.micro_batch) * static_cast<double>(schedule.seq_len) /
                          static_cast<double>(d.cp);
    r.flops_per_rank = flops_per_token(*plan.model, schedule.seq_len) * tokens / static_cast<double>(d.tp * d.pp);
    r.compute = step_compute(plan, mesh, schedule, r.memory, r.flops_per_rank, options);
  }
  const ComputeBreakdown& c = r.compute;
  const std::int64_t v = std::max(1, schedule.virtual_stages);
  const double layers = static_cast<double>(std::max<std::int64_t>(1, c.layers));
  // One micro-batch on the busiest rank: its layers, and the head when it is the last stage.
  OverlapCompute oc;
  oc.layers = std::max<std::int64_t>(1, c.layers);
  oc.micro_batches = schedule.micro_batches;
  oc.layer_f_gemm = c.layers_forward_gemm_s / layers;
  oc.layer_b_gemm = c.layers_backward_gemm_s / layers;
  oc.layer_f_attention = c.layers_forward_attention_s / layers;
  oc.layer_b_attention = c.layers_backward_attention_s / layers;
  oc.rank_f = c.layers_forward_s;
  oc.rank_b = c.layers_backward_s;
  oc.tp = d.tp;
  oc.cp = d.cp;
  oc.async_tp = plan.parallelism.async_tp;
  const bool has_a2a = std::any_of(r.collectives.begin(), r.collectives.end(), [](const TimedCollective& t) {
    return t.entry.role == "ep" && t.entry.op == core::CollOp::kAllToAll;
  });
  const PairedShare ep_pairs =
      has_a2a ? ep_overlap_share(plan, d.pp, d.pp > 1 ? v : 1, schedule.micro_batches) : PairedShare{};
  oc.ep_paired_share = ep_pairs.share.value_or(0) * std::clamp(options.moe.ep_overlap_efficiency, 0.0, 1.0);
  oc.overlap_param_gather = plan.parallelism.overlap_param_gather;
  std::vector<TimedSlot> slots;
  slots.reserve(r.collectives.size());
  for (const auto& t : r.collectives) slots.push_back({&t.entry, t.time_s, false});
  const ExposedComm ex = apply_overlap(slots, oc);
  for (std::size_t i = 0; i < slots.size(); ++i) r.collectives[i].overlapped = slots[i].overlapped;

  StageCosts sc;
  sc.schedule = plan.parallelism.pipeline_schedule.value_or(core::PipelineSchedule::k1F1B);
  sc.pp = d.pp;
  sc.virtual_stages = d.pp > 1 ? v : 1;
  sc.micro_batches = schedule.micro_batches;
  sc.layers = plan.model ? plan.model->layers : c.layers;
  sc.layer_f = c.layers_forward_s / layers + ex.layer_f;
  sc.layer_b = c.layers_backward_s / layers + ex.layer_b;
  sc.layer_w = c.layers_weight_grad_s / layers;
  sc.first_f = ex.first_f;
  sc.first_b = ex.first_b;
  sc.last_f = c.head_forward_s + ex.last_f;
  sc.last_b = c.head_backward_s + ex.last_b;
  sc.last_w = c.head_weight_grad_s;
  sc.rank_f = ex.rank_f;
  sc.rank_b = ex.rank_b;
  sc.p2p_s = ex.p2p_s;
  sc.mtp_f = c.mtp_forward_s;
  sc.mtp_b = c.mtp_backward_s;
  sc.mtp_w = c.mtp_weight_grad_s;
  sc.mtp_units = c.mtp_layers;
  if (plan.model && core::has_megatron_split(plan.parallelism)) {
    // Megatron's split (verify's layers-indivisible reports a refused one; it is timed evenly).
    if (auto split = core::megatron_split(plan.parallelism, plan.model->layers, sc.pp, sc.virtual_stages)) {
      sc.split = split->layers;
      sc.embedding_stage = split->embedding_stage;
      sc.loss_stage = split->loss_stage;
      sc.mtp_stage = split->mtp_stage;
    } else {
      r.notes.push_back("pipeline split refused (" + split.message() + "): timed with the even split");
    }
  }
  if (plan.model && plan.model->is_moe()) {
    r.error_band = kMoeStepErrorBand;
    r.notes.push_back(moe_error_band_note());
  }
  auto pipe = pipeline_step(sc, options.exact_pipeline);
  PipelineStep ps;
  if (pipe) {
    ps = std::move(*pipe);
  } else {
    // A shape the schedule refuses (verify reports it): time it as 1f1b and say so.
    r.notes.push_back("pipeline " + std::string(core::to_string(sc.schedule)) + " cannot run this shape (" +
                      pipe.message() + "); timed as 1f1b");
    sc.schedule = core::PipelineSchedule::k1F1B;
    sc.virtual_stages = 1;
    if (auto again = pipeline_step(sc, options.exact_pipeline)) ps = std::move(*again);
  }
  r.pipeline_timeline = ps.timeline;
  r.layers_per_stage = ps.layers_per_stage;
  r.bubble_fraction = ps.bubble_fraction;
  r.compute.bubble_s = ps.bubble_s;
  // Compute of the step: m micro-batches of the busiest stage's layers and head, the bubble the
  // timeline leaves on the busiest rank, and the optimizer step. The rest is exposed comm.
  StageCosts compute_only = sc;
  compute_only.layer_f = c.layers_forward_s / layers;
  compute_only.layer_b = c.layers_backward_s / layers;
  compute_only.first_f = compute_only.first_b = compute_only.rank_f = compute_only.rank_b = 0;
  compute_only.last_f = c.head_forward_s;
  compute_only.last_b = c.head_backward_s;
  const double work = m * busiest_rank_per_micro_batch(pipeline_input(compute_only));
  r.step.compute_time_s = work + ps.bubble_s + c.optimizer_s;
  r.step.step_time_s = ps.makespan_s + c.optimizer_s + c.host_s + ex.step_s;
  r.step.exposed_comm_time_s = std::max(0.0, r.step.step_time_s - r.step.compute_time_s);
  const StepInterval band = step_interval(plan.training.value_or(core::Training{}), r.step.step_time_s,
                                          plan.model && plan.model->is_moe());
  r.step.step_time_low_s = band.low_s;
  r.step.step_time_high_s = band.high_s;
  r.step.interval_basis = band.basis;
  const double peak = gpu.bf16_tflops * 1e12;
  if (r.step.step_time_s > 0 && std::isfinite(r.step.step_time_s)) {
    r.tflops_per_gpu = r.flops_per_rank / r.step.step_time_s / 1e12;
    r.mfu = peak > 0 ? r.tflops_per_gpu * 1e12 / peak : 0;
  }
  r.notes.insert(r.notes.begin(), schedule.notes.begin(), schedule.notes.end());
  if (const std::int64_t rack = core::rack_nvlink_gpus(gpu);
      rack > 0 && plan.cluster.nvlink_domain == 0 && r.world > gpn) {
    r.notes.push_back(gpu.name + " sits in racks whose NVLink reaches up to " + std::to_string(rack) +
                      " GPUs, but cluster.nvlink_domain is not set: traffic between nodes of " + std::to_string(gpn) +
                      " is priced on the NICs (set it to the GPUs one rack gives the job)");
  }
  if (core::amd_instinct(gpu)) {
    r.notes.push_back("no published run on " + gpu.name +
                      " is fitted: its compute curve is H100's scaled by their measured best-shape GEMM efficiency, "
                      "and its Infinity Fabric mesh is priced as a switch; the step interval is NVIDIA runs' and may "
                      "not cover it (docs/simulator.md \"GPU presets and their curves\")");
  }
  if (r.memory.host_traffic > 0) {
    r.notes.push_back(gpu.host_gbps > 0
                          ? "offload: " + core::format_bytes(r.memory.host_traffic) + " a step over the host link at " +
                                std::to_string(static_cast<int>(gpu.host_gbps)) + " GB/s (" + human_seconds(c.host_s) +
                                ", not overlapped); the host's optimizer step and any NVMe traffic are not priced"
                          : "offload: " + core::format_bytes(r.memory.host_traffic) +
                                " a step over the host link, not priced (the GPU gives no host_gbps)");
  }
  if (plan.training && plan.training->param_dtype == core::DType::kFp8 && plan.training->fp8 == core::Fp8Recipe::kNone) {
    r.notes.push_back("param_dtype fp8 stores every parameter, gradient bucket and activation in 1 byte, which no "
                      "framework's FP8 recipe does; FP8 training (bf16 weights, FP8 linears) is training.fp8");
  }
  if (plan.training && plan.training->fp8 != core::Fp8Recipe::kNone && plan.training->mfu) {
    r.notes.push_back(std::string("training.fp8 ") + core::to_string(plan.training->fp8) +
                      " has no effect under training.mfu (compute is model FLOPs at that share of the BF16 peak)");
  } else if (plan.training && plan.training->fp8 != core::Fp8Recipe::kNone) {
    const char* recipe = core::to_string(plan.training->fp8);
    if (plan.training->fp8 == core::Fp8Recipe::kMxfp8 && !core::mx_tensor_cores(gpu)) {
      r.notes.push_back("training.fp8 mxfp8 needs MX tensor cores (Blackwell, MI355X): Transformer Engine refuses "
                        "it on " +
                        gpu.name + " (use tensorwise or blockwise)");
    }
    if (gpu.fp8_tflops <= 0) {
      r.notes.push_back(std::string("training.fp8 ") + recipe + ": " + gpu.name +
                        " has no FP8 tensor cores; the linear GEMMs are priced in " +
                        core::to_string(plan.training->param_dtype));
    } else if (plan.training->fp8 != core::Fp8Recipe::kTensorwise) {
      r.notes.push_back(std::string("training.fp8 ") + recipe +
                        " is priced as tensorwise (the recipe validated against published runs); finer scaling "
                        "usually costs more (docs/simulator.md \"FP8\")");
    }
  }
  if (plan.training && plan.training->recompute_modules) {
    const core::RecomputeModules rm = core::recompute_modules_of(*plan.training);
    if (rm.mla_up_proj && plan.model && plan.model->kv_lora_rank <= 0) {
      r.notes.push_back("training.recompute_modules mla_up_proj has no effect: " + plan.model->name +
                        " has no multi-head latent attention (Megatron refuses the setting)");
    }
    if ((rm.moe || rm.moe_act || rm.shared_experts) && plan.model && plan.model->experts <= 0) {
      r.notes.push_back("training.recompute_modules moe / moe_act / shared_experts have no effect on a dense model");
    }
  }
  if (ep_pairs.share) {
    r.notes.push_back("expert all-to-all overlapped with another micro-batch's compute: " +
                      std::to_string(std::lround(*ep_pairs.share * 100)) + "% of chunk passes run paired (" +
                      core::to_string(sc.schedule) + ", docs/simulator.md \"Expert-parallel overlap\")");
  } else if (!ep_pairs.why_not.empty()) {
    r.notes.push_back("ep_overlap has no effect: " + ep_pairs.why_not);
  }
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
