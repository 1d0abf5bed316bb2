# CUDA builds: the library and app sources that reach no Kokkos or CUDA header are compiled by the
# host compiler alone (nvcc_wrapper --host-only) instead of going through nvcc.
#
# Note [host-only sources]: under nvcc_wrapper every translation unit goes through nvcc, also the ~50
# of src/ and apps/ that include no Kokkos (file formats, decks, logs, I/O): 18 of them took 3.2 s CPU
# each under nvcc against 1.2 s host-only, about 50 s of a first CUDA build on 2 cores. Which files
# qualify is found at configure time, not kept by hand: cmake/kokkos_free_sources.py follows each
# source's #include lines through the project's headers and keeps a file only when it reaches no
# Kokkos, Kokkos Kernels or CUDA library header and never names __CUDACC__, __NVCC__, __CUDA_ARCH__ or
# a KOKKOS_ macro (anything conditional counts as included, so a doubt always means nvcc). Every file
# the host-only verdicts read is a configure dependency, so an edit that brings Kokkos into a
# host-only file re-runs the scan; a file that drops its last Kokkos include stays on nvcc until the
# next configure (slower only; CI's fresh clones always configure). Should a host-only file reach Kokkos all the same, its compile stops at once:
# Kokkos' Kokkos_Setup_Cuda.hpp fails with "KOKKOS_ENABLE_CUDA defined but the compiler is not
# defining the __CUDACC__ macro". Off with -DHPCTRAIN_CUDA_HOST_ONLY=OFF, and skipped when the
# compiler is not an nvcc_wrapper that knows --host-only or no Python 3 is found.

# hpctrain_cuda_host_only(DIR...): applies Note [host-only sources] to the targets of the source
# directories DIR (after they were added).
function(hpctrain_cuda_host_only)
  if(NOT Kokkos_ENABLE_CUDA OR NOT CMAKE_CXX_COMPILER MATCHES "nvcc_wrapper$")
    return()
  endif()
  option(HPCTRAIN_CUDA_HOST_ONLY "CUDA builds: compile the sources that reach no Kokkos or CUDA header without nvcc" ON)
  file(STRINGS "${CMAKE_CXX_COMPILER}" knows_host_only REGEX "^[ \t]*--host-only\\)")
  find_package(Python3 COMPONENTS Interpreter QUIET)
  if(NOT HPCTRAIN_CUDA_HOST_ONLY OR NOT knows_host_only OR NOT Python3_Interpreter_FOUND)
    return()
  endif()
  set(sources "")
  set(owners "")
  foreach(dir ${ARGN})
    get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(target ${targets})
      get_target_property(type ${target} TYPE)
      if(type STREQUAL "INTERFACE_LIBRARY")
        continue()
      endif()
      get_target_property(target_sources ${target} SOURCES)
      get_target_property(target_dir ${target} SOURCE_DIR)
      foreach(source ${target_sources})
        if(source MATCHES "\\.cpp$" AND NOT source MATCHES "^\\$<")
          cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY ${target_dir} NORMALIZE OUTPUT_VARIABLE path)
          list(APPEND sources ${path})
          list(APPEND owners "${target}|${path}")
        endif()
      endforeach()
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES sources)
  set(out ${PROJECT_BINARY_DIR}/host_only_sources.txt)
  set(read ${PROJECT_BINARY_DIR}/host_only_reads.txt)
  execute_process(COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/cmake/kokkos_free_sources.py ${out} ${read}
                          ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/src/capi ${PROJECT_BINARY_DIR}/generated
                          -- ${sources}
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cmake/kokkos_free_sources.py failed (${rc})")
  endif()
  file(STRINGS ${out} free)
  file(STRINGS ${read} reads)
  set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${reads})
  foreach(owner ${owners})
    string(REPLACE "|" ";" pair "${owner}")
    list(GET pair 0 target)
    list(GET pair 1 path)
    if(path IN_LIST free)
      set_property(SOURCE ${path} TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_OPTIONS --host-only)
    endif()
  endforeach()
  list(LENGTH free count)
  message(STATUS "hpctrain: ${count} sources reach no Kokkos or CUDA header: compiled host-only (Note [host-only sources])")
endfunction()
