# `cmake --install` and the Debian packages (docs/ci.md, "Install planck").
#
#   bin/planck                        the CPU-only binary (links no CUDA and no MPI library)
#   lib/planck/libplanck_mpi.so       the MPI plugin (exec, calibrate, bench), when built
#   lib/planck/libplanck_gpu.so       the GPU plugin (NCCL backend, cuBLAS timer), when built
#   share/planck/plans/               the example plans
#   share/planck/python/              planck_observe.py (the live torch.distributed reader)
#   share/doc/planck/                 README.md and docs/
#
# `cpack -G DEB` (run in the build tree) writes two packages: planck_<v>_<arch>.deb and, when the
# plugin was built, planck-gpu_<v>_<arch>.deb. dpkg-shlibdeps derives each one's Depends from the
# libraries it links (Graphviz, opened with dlopen, is named explicitly); a library no Debian package owns (NVIDIA's CUDA and NCCL installed from a
# tarball into /usr/local/cuda, as on these machines) is named in the package description instead.
install(TARGETS planck RUNTIME DESTINATION bin COMPONENT planck)
if(TARGET planck_mpi)
  install(TARGETS planck_mpi LIBRARY DESTINATION lib/planck COMPONENT planck)
endif()
if(TARGET planck_gpu)
  install(TARGETS planck_gpu LIBRARY DESTINATION lib/planck COMPONENT gpu)
endif()
install(DIRECTORY plans/ DESTINATION share/planck/plans COMPONENT planck)
install(FILES python/planck_observe.py DESTINATION share/planck/python COMPONENT planck)
install(FILES README.md DESTINATION share/doc/planck COMPONENT planck)
install(DIRECTORY docs/ DESTINATION share/doc/planck/docs COMPONENT planck)

set(CPACK_PACKAGE_NAME planck)
set(CPACK_PACKAGE_VENDOR "planck")
set(CPACK_PACKAGE_CONTACT "planck maintainers <planck@localhost>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "check, predict and measure distributed-training layouts")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PLANCK_PACKAGE_NAME planck)
set(CPACK_COMPONENT_PLANCK_DESCRIPTION
    "planck verify / simulate / enumerate / render / report / diff / import, and exec over MPI.\n CPU only: it links no CUDA library.")
set(CPACK_DEBIAN_PLANCK_PACKAGE_SUGGESTS "openmpi-bin, python3, planck-gpu")
# Graphviz's libraries are opened with dlopen (viz/CMakeLists.txt), so dpkg-shlibdeps does not
# see them: the packages that own them are named here (Debian 12: libgvc6, libcgraph6), and CPack
# appends what dpkg-shlibdeps finds.
set(planck_depends "")
foreach(lib ${PLANCK_GRAPHVIZ_LIBS})
  get_filename_component(real ${lib} REALPATH)
  execute_process(COMMAND dpkg -S ${real} OUTPUT_VARIABLE owner RESULT_VARIABLE rc ERROR_QUIET)
  if(rc EQUAL 0)
    string(REGEX REPLACE "[:,].*" "" owner "${owner}")
    list(APPEND planck_depends ${owner})
  endif()
endforeach()
list(REMOVE_DUPLICATES planck_depends)
list(JOIN planck_depends ", " CPACK_DEBIAN_PLANCK_PACKAGE_DEPENDS)
set(CPACK_COMPONENTS_ALL planck)
if(TARGET planck_gpu)
  list(APPEND CPACK_COMPONENTS_ALL gpu)
  set(CPACK_DEBIAN_GPU_PACKAGE_NAME planck-gpu)
  # Which package (if any) owns each CUDA library the plugin links: those become Depends through
  # dpkg-shlibdeps; the others are named in the description.
  set(gpu_libs ${NCCL_LIBRARY})
  foreach(t CUDA::cudart CUDA::cublas)
    get_target_property(loc ${t} IMPORTED_LOCATION)
    if(loc)
      list(APPEND gpu_libs ${loc})
    endif()
  endforeach()
  set(unowned "")
  foreach(lib ${gpu_libs})
    get_filename_component(real ${lib} REALPATH)
    execute_process(COMMAND dpkg -S ${real} RESULT_VARIABLE owned OUTPUT_QUIET ERROR_QUIET)
    if(NOT owned EQUAL 0)
      get_filename_component(name ${real} NAME)
      string(APPEND unowned " ${name}")
    endif()
  endforeach()
  set(CPACK_DEBIAN_GPU_PACKAGE_DEPENDS "planck (= ${PROJECT_VERSION})")
  set(CPACK_COMPONENT_GPU_DESCRIPTION
      "planck's GPU plugin: exec/calibrate/bench over NCCL, calibrate --compute with cuBLAS.\n Loaded on demand by planck; needs an NVIDIA driver and these libraries on the library path\n (not from a Debian package on the build host):${unowned}")
endif()
include(CPack)
