# CUDA builds: the library's Kokkos sources are compiled in batches, one translation unit including
# several .cpp files of one library target, so nvcc parses Kokkos_Core.hpp once per batch.
#
# Note [CUDA batches]: under nvcc every translation unit pays 5-9 s of CPU for Kokkos_Core.hpp alone,
# most of a typical library file's compile (docs/perf-log/build-times.md). CMake's UNITY_BUILD would
# batch them, but its batch files #include the sources by absolute path, so a fresh clone in another
# folder (CI's) would miss ccache on every batch of every run. Ours name each source by its path under
# src/ (`#include "nn/conv.cpp"`, found through the layers' -I src), so a batch's text is the same in
# every clone and ccache's relative keys (CCACHE_BASEDIR = the clone, scripts/setup) hit across clones.
# A batch file is rewritten only when its text changes (file(CONFIGURE)), so a reconfigure rebuilds
# nothing. A batch is up to HPCTRAIN_CUDA_BATCH_SIZE files (8: a batch of 8 took a third of the CPU
# of its files alone, docs/perf-log/build-times.md) of one folder of one target, in path order (an
# edit recompiles its batch; a file added moves only its folder's batches). A folder's last file that
# would be left over joins the batch before it (9 files make one batch of 9, 17 make 8 and 9): alone
# it would pay for Kokkos_Core.hpp by itself. An even split (ceil(n / 8) batches of near-equal size)
# would leave no file alone but save nothing: it makes as many translation units. Stay alone: the
# host-only sources (Note [host-only sources]: they skip nvcc, so batching would only put them back
# under it), sources with flags, definitions or include directories of their own or marked
# SKIP_UNITY_BUILD_INCLUSION (with the reason, in src/CMakeLists.txt), the files that include
# hpctrain/version.hpp (the commit's hash: they miss ccache at every commit and would take their
# batch along), and sources outside src/. The host build (clang-tidy, the tests' compile commands)
# keeps one file per translation unit. Files of one batch share one translation unit: two
# files of one folder must not define the same name in an anonymous namespace or as `static`, and a
# .cpp #undefs the macros it defines and puts no `using namespace` at file scope. Nothing lists the
# files that break this: a clash is a compile error of the CUDA build (a redefinition or an ambiguous
# call), which CI runs; a file-local helper of the same name but another signature would overload
# silently, so such helpers get names of their own (a host build with the option on and
# -DHPCTRAIN_CUDA_BATCH_SIZE=1000 puts every folder in one batch to check). On in CUDA builds
# through nvcc_wrapper (-DHPCTRAIN_CUDA_BATCH=OFF for one file per unit); a host build may turn it on
# to look for clashes with g++.

# hpctrain_cuda_batch(DIR...): applies Note [CUDA batches] to the library targets of the source
# directories DIR (after they were added, and after hpctrain_cuda_host_only).
function(hpctrain_cuda_batch)
  set(default OFF)
  if(Kokkos_ENABLE_CUDA AND CMAKE_CXX_COMPILER MATCHES "nvcc_wrapper$")
    set(default ON)
  endif()
  option(HPCTRAIN_CUDA_BATCH "Compile the library's sources in batches of HPCTRAIN_CUDA_BATCH_SIZE (Note [CUDA batches])"
         ${default})
  set(HPCTRAIN_CUDA_BATCH_SIZE 8 CACHE STRING "Library files per translation unit when HPCTRAIN_CUDA_BATCH is on")
  if(NOT HPCTRAIN_CUDA_BATCH)
    return()
  endif()
  if(NOT HPCTRAIN_CUDA_BATCH_SIZE MATCHES "^[1-9][0-9]*$")
    message(FATAL_ERROR "HPCTRAIN_CUDA_BATCH_SIZE must be a whole number >= 1, not '${HPCTRAIN_CUDA_BATCH_SIZE}'")
  endif()
  set(src_dir ${PROJECT_SOURCE_DIR}/src)
  set(out_dir ${PROJECT_BINARY_DIR}/cuda_batch)
  set(own_properties COMPILE_OPTIONS COMPILE_DEFINITIONS COMPILE_FLAGS INCLUDE_DIRECTORIES GENERATED
                     HEADER_FILE_ONLY SKIP_UNITY_BUILD_INCLUSION SKIP_PRECOMPILE_HEADERS)
  set(batched 0)
  set(batches 0)
  foreach(dir ${ARGN})
    get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(target ${targets})
      get_target_property(type ${target} TYPE)
      get_target_property(includes ${target} INCLUDE_DIRECTORIES)
      if(NOT type MATCHES "^(STATIC|SHARED|OBJECT)_LIBRARY$" OR NOT src_dir IN_LIST includes)
        continue()
      endif()
      get_target_property(target_sources ${target} SOURCES)
      get_target_property(target_dir ${target} SOURCE_DIR)
      set(members "")
      foreach(source ${target_sources})
        if(NOT source MATCHES "\\.cpp$" OR source MATCHES "^\\$<")
          continue()
        endif()
        cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY ${target_dir} NORMALIZE OUTPUT_VARIABLE path)
        cmake_path(IS_PREFIX src_dir ${path} NORMALIZE under_src)
        set(alone ON)
        if(under_src)
          set(alone OFF)
        endif()
        foreach(property ${own_properties})
          get_source_file_property(value ${path} TARGET_DIRECTORY ${target} ${property})
          if(value)
            set(alone ON)
          endif()
        endforeach()
        if(NOT alone)
          # The commit's hash changes with every commit: its file recompiles in every CI run, alone.
          file(STRINGS ${path} version_include REGEX "^#include \"hpctrain/version.hpp\"")
          if(version_include)
            set(alone ON)
          endif()
        endif()
        if(NOT alone)
          cmake_path(RELATIVE_PATH path BASE_DIRECTORY ${src_dir} OUTPUT_VARIABLE relative)
          list(APPEND members ${relative})
        endif()
      endforeach()
      list(SORT members)
      # One folder's files at a time (a family, a layer's kernels): related files share a batch, and
      # a file added to a folder moves the batches of that folder only.
      set(folders "")
      foreach(relative ${members})
        cmake_path(GET relative PARENT_PATH folder)
        list(APPEND folders "${folder}")
      endforeach()
      list(REMOVE_DUPLICATES folders)
      set(index 0)
      foreach(folder ${folders})
        set(group "")
        foreach(relative ${members})
          cmake_path(GET relative PARENT_PATH parent)
          if(parent STREQUAL folder)
            list(APPEND group ${relative})
          endif()
        endforeach()
        list(LENGTH group size)
        if(size LESS 2)
          continue()  # a single file compiles as before
        endif()
        set(start 0)
        set(part 0)
        while(start LESS size)
          math(EXPR stop "${start} + ${HPCTRAIN_CUDA_BATCH_SIZE} - 1")
          math(EXPR after "${size} - 1 - ${stop}")
          if(after EQUAL 1 AND HPCTRAIN_CUDA_BATCH_SIZE GREATER 1)
            math(EXPR stop "${stop} + 1")  # the folder's last file joins this batch (Note [CUDA batches])
          elseif(stop GREATER_EQUAL size)
            math(EXPR stop "${size} - 1")
          endif()
          if(stop EQUAL start)
            break()  # HPCTRAIN_CUDA_BATCH_SIZE 1: one file per unit
          endif()
          set(text "// Generated by cmake/CudaBatch.cmake (Note [CUDA batches]): one translation unit, several sources.\n")
          foreach(i RANGE ${start} ${stop})
            list(GET group ${i} relative)
            string(APPEND text "#include \"${relative}\"\n")
            set_source_files_properties(${src_dir}/${relative} TARGET_DIRECTORY ${target} PROPERTIES HEADER_FILE_ONLY ON)
            math(EXPR batched "${batched} + 1")
          endforeach()
          string(REPLACE "/" "_" stem "${folder}")
          set(batch ${out_dir}/${target}/${stem}_${part}.cpp)
          file(CONFIGURE OUTPUT ${batch} CONTENT "${text}" @ONLY)
          target_sources(${target} PRIVATE ${batch})
          math(EXPR index "${index} + 1")
          math(EXPR part "${part} + 1")
          math(EXPR start "${stop} + 1")
        endwhile()
      endforeach()
      math(EXPR batches "${batches} + ${index}")
    endforeach()
  endforeach()
  message(STATUS "hpctrain: ${batched} library sources compiled in ${batches} batches (Note [CUDA batches])")
endfunction()
