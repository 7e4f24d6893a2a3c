// Rendering a SimResult: "planck-sim/1" JSON (docs/simulator.md) and a text table.

#include <cmath>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/base/format.h"
#include "sim/format.h"
#include "sim/simulate.h"
#include "core/base/str_cat.h"

namespace planck::sim {
namespace {

// JSON has no infinity: a time that cannot be computed (zero bandwidth) prints as null.
nlohmann::json seconds(double s) { return std::isfinite(s) ? nlohmann::json(s) : nlohmann::json(nullptr); }

}  // namespace

std::string sim_to_json(const SimResult& r) {
  nlohmann::json j;
  j["format"] = "planck-sim/1";
  j["world"] = r.world;
  nlohmann::json colls = nlohmann::json::array();
  for (const auto& t : r.collectives) {
    const auto& c = t.entry;
    colls.push_back({{"role", c.role},
                     {"dims", c.dims},
                     {"op", core::op_name(c.op)},
                     {"phase", core::phase_name(c.phase)},
                     {"group_size", c.group_size},
                     {"groups", c.groups},
                     {"bytes_per_call", c.bytes_per_call},
                     {"calls_per_step", c.calls_per_step},
                     {"bytes_sent_per_rank", t.bytes_sent_per_rank},
                     {"time_s", seconds(t.time_s)},
                     {"link", link_name(t.link)},
                     {"algorithm", algorithm_name(t.algorithm)},
                     {"overlapped", t.overlapped},
                     {"dtype_bytes", c.dtype_bytes},
                     {"what", c.what}});
  }
  j["collectives"] = colls;
  j["step"] = {{"bytes_sent_per_rank", r.step.bytes_sent_per_rank},
               {"comm_time_s", seconds(r.step.comm_time_s)},
               {"compute_time_s", seconds(r.step.compute_time_s)},
               {"exposed_comm_time_s", seconds(r.step.exposed_comm_time_s)},
               {"step_time_s", seconds(r.step.step_time_s)},
               {"step_time_low_s", seconds(r.step.step_time_low_s)},
               {"step_time_high_s", seconds(r.step.step_time_high_s)},
               {"step_time_interval_basis", r.step.interval_basis},
               {"micro_batches", r.schedule.micro_batches},
               {"flops_per_rank", r.flops_per_rank},
               {"tflops_per_gpu", r.tflops_per_gpu},
               {"mfu", r.mfu},
               {"bubble_fraction", r.bubble_fraction},
               {"error_band", r.error_band}};
  j["pipeline"] = {{"timeline", r.pipeline_timeline},
                   {"virtual_stages", r.schedule.virtual_stages},
                   {"layers_per_stage", r.layers_per_stage}};
  const ComputeBreakdown& c = r.compute;
  j["compute"] = {{"model", c.mfu_override ? "training.mfu" : "per-kernel"},
                  {"gemm_s", seconds(c.gemm_s)},
                  {"attention_s", seconds(c.attention_s)},
                  {"memory_bound_s", seconds(c.memory_s)},
                  {"recompute_s", seconds(c.recompute_s)},
                  {"optimizer_s", seconds(c.optimizer_s)},
                  {"host_s", seconds(c.host_s)},
                  {"bubble_s", seconds(c.bubble_s)},
                  {"rank_layers", c.rank_layers},
                  {"recomputed_layers", c.recomputed_layers},
                  {"per_microbatch",
                   {{"layers_forward_s", seconds(c.layers_forward_s)},
                    {"layers_backward_s", seconds(c.layers_backward_s)},
                    {"head_forward_s", seconds(c.head_forward_s)},
                    {"head_backward_s", seconds(c.head_backward_s)}}}};
  if (c.mfu_override) j["compute"]["mfu_override"] = *c.mfu_override;
  j["compute"]["fp8"] = core::to_string(c.fp8);
  j["compute"]["linear_dtype"] = core::to_string(c.linear_dtype);
  j["memory"] = {{"params", r.memory.params},           {"grads", r.memory.grads},
                 {"optimizer", r.memory.optimizer},     {"activations", r.memory.activations},
                 {"peak", r.memory.peak},               {"capacity", r.memory.capacity},
                 {"offloaded", r.memory.offloaded},     {"host_traffic", r.memory.host_traffic},
                 {"loss", r.memory.loss},               {"workspaces", r.memory.workspaces},
                 {"peak_allocated", r.memory.peak_allocated},
                 {"gather_pool", r.memory.gather_pool}, {"fragmentation", r.memory.fragmentation},
                 {"peak_reserved", r.memory.peak_reserved},
                 {"cuda_context", r.memory.cuda_context}, {"nccl_buffers", r.memory.nccl_buffers},
                 {"required", r.memory.required}};
  j["data_parallel"] = core::to_string(r.schedule.data_parallel);
  j["notes"] = r.notes;
  return j.dump(2) + "\n";
}

std::string sim_to_text(const SimResult& r, const core::Plan& plan, const core::Mesh& mesh) {
  std::ostringstream o;
  o << (plan.name.empty() ? plan.path : plan.name) << ": " << mesh.to_string() << ", world " << r.world << ", "
    << plan.cluster.gpu.name
    << (plan.cluster.nvlink_domain > 0 ? " (NVLink domain " + std::to_string(plan.cluster.nvlink_domain) + ")"
                                       : std::string())
    << ", model " << (plan.model ? plan.model->name : "?") << ", data_parallel "
    << core::to_string(r.schedule.data_parallel) << ", " << r.schedule.micro_batches << " micro-batch(es) of "
    << r.schedule.micro_batch << " x " << r.schedule.seq_len << " tokens\n\n";
  o << pad("role", 10) << pad("dims", 18) << pad("op", 15) << pad("phase", 10) << pad("n x groups", 12)
    << pad("bytes/call", 12) << pad("calls", 8) << pad("sent/rank", 12) << pad("time", 11) << pad("link", 18)
    << "what\n";
  for (const auto& t : r.collectives) {
    const auto& c = t.entry;
    std::string link = link_name(t.link);
    if (t.algorithm != Algorithm::kRing) link.append("/").append(algorithm_name(t.algorithm));
    o << pad(c.role, 10) << pad(core::join(c.dims, ","), 18) << pad(core::op_name(c.op), 15)
      << pad(core::phase_name(c.phase), 10) << pad(std::to_string(c.group_size) + " x " + std::to_string(c.groups), 12)
      << pad(core::format_bytes(c.bytes_per_call), 12) << pad(std::to_string(c.calls_per_step), 8)
      << pad(core::format_bytes(t.bytes_sent_per_rank), 12) << pad(human_seconds(t.time_s), 11)
      << pad(link, 18)
      << c.what << (t.overlapped ? " [overlapped]" : "") << "\n";
  }
  if (r.collectives.empty()) o << "(no collectives: every group has one rank)\n";
  o << "\nstep: " << core::format_bytes(r.step.bytes_sent_per_rank) << " sent per rank, comm "
    << human_seconds(r.step.comm_time_s) << " (exposed " << human_seconds(r.step.exposed_comm_time_s)
    << "), compute " << human_seconds(r.step.compute_time_s) << ", step " << human_seconds(r.step.step_time_s)
    << ", likely " << human_seconds(r.step.step_time_low_s) << "-" << human_seconds(r.step.step_time_high_s) << " ("
    << r.step.interval_basis << ")";
  if (r.error_band > 0) o << " (+-" << std::lround(100 * r.error_band) << "% measured MoE error)";
  o << "\n";
  const ComputeBreakdown& c = r.compute;
  if (c.mfu_override) {
    o << "compute: training.mfu = " << *c.mfu_override << " (override; the per-kernel model is not used), recompute "
      << human_seconds(c.recompute_s);
  } else {
    o << "compute: GEMM " << human_seconds(c.gemm_s)
      << (c.linear_dtype == core::DType::kFp8 && c.fp8 != core::Fp8Recipe::kNone
              ? std::string(" (FP8 linears, ") + core::to_string(c.fp8) + ")"
              : std::string())
      << ", attention " << human_seconds(c.attention_s)
      << ", memory-bound " << human_seconds(c.memory_s) << " (optimizer " << human_seconds(c.optimizer_s)
      << "), recompute " << human_seconds(c.recompute_s);
  }
  if (c.recomputed_layers > 0) o << " (full on " << c.recomputed_layers << " of " << c.rank_layers << " layers)";
  o << ", bubble " << human_seconds(c.bubble_s) << " (" << r.bubble_fraction << " of compute)\n";
  o << "throughput: " << r.flops_per_rank / 1e12 << " model TFLOP per GPU per step, " << r.tflops_per_gpu
    << " TFLOP/s per GPU, MFU " << r.mfu << "\n";
  const auto& m = r.memory;
  o << "memory per GPU: params " << core::format_bytes(m.params) << ", grads " << core::format_bytes(m.grads) << ", optimizer "
    << core::format_bytes(m.optimizer) << ", activations " << core::format_bytes(m.activations) << " (loss "
    << core::format_bytes(m.loss) << "); allocated " << core::format_bytes(m.peak_allocated) << ", reserved "
    << core::format_bytes(m.peak_reserved) << " (all-gather stream " << core::format_bytes(m.gather_pool)
    << ", fragmentation " << core::format_bytes(m.fragmentation) << "); CUDA context + NCCL "
    << core::format_bytes(m.cuda_context + m.nccl_buffers) << "; peak " << core::format_bytes(m.peak) << " of "
    << core::format_bytes(m.capacity);
  if (m.capacity > 0) {
    o << " (" << static_cast<int>(std::lround(100.0 * static_cast<double>(m.peak) / static_cast<double>(m.capacity)))
      << "%)";
  }
  o << "\n";
  for (const auto& n : r.notes) o << "note: " << n << "\n";
  return o.str();
}

}  // namespace planck::sim
