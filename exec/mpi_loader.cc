// Finds and loads libplanck_mpi.so (exec/mpi_plugin.h, exec/plugin_loader.h). RTLD_GLOBAL:
// OpenMPI opens its own components (btl, pml, coll) with dlopen, and they resolve libmpi's and
// libopen-pal's symbols globally.

#include <dlfcn.h>

#include <string>

#include "exec/mpi_plugin.h"
#include "exec/plugin_loader.h"
#include "planck/config.h"

namespace planck::exec {
namespace {

constexpr PluginSpec kMpi = {
    "libplanck_mpi.so", "PLANCK_MPI_PLUGIN", "planck_mpi_plugin_v1", "the MPI plugin",
    "install the planck package (it ships the plugin), or build planck where MPI is found: apt-get install "
    "libopenmpi-dev openmpi-bin, then reconfigure",
    RTLD_NOW | RTLD_GLOBAL};

}  // namespace

core::Result<const MpiPlugin*> load_mpi_plugin() {
  return load_plugin_table<MpiPlugin>(kMpi, kMpiPluginAbi, PLANCK_VERSION, "planck");
}

std::string mpi_plugin_path() { return plugin_path(kMpi); }

}  // namespace planck::exec
