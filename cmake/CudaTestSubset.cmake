# What a CUDA build compiles of test/ and perf/: the programs its GPU tests run, or everything
# (HPCTRAIN_CUDA_ALL_TESTS). Host builds always build every test and benchmark.
#
# Note [CUDA test subset]: a CUDA build runs only its `cuda`- and `gpu`-labelled tests: CI has no GPU
# and runs `ctest -L cuda` there (the host fallback, cross-build checkpoints, the half GEMM and cuDNN
# programs' host paths), and the GPU proof carries those programs to a GPU node (scripts/gpu-bundle).
# Every other test program is the host build's business, and under nvcc_wrapper each of its ~115
# translation units costs several seconds of CPU (about 6 min of a cold CI on 2 cores) for binaries
# nothing runs. So by default a CUDA build leaves every other target of test/ and perf/ out of `all`
# (still defined: `cmake --build build-cuda --target test_layers` builds one) and marks its ctest
# tests DISABLED, so a plain `ctest` there lists them as not run instead of failing on a missing
# program. The kept targets are those the test helpers of test/CMakeLists.txt register with a `cuda`
# or `gpu` label (hpctrain_test, hpctrain_program_test, hpctrain_gpu_test): no hand-kept list. A
# `cuda`-labelled test whose program is left out fails `ctest -L cuda` with the missing executable,
# and scripts/gpu-bundle stops on a missing GPU test program, so a wrong label cannot pass silently.
# The library, the apps and the examples are always built whole for CUDA. Default OFF: whoever builds
# for a GPU node wants `train` and the GPU proof, not ~110 test programs the host build runs already.
if(Kokkos_ENABLE_CUDA)
  option(HPCTRAIN_CUDA_ALL_TESTS
         "CUDA builds: also build every test program and benchmark (OFF: only those of the cuda/gpu ctest labels)" OFF)
  if(HPCTRAIN_CUDA_ALL_TESTS)
    set(HPCTRAIN_CUDA_TEST_SUBSET OFF)
  else()
    set(HPCTRAIN_CUDA_TEST_SUBSET ON)
    message(STATUS "hpctrain: CUDA build of the cuda/gpu-labelled tests only (HPCTRAIN_CUDA_ALL_TESTS=ON builds all)")
  endif()
else()
  set(HPCTRAIN_CUDA_TEST_SUBSET OFF)
endif()

# hpctrain_keep_for_cuda(TARGET LABELS...): TARGET stays in a CUDA build's `all` when LABELS has
# cuda or gpu (called by the test helpers; hpctrain_gpu_test passes gpu).
function(hpctrain_keep_for_cuda target)
  if("cuda" IN_LIST ARGN OR "gpu" IN_LIST ARGN)
    set_property(GLOBAL APPEND PROPERTY HPCTRAIN_CUDA_KEPT_TARGETS ${target})
  endif()
endfunction()

# hpctrain_cuda_test_subset(): at the end of a directory's CMakeLists.txt (test/, perf/), applies
# Note [CUDA test subset] to the targets and tests that directory defined.
function(hpctrain_cuda_test_subset)
  if(NOT HPCTRAIN_CUDA_TEST_SUBSET)
    return()
  endif()
  get_property(kept GLOBAL PROPERTY HPCTRAIN_CUDA_KEPT_TARGETS)
  get_property(targets DIRECTORY PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target ${targets})
    if(NOT target IN_LIST kept)
      set_property(TARGET ${target} PROPERTY EXCLUDE_FROM_ALL TRUE)
    endif()
  endforeach()
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(test ${tests})
    get_test_property(${test} LABELS labels)
    if(NOT ("cuda" IN_LIST labels OR "gpu" IN_LIST labels))
      set_tests_properties(${test} PROPERTIES DISABLED TRUE)
    endif()
  endforeach()
endfunction()
