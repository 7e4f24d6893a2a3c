# Fails when a source file includes a part its folder may not depend on (docs/architecture.md).
# Run at every build by the `layering` target (CMakeLists.txt), which passes:
#   ROOT    the source tree
#   LAYERS  "folder=allowed,allowed,...|folder=..." (folders from the repository root; a file
#           belongs to the longest folder that prefixes its path)
# Included paths are read from `#include "a/b..."` lines and reduced to their part: the longest
# declared folder prefixing them (core/plan, import/formats), the top folder otherwise. "planck/config.h" (generated) is allowed everywhere.
# The scan globs on purpose: it must see files no target lists yet.

string(REPLACE "|" ";" layers "${LAYERS}")
set(folders "")
foreach(entry IN LISTS layers)
  string(REGEX MATCH "^([^=]+)=(.*)$" _ "${entry}")
  set(folder "${CMAKE_MATCH_1}")
  string(REPLACE "," ";" allowed "${CMAKE_MATCH_2}")
  list(APPEND folders "${folder}")
  set("allowed_${folder}" ${allowed} planck)
endforeach()

set(errors "")
foreach(folder IN LISTS folders)
  file(GLOB_RECURSE files "${ROOT}/${folder}/*.h" "${ROOT}/${folder}/*.cc")
  foreach(file IN LISTS files)
    file(RELATIVE_PATH rel "${ROOT}" "${file}")
    # The file's own folder: the longest declared folder prefixing it (core/check over core).
    set(owner "")
    foreach(f IN LISTS folders)
      string(LENGTH "${f}" n)
      string(LENGTH "${owner}" m)
      if(rel MATCHES "^${f}/" AND n GREATER m)
        set(owner "${f}")
      endif()
    endforeach()
    if(NOT owner STREQUAL folder)
      continue()
    endif()
    file(STRINGS "${file}" includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"[^\"]+\"")
    foreach(line IN LISTS includes)
      string(REGEX MATCH "\"([^\"]+)\"" _ "${line}")
      set(path "${CMAKE_MATCH_1}")
      # The part: the longest declared folder prefixing the path (core/plan, import/formats),
      # else its top folder.
      set(part "")
      foreach(f IN LISTS folders)
        string(LENGTH "${f}" n)
        string(LENGTH "${part}" m)
        if(path MATCHES "^${f}/" AND n GREATER m)
          set(part "${f}")
        endif()
      endforeach()
      if(part STREQUAL "")
        if(path MATCHES "^([a-z_]+)/")
          set(part "${CMAKE_MATCH_1}")
        else()
          continue()
        endif()
      endif()
      list(FIND "allowed_${folder}" "${part}" at)
      if(at EQUAL -1)
        string(APPEND errors "  ${rel}: includes \"${path}\", but ${folder}/ may depend only on: ${allowed_${folder}}\n")
      endif()
    endforeach()
  endforeach()
endforeach()

if(errors)
  message(FATAL_ERROR "wrong-way includes (the allowed table is PLANCK_LAYERS in CMakeLists.txt; docs/architecture.md):\n${errors}")
endif()
