#include "exec/mpi/world.h"

#include <cstdlib>
#include <string>

namespace planck::exec::mpi {
namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return (v && *v) ? v : nullptr;
}

// Sets OMPI_MCA_<param>=value unless already set; returns the effective value.
std::string pin(const std::string& param, const std::string& value, Settings* s) {
  const std::string var = "OMPI_MCA_" + param;
  if (const char* have = env(var.c_str())) {
    if (value != have) s->notes.push_back(var + "=" + have + " kept from the environment (planck would set " + value + ")");
    return have;
  }
  setenv(var.c_str(), value.c_str(), 1);
  return value;
}

// One host when the launcher says so; a singleton run (no launcher variables) is one host too.
bool single_host() {
  if (const char* local = env("OMPI_COMM_WORLD_LOCAL_SIZE")) {
    const char* world = env("OMPI_COMM_WORLD_SIZE");
    return world && std::string(local) == world;
  }
  if (const char* nodes = env("SLURM_NNODES")) return std::string(nodes) == "1";
  return true;
}

struct Algo {
  const char* op;        // core op name
  const char* param;     // coll_tuned parameter
  const char* id;        // OpenMPI 4.1 algorithm number (ompi_info --param coll tuned --level 9)
  const char* name;
};
constexpr Algo kAlgorithms[] = {
    {"all_reduce", "coll_tuned_allreduce_algorithm", "4", "ring"},
    {"all_gather", "coll_tuned_allgather_algorithm", "4", "ring"},
    {"reduce_scatter", "coll_tuned_reduce_scatter_algorithm", "3", "ring"},
    {"all_to_all", "coll_tuned_alltoall_algorithm", "2", "pairwise"},
    {"broadcast", "coll_tuned_bcast_algorithm", "3", "pipeline"},
};

}  // namespace

Settings configure(bool force_tcp) {
  Settings s;
  pin("coll_tuned_use_dynamic_rules", "1", &s);
  for (const Algo& a : kAlgorithms) {
    const std::string got = pin(a.param, a.id, &s);
    s.algorithms.push_back({a.op, got == a.id ? a.name : "coll_tuned algorithm " + got});
  }
  // The pipelined broadcast forwards 128 KiB segments down the chain instead of whole buffers.
  pin("coll_tuned_bcast_algorithm_segmentsize", "131072", &s);
  s.algorithms.push_back({"send_recv", "point-to-point"});
  if (force_tcp) {
    // ob1 is the PML that drives BTLs; UCX would bypass the TCP BTL altogether.
    pin("pml", "ob1", &s);
    const std::string btl = pin("btl", "tcp,self", &s);
    s.transport = btl == "tcp,self" || btl == "self,tcp" ? "tcp" : "btl " + btl;
    if (single_host()) {
      s.interfaces.push_back(pin("btl_tcp_if_include", "lo", &s));
    }
  }
  return s;
}

bool initialized() {
  int flag = 0;
  MPI_Initialized(&flag);
  int done = 0;
  MPI_Finalized(&done);
  return flag && !done;
}

core::Result<std::unique_ptr<Communicator>> init(int* argc, char*** argv) {
  if (!initialized()) {
    int provided = 0;
    // FUNNELED: only the main thread calls MPI; the watchdog only prints and exits.
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
      return core::Status::error("MPI_Init_thread failed: run under mpirun / srun with a working MPI");
    }
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  return std::make_unique<Communicator>(MPI_COMM_WORLD, false);
}

void finalize() {
  if (initialized()) MPI_Finalize();
}

}  // namespace planck::exec::mpi
