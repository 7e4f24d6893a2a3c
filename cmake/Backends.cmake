# Optional communication backends. Each option defaults to AUTO: ON when its dependencies are
# found. An explicit ON that cannot be satisfied fails configure with the package to install.
set(PLANCK_WITH_MPI AUTO CACHE STRING "MPI backend: AUTO, ON or OFF")
set(PLANCK_WITH_NCCL AUTO CACHE STRING "NCCL backend: AUTO, ON or OFF")

set(PLANCK_HAVE_MPI 0)
if(NOT PLANCK_WITH_MPI STREQUAL "OFF")
  # The CXX component: the project enables only C++, and FindMPI's C component needs the C
  # language. MPI_CXX_SKIP_MPICXX: planck calls the C API; the deprecated C++ bindings are not needed.
  set(MPI_CXX_SKIP_MPICXX ON)
  find_package(MPI COMPONENTS CXX QUIET)
  if(MPI_CXX_FOUND)
    set(PLANCK_HAVE_MPI 1)
  elseif(PLANCK_WITH_MPI STREQUAL "ON")
    message(FATAL_ERROR "PLANCK_WITH_MPI=ON but MPI was not found: apt-get install libopenmpi-dev openmpi-bin")
  endif()
endif()

set(PLANCK_HAVE_NCCL 0)
if(NOT PLANCK_WITH_NCCL STREQUAL "OFF")
  if(NOT CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_ROOT}/lib ${CUDAToolkit_ROOT}/lib64)
  endif()
  if(CUDAToolkit_FOUND AND NCCL_INCLUDE_DIR AND NCCL_LIBRARY AND PLANCK_HAVE_MPI)
    set(PLANCK_HAVE_NCCL 1)
  elseif(PLANCK_WITH_NCCL STREQUAL "ON")
    message(FATAL_ERROR "PLANCK_WITH_NCCL=ON but CUDA/NCCL (in /usr/local/cuda or CUDAToolkit_ROOT) "
                        "or MPI (libopenmpi-dev, used to bootstrap NCCL) was not found")
  endif()
endif()
message(STATUS "planck backends: MPI=${PLANCK_HAVE_MPI} NCCL=${PLANCK_HAVE_NCCL}")
