// The world a Megatron-LM launch states (docs/import.md "World size"): torchrun's
// --nproc_per_node / --nnodes, mpirun's -np / --npernode, bcprun's -n / -p, the script's
// GPUS_PER_NODE / NNODES / WORLD_SIZE variables, else a Slurm script's #SBATCH lines.

#include <algorithm>
#include <exception>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/format.h"
#include "import/formats/shell_arith.h"
#include "import/formats/shell_script.h"
#include "import/megatron/args.h"

namespace planck::import {

ConfigWorld config_world(const MegatronLaunch& launch, const ShellScript& script, std::string_view text) {
  ConfigWorld cw;
  auto launcher_int = [&](const char* name) -> std::optional<std::int64_t> {
    auto it = launch.launcher.find(name);
    if (it == launch.launcher.end()) return std::nullopt;
    try {
      std::size_t used = 0;
      long long v = std::stoll(it->second.value, &used);
      return used == it->second.value.size() ? std::optional<std::int64_t>(v) : std::nullopt;
    } catch (const std::exception&) {
      return std::nullopt;
    }
  };
  cw.gpus_per_node = launcher_int("nproc-per-node");
  cw.nodes = launcher_int("nnodes");
  cw.source = "the torchrun flags";
  // torchrun (and python -m torch.distributed.run / .launch) takes --nproc-per-node from the flag,
  // else $PET_NPROC_PER_NODE, else "1" (torch/distributed/run.py, argparse action=env).
  const bool torchrun = std::any_of(launch.before.begin(), launch.before.end(), [](const ShellField& w) {
    const std::string base = w.text.substr(w.text.rfind('/') == std::string::npos ? 0 : w.text.rfind('/') + 1);
    return base == "torchrun" || w.text == "torch.distributed.run" || w.text == "torch.distributed.launch";
  });
  if (torchrun && cw.nodes && !cw.gpus_per_node && !launch.launcher.count("nproc-per-node")) {
    cw.gpus_per_node = shell_int(script, "PET_NPROC_PER_NODE");
    if (cw.gpus_per_node) {
      cw.source = "torchrun's --nnodes and $PET_NPROC_PER_NODE";
    } else {
      cw.gpus_per_node = 1;
      cw.source = "torchrun's --nnodes and its default --nproc-per-node";
      cw.per_node_defaulted = true;
      cw.default_line = launch.line;
    }
  }
  // mpirun / mpiexec (OpenMPI, MPICH, Intel MPI): -np / -n N ranks, --npernode / -npernode / -N / -ppn
  // ranks per node; one rank a GPU.
  const auto mpi = std::find_if(launch.before.begin(), launch.before.end(), [](const ShellField& w) {
    const std::string base = w.text.substr(w.text.rfind('/') == std::string::npos ? 0 : w.text.rfind('/') + 1);
    return base == "mpirun" || base == "mpiexec" || base == "mpiexec.hydra";
  });
  if (!cw.gpus_per_node && !cw.nodes && mpi != launch.before.end()) {
    std::optional<std::int64_t> ranks, per_node;
    for (auto it = mpi + 1; it + 1 < launch.before.end(); ++it) {
      const std::string& w = it->text;
      auto value = parse_shell_int((it + 1)->text);
      if (w == "-np" || w == "-n" || w == "--np" || w == "--n") ranks = value;
      if (w == "--npernode" || w == "-npernode" || w == "-N" || w == "-ppn" || w == "--ppn") per_node = value;
    }
    if (ranks || per_node) {
      cw.gpus_per_node = per_node;
      if (ranks && per_node && *per_node > 0 && *ranks % *per_node == 0) cw.nodes = *ranks / *per_node;
      if (ranks && !per_node) cw.world_size = ranks;
      cw.source = "mpirun's -np / --npernode";
    }
  }
  // DeepSpeed's launcher (deepspeed/launcher/runner.py@edaa722): --num_nodes N, --num_gpus (or
  // --num_accelerators) G per node, -i / --include HOST:SLOTS@HOST:SLOTS naming each host's GPUs.
  const auto ds = std::find_if(launch.before.begin(), launch.before.end(), [](const ShellField& w) {
    return w.text.substr(w.text.rfind('/') == std::string::npos ? 0 : w.text.rfind('/') + 1) == "deepspeed";
  });
  if (!cw.gpus_per_node && !cw.nodes && ds != launch.before.end()) {
    cw.nodes = launcher_int("num-nodes");
    cw.gpus_per_node = launcher_int("num-gpus") ? launcher_int("num-gpus") : launcher_int("num-accelerators");
    std::string include;
    if (auto it = launch.launcher.find("include"); it != launch.launcher.end()) include = it->second.value;
    for (auto it = ds + 1; include.empty() && it + 1 < launch.before.end(); ++it) {
      if (it->text == "-i") include = (it + 1)->text;
    }
    // "worker-0:0,1@worker-1:0,1": hosts split at '@', a host's GPU indices after ':'. A host
    // without indices uses all of its GPUs, a number the launch does not state.
    std::optional<std::int64_t> hosts = 0, slots;
    for (std::size_t at = 0; !include.empty() && at <= include.size();) {
      const std::size_t end = std::min(include.find('@', at), include.size());
      const std::string host = include.substr(at, end - at);
      *hosts += 1;
      const std::size_t colon = host.find(':');
      const std::int64_t n = colon == std::string::npos ? 0 : 1 + std::count(host.begin() + colon, host.end(), ',');
      if (*hosts == 1) slots = n;
      if (n == 0 || slots != n) slots = 0;  // all of a host's GPUs, or hosts of different counts
      at = end + 1;
    }
    if (!include.empty() && !cw.nodes) cw.nodes = hosts;
    if (!include.empty() && !cw.gpus_per_node && slots && *slots > 0) cw.gpus_per_node = slots;
    cw.source = "the deepspeed launcher's --num_nodes / --num_gpus / --include";
  }
  if (!cw.gpus_per_node && !cw.nodes && (script.launcher_nodes || script.launcher_per_node)) {
    cw.gpus_per_node = script.launcher_per_node;
    cw.nodes = script.launcher_nodes;
    cw.source = script.launcher + "'s -n / -p";
    cw.nodes_from_job = !cw.nodes;  // bcprun runs on every node of the job
  }
  auto from_variables = [&] {
    for (const char* v : {"GPUS_PER_NODE", "NPROC_PER_NODE", "NUM_GPUS_PER_NODE", "GPUS"}) {
      if (!cw.gpus_per_node) cw.gpus_per_node = shell_int(script, v);
    }
    for (const char* v : {"NNODES", "NUM_NODES", "NODES", "NODE_COUNT"}) {
      if (!cw.nodes) cw.nodes = shell_int(script, v);
    }
  };
  if (ds != launch.before.end() && (cw.nodes.has_value() != cw.gpus_per_node.has_value())) {
    from_variables();  // the launcher stated one of the two: the script's variables may give the other
    if (cw.nodes && cw.gpus_per_node) cw.source += " and the script's variables";
  }
  if (!cw.gpus_per_node && !cw.nodes) {
    cw.source = "the script's variables";
    from_variables();
    // srun starts #SBATCH --nodes x --ntasks-per-node ranks; a WORLD_SIZE the script only sets (alibaba/Megatron-LLaMA
    // LLaMA_13_slurm.sh @25306de: WORLD_SIZE=8 names the job, --nodes=512) reaches no rank through srun, and
    // Megatron takes its world from the environment (arguments.py:51, os.getenv("WORLD_SIZE")).
    const std::vector<std::string_view> lines = split_lines(text);
    const bool srun = std::any_of(lines.begin(), lines.end(), [](std::string_view l) {
      const std::size_t at = l.find_first_not_of(" \t");
      return at != std::string::npos && l.compare(at, 5, "srun ") == 0;
    });
    const SbatchRequest r = sbatch_request(lines);
    if (!(srun && r.nodes && r.tasks_per_node && !cw.gpus_per_node && !cw.nodes))
      cw.world_size = shell_int(script, "WORLD_SIZE");
  }
  if (!cw.gpus_per_node && !cw.nodes && !cw.world_size) {
    // A Slurm batch script run by srun: #SBATCH --nodes, and --ntasks-per-node ranks on each node
    // (one rank per task), else --gpus-per-node.
    const SbatchRequest r = sbatch_request(split_lines(text));
    cw.nodes = r.nodes;
    cw.gpus_per_node = r.tasks_per_node ? r.tasks_per_node : r.gpus_per_node;
    cw.source = core::join(r.from, ", ");
  }
  return cw;
}

std::optional<ShellField> rocm_variable(const ShellScript& script) {
  // ROCm's runtime (HSA_, HIP_, ROCR_), its collectives (RCCL_), libraries (MIOPEN_, ROCBLAS_,
  // HIPBLASLT_) and Transformer Engine's ROCm build (NVTE_CK_ selects its Composable Kernel
  // attention); PyTorch's TORCH_BLAS_PREFER_HIPBLASLT. None of them means anything to CUDA.
  static const char* const kPrefixes[] = {"HSA_",     "HIP_",     "ROCR_",      "RCCL_", "MIOPEN_",
                                          "ROCBLAS_", "NVTE_CK_", "HIPBLASLT_", "ROCM_", "TORCH_BLAS_PREFER_HIPBLASLT"};
  // The HIP runtime's (ROCm/clr rocclr/utils/flags.hpp) settings without a ROCm prefix.
  static const std::set<std::string> kNames = {"GPU_MAX_HW_QUEUES",        "GPU_MAX_HEAP_SIZE",
                                               "GPU_MAX_ALLOC_PERCENT",    "GPU_SINGLE_ALLOC_PERCENT",
                                               "GPU_DEVICE_ORDINAL",       "AMD_LOG_LEVEL",
                                               "AMD_SERIALIZE_KERNEL",     "AMD_SERIALIZE_COPY"};
  std::optional<ShellField> first;  // the name, and where it is set
  for (const auto& entry : script.vars) {  // not a structured binding: clang 14 cannot capture one
    const std::string& name = entry.first;
    // A shell array is the script's own (an argument list named HIP_PROF_ARGS): no runtime reads it.
    if (script.arrays.count(name)) continue;
    const auto is_prefix = [&](const char* p) { return name.rfind(p, 0) == 0; };
    if (std::none_of(std::begin(kPrefixes), std::end(kPrefixes), is_prefix) && !kNames.count(name)) continue;
    const int line = entry.second.empty() ? 0 : entry.second.front().line;
    if (!first || (line > 0 && (first->line == 0 || line < first->line))) first = ShellField{name, line};
  }
  return first;
}

}  // namespace planck::import
