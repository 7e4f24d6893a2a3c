// libplanck_mpi.so: the OpenMPI backend behind exec/mpi_plugin.h. Built with -fvisibility=hidden:
// planck_mpi_plugin_v1 is its only exported symbol.

#include <mpi.h>

#include <string>

#include "exec/mpi/world.h"
#include "exec/mpi_plugin.h"
#include "planck/config.h"

namespace {

using planck::exec::MpiStarted;

planck::core::Result<MpiStarted> start(bool force_tcp) {
  MpiStarted out;
  out.settings = planck::exec::mpi::configure(force_tcp);
  auto w = planck::exec::mpi::init(nullptr, nullptr);
  if (!w) return w.status();
  // Ranks sharing this host: one host <=> every rank shares it.
  MPI_Comm local = MPI_COMM_NULL;
  if (MPI_Comm_split_type((*w)->handle(), MPI_COMM_TYPE_SHARED, (*w)->rank(), MPI_INFO_NULL, &local) == MPI_SUCCESS) {
    MPI_Comm_rank(local, &out.local_rank);
    MPI_Comm_size(local, &out.local_size);
    MPI_Comm_free(&local);
  }
  out.world = std::move(*w);
  return out;
}

std::string built_with() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  std::string v(version, static_cast<std::size_t>(length > 0 ? length : 0));
  const auto comma = v.find(',');  // "Open MPI v4.1.4, package: ..."
  return comma == std::string::npos ? v : v.substr(0, comma);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const planck::exec::MpiPlugin* planck_mpi_plugin_v1() {
  static const std::string with = built_with();
  static const planck::exec::MpiPlugin plugin = [] {
    planck::exec::MpiPlugin p;
    p.abi = planck::exec::kMpiPluginAbi;
    p.planck_version = PLANCK_VERSION;
    p.built_with = with.c_str();
    p.start = &start;
    p.finalize = &planck::exec::mpi::finalize;
    return p;
  }();
  return &plugin;
}
