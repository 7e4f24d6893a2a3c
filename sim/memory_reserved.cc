#include "sim/memory_reserved.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/mesh/placement.h"
#include "core/mesh/roles.h"

namespace planck::sim {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::int64_t to_bytes(double b) {
  constexpr double kMax = static_cast<double>(std::numeric_limits<std::int64_t>::max() / 16);
  if (!(b > 0)) return 0;
  return b >= kMax ? static_cast<std::int64_t>(kMax) : static_cast<std::int64_t>(std::llround(b));
}

// PyTorch's cuBLAS workspace per (handle, stream): 32 MiB on Hopper and Blackwell, 8,519,680
// bytes (":4096:2:16:8") before (aten/src/ATen/cuda/CublasHandlePool.cpp parseChosenWorkspaceSize);
// training holds two handles, the forward's thread and autograd's backward thread. The presets
// with FP8 tensor cores are the Hopper and Blackwell parts.
double cublas_workspaces(const core::GpuSpec& gpu) {
  if (gpu.name == "cpu") return 0;
  return 2.0 * (gpu.fp8_tflops > 0 ? 32.0 * kMiB : 8519680.0);
}

}  // namespace

double loss_bytes(core::CrossEntropy ce, std::int64_t tokens, std::int64_t hidden, std::int64_t vocab, std::int64_t tp) {
  const double t = static_cast<double>(tokens), h = static_cast<double>(hidden);
  const double v = static_cast<double>(vocab) / static_cast<double>(std::max<std::int64_t>(1, tp));
  const double ht = h / static_cast<double>(std::max<std::int64_t>(1, tp));
  switch (ce) {
    case core::CrossEntropy::kEager: return t * (2 * h + (tp > 1 ? 16.0 : 12.0) * v);
    case core::CrossEntropy::kCompiled: return t * (2 * h + 4 * v);
    // transformer_engine/pytorch/cross_entropy.py CrossEntropyFunction saves its 16-bit input
    // (the logits, 2 bytes a vocab entry) and a few fp32 numbers a token.
    case core::CrossEntropy::kTe: return t * (4 * ht + 2 * v);
    case core::CrossEntropy::kFused: break;
  }
  return t * (4 * ht + 4 * v);
}

bool shards_params(core::DataParallel dp) {
  return dp == core::DataParallel::kFsdp || dp == core::DataParallel::kZero3 || dp == core::DataParallel::kHsdp;
}

bool fsdp2_buffers(const core::Plan& plan) {
  if (core::fsdp_runtime(plan) != core::FsdpRuntime::kFsdp2) return false;
  return !(plan.training && plan.training->stack_given && plan.training->stack == core::Stack::kFsdp1);
}

namespace {

// NCCL's buffers for the communicators in `roles` (role name, dims; duplicates already dropped).
double communicator_buffers(const core::Mesh& mesh, const std::vector<core::RoleGroups>& roles,
                            std::int64_t gpus_per_node, bool nvls) {
  // One receive connection per ring channel, each with LL (8 lines x 512 threads x 8 steps x 16
  // bytes), LL128 (120 x 640 x 8 x 8 bytes) and Simple (4 MiB) buffers.
  constexpr double kRingConnection = 512.0 * 1024 + 120.0 * 640 * 8 * 8 + 4.0 * kMiB;
  double total = 0;
  for (const core::RoleGroups& r : roles) {
    std::int64_t n = 1;
    for (const std::string& d : r.dims) n *= mesh.size(d);
    if (n <= 1) continue;
    const core::Placement place = core::placement_of(mesh, r.dims, gpus_per_node);
    if (r.role == "pp" || r.role == "ep") {
      // Point-to-point (pipeline send/recv, expert all-to-all) runs the Simple protocol only, in
      // chunks of 512 KiB over NVLink and 128 KiB over the network, NCCL_STEPS (8) deep, on 2
      // channels per peer.
      const double peers = r.role == "pp" ? 2.0 : static_cast<double>(n - 1);
      total += peers * 2 * (place.crosses_nodes() ? 1.0 : 4.0) * kMiB;
      continue;
    }
    total += (place.crosses_nodes() ? 16.0 : 32.0) * kRingConnection;
    if (!place.crosses_nodes() && n > 2 && nvls) {
      total += 16.0 * 2 * kMiB * static_cast<double>(place.ranks_per_node);  // NVLS
    }
  }
  return total;
}

void append_number(std::string& out, std::int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
  out += ',';
}

// Everything sync_groups reads: core::plan_roles's inputs (the mesh's dims and sizes, the plan's
// data-parallel strategy, fsdp / replicate dims and expert tp; core/mesh/roles.cc), the node size
// and whether the GPU has NVLS (communicator_buffers).
std::string sync_key(const core::Plan& plan, const core::Mesh& mesh) {
  const core::Parallelism& par = plan.parallelism;
  std::string key;
  key.reserve(96);
  append_number(key, static_cast<int>(core::effective_data_parallel(plan, mesh)));
  append_number(key, par.etp.value_or(-1));
  append_number(key, core::link_domain(plan.cluster));
  key += plan.cluster.gpu.name == "cpu" ? 'c' : plan.cluster.gpu.fp8_tflops > 0 ? 'n' : '-';
  for (int i = 0; i < mesh.ndims(); ++i) {
    key += mesh.dims()[i];
    key += '=';
    append_number(key, mesh.sizes()[i]);
  }
  for (const auto* dims : {&par.fsdp_dims, &par.replicate_dims}) {
    key += '|';
    if (!*dims) continue;
    for (const std::string& d : **dims) {
      key += d;
      key += ',';
    }
  }
  return key;
}

}  // namespace

SyncGroups sync_groups(const core::Plan& plan, const core::Mesh& mesh) {
  thread_local std::unordered_map<std::string, SyncGroups> memo;
  std::string key = sync_key(plan, mesh);
  if (const auto it = memo.find(key); it != memo.end()) return it->second;
  SyncGroups g;
  g.experts = core::expert_degrees(plan, mesh);
  g.dense_dp = mesh.groups(core::param_sync_dims(plan, mesh, "dp", true)).group_size();
  g.experts_dp = mesh.groups(core::param_sync_dims(plan, mesh, "dp", false)).group_size();
  g.dense_fsdp = mesh.groups(core::param_sync_dims(plan, mesh, "fsdp", true)).group_size();
  g.experts_fsdp = mesh.groups(core::param_sync_dims(plan, mesh, "fsdp", false)).group_size();
  const core::GpuSpec& gpu = plan.cluster.gpu;
  if (gpu.name != "cpu") {
    std::set<std::vector<std::string>> seen;
    std::vector<core::RoleGroups> roles;
    for (core::RoleGroups& r : core::plan_roles(plan, mesh)) {
      if (r.dims.empty() || !seen.insert(r.dims).second) continue;
      roles.push_back(std::move(r));
    }
    g.nccl_buffers = communicator_buffers(mesh, roles, core::link_domain(plan.cluster), gpu.fp8_tflops > 0);
  }
  if (memo.size() >= 4096) memo.clear();
  memo.emplace(std::move(key), g);
  return g;
}

void allocator_view(const core::Plan& plan, const core::Mesh& mesh, const core::Schedule& s, const SyncGroups& g,
                    Memory& m) {
  const core::Training tr = plan.training.value_or(core::Training{});
  m.workspaces = to_bytes(cublas_workspaces(plan.cluster.gpu));
  m.peak_allocated += m.workspaces;
  m.persistent += m.workspaces;
  double pool = 0;
  if (plan.model && shards_params(s.data_parallel) && fsdp2_buffers(plan)) {
    // The copy-in stream's segments hold its two largest consecutive gathers, the root (the
    // first unit of the forward) with the first block, or two blocks; one block's buffer is live
    // at the peak and counted as allocated (sim/memory.cc).
    const core::Degrees d = core::degrees(mesh);
    const core::RankParams rp = core::rank_params(*plan.model, d.pp, d.tp, g.experts.ep, g.experts.etp);
    const std::int64_t group = g.dense_fsdp;
    if (group > 1) {
      const double block = std::max(rp.dense_layers > 0 ? rp.dense_layer : 0.0,
                                    rp.moe_layers > 0 ? rp.moe_layer_dense + rp.moe_layer_experts : 0.0);
      const double bp = core::dtype_bytes(tr.param_dtype);
      pool = std::max(rp.root, block) * bp;
    }
  }
  m.gather_pool = to_bytes(pool);
  m.cuda_context = plan.cluster.gpu.name == "cpu" ? 0 : to_bytes(kCudaContextBytes);
  m.nccl_buffers = to_bytes(g.nccl_buffers);
  m.fragmentation = to_bytes(kFragmentation * static_cast<double>(std::max<std::int64_t>(0, m.peak_allocated - m.persistent)));
  m.peak_reserved = reserved_at(m, kFragmentation);
  m.peak = m.peak_allocated + m.gather_pool + m.fragmentation + m.cuda_context + m.nccl_buffers;
  m.required = m.peak_allocated + m.fragmentation + m.cuda_context + m.nccl_buffers;
}

std::int64_t reserved_at(const Memory& m, double f) {
  const double dynamic = static_cast<double>(std::max<std::int64_t>(0, m.peak_allocated - m.persistent));
  const double resident = static_cast<double>(m.peak_allocated) + f * dynamic;
  const double cached = resident + static_cast<double>(m.gather_pool);
  if (m.capacity <= 0) return to_bytes(cached);
  const double room = static_cast<double>(m.capacity - m.cuda_context - m.nccl_buffers);
  return to_bytes(std::min(cached, std::max(resident, room)));
}

}  // namespace planck::sim
