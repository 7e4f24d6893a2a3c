#include "exec/launch/launch.h"

#include <cstdlib>
#include <vector>

#include "exec/gpu_plugin.h"
#include "exec/mpi_plugin.h"
#include "exec/socket_traffic.h"
#include "planck/config.h"

namespace planck::exec {

std::string built_backends() {
  std::string s;
  if (!mpi_plugin_path().empty()) s += "mpi (plugin " + mpi_plugin_path() + ")";
  if (!gpu_plugin_path().empty()) s += std::string(s.empty() ? "" : ", ") + "nccl (plugin " + gpu_plugin_path() + ")";
  return s.empty() ? "none" : s;
}

namespace {
const char* launcher_rank_variable() {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID", "PMI_RANK"}) {
    if (const char* v = std::getenv(var)) return v;
  }
  return nullptr;
}
}  // namespace

int launcher_rank() {
  const char* v = launcher_rank_variable();
  return v ? std::atoi(v) : 0;
}

bool under_launcher() { return launcher_rank_variable() != nullptr; }

core::Result<Launch> launch(const LaunchOptions& o) {
  std::string backend = o.backend;
  if (backend != "" && backend != "mpi" && backend != "nccl") {
    return core::Status::error("unknown backend '" + backend + "': use mpi or nccl");
  }
  // NCCL comes from the GPU plugin: asked for, it must load and see a GPU; by default it is used
  // when it loads and sees one, and MPI otherwise (a CPU host never maps a CUDA library).
  const GpuPlugin* gpu = nullptr;
  if (backend != "mpi" && !gpu_plugin_path().empty()) {
    auto p = load_gpu_plugin();
    if (p && (*p)->visible_gpus() > 0) gpu = *p;
    if (backend == "nccl" && !p) return core::Status::error("--backend nccl: " + p.message());
  }
  if (backend == "nccl" && !gpu) {
    if (gpu_plugin_path().empty()) return core::Status::error("--backend nccl: " + load_gpu_plugin().message());
    return core::Status::error("--backend nccl: no CUDA device is visible on this host (no GPU, or no driver): "
                               "run on GPU hosts, or use --backend mpi");
  }
  if (backend.empty()) backend = gpu ? "nccl" : "mpi";
  // Every backend starts its ranks through MPI, which lives in its own plugin (exec/mpi_plugin.h).
  auto mpi = load_mpi_plugin();
  if (!mpi) {
    if (!PLANCK_HAVE_MPI) {
      return core::Status::error("this planck was built without MPI, which every backend needs to start its ranks: "
                                 "apt-get install libopenmpi-dev openmpi-bin, then reconfigure");
    }
    return core::Status::error(mpi.message());
  }
  Launch L;
  L.backend = backend;
  auto started = (*mpi)->start(backend == "mpi" && o.force_tcp);
  if (!started) return started.status();
  const MpiSettings& settings = started->settings;
  L.single_host = started->local_size == started->world->size();
  if (backend == "mpi") {
    MpiInfo info;
    info.algorithms = settings.algorithms;
    info.transport = settings.transport;
    info.notes = settings.notes;
    L.mpi = info;
    if (settings.transport == "tcp") {
      L.link = L.single_host ? "loopback" : "net";
      L.traffic = tcp_socket_traffic();
      auto c = netdev_counter(settings.interfaces);
      if (c) {
        L.wire = std::move(*c);
      } else {
        L.wire_unavailable = c.message();
      }
    } else {
      L.link = L.single_host ? "shm" : "net";
      L.wire_unavailable = "MPI transport '" + settings.transport + "' is not TCP: no interface counter sees it";
      L.traffic_unavailable = "MPI transport '" + settings.transport +
                              "' is not TCP: per-peer bytes are read from TCP sockets (docs/exec.md)";
    }
    L.world = std::move(started->world);
    return L;
  }
  const int local_rank = started->local_rank;
  auto w = std::move(started->world);
  auto n = gpu->nccl_init(*w, local_rank, o.timeout);
  if (!n) return n.status();
  L.world = std::move(*n);
  L.bootstrap = std::move(w);
  L.link = L.single_host ? "nvlink" : "net";
  // The seam for a GPU source: an NCCL profiler plugin or NVML per-link counters implementing
  // exec::PeerTrafficSource would fill the same per-op record.
  L.traffic_unavailable = "NCCL: no per-peer traffic source (an NCCL profiler plugin or NVML per-link counters "
                          "would implement exec::PeerTrafficSource)";
  std::vector<std::unique_ptr<WireCounter>> parts;
  std::string why;
  if (auto c = nvml_counter(); c) parts.push_back(std::move(*c)); else why = c.message();
  if (auto c = infiniband_counter(); c) parts.push_back(std::move(*c)); else why += (why.empty() ? "" : "; ") + c.message();
  if (!parts.empty()) {
    L.wire = sum_counter(std::move(parts));
  } else {
    L.wire_unavailable = why;
  }
  return L;
}

void shutdown(Launch& launch) {
  launch.world.reset();
  launch.bootstrap.reset();
  // The plugin launch() loaded (finalize does nothing where MPI was never initialised).
  if (auto mpi = load_mpi_plugin(); mpi) (*mpi)->finalize();
}

}  // namespace planck::exec
