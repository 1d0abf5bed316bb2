# The in-situ library (src/capi, src/insitu): C, Fortran and device-array programs, the library against `train`, install.
# (Included by test/CMakeLists.txt: paths are relative to test/, tests run in build/test.)
# The C API from a C program, at 1 and 2 ranks.
add_executable(test_capi capi/test_capi.c)
target_link_libraries(test_capi PRIVATE hpctrain::hpctrain m)
hpctrain_program_test(test_capi RANKS 1 2 TIMEOUT 120 LABELS "mpi;capi")
# Training on a split communicator while the other rank keeps simulating (2 ranks).
add_executable(test_capi_split capi/test_capi_split.c)
target_link_libraries(test_capi_split PRIVATE hpctrain::hpctrain m)
hpctrain_program_test(test_capi_split RANKS 2 TIMEOUT 60 LABELS "mpi;capi")
# The library against `train`: bitwise the same parameters (mlp and diffusion, 1 and 2 ranks).
hpctrain_test(test_insitu_equivalence SOURCES capi/test_insitu_equivalence.cpp LIBS hpctrain_capi_static
              LABELS "mpi;capi")
hpctrain_test(test_insitu_shard SOURCES capi/test_insitu_shard.cpp LIBS hpctrain_capi_static LABELS "mpi;capi")
# A checkpoint's stored configuration: keys it lacks take the deck's value, recorded ones must match.
hpctrain_test(test_insitu_checkpoint_config SOURCES capi/test_insitu_checkpoint_config.cpp LIBS hpctrain_capi_static
              RANKS 1 LABELS "unit;capi")
# init_weights: the model starts as train's run does (an mlp file's statistics, the fine-tuning note).
hpctrain_test(test_insitu_init_weights SOURCES capi/test_insitu_init_weights.cpp LIBS hpctrain_capi_static RANKS 1
              LABELS "unit;capi")
hpctrain_test(test_insitu_device_arrays SOURCES capi/test_insitu_device_arrays.cpp LIBS hpctrain_capi_static RANKS 1
              LABELS "unit;capi")
# Install, then build and run programs against the installed package (CMake config and pkg-config).
add_test(NAME capi_install_consumer
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/capi/install_consumer.sh ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR}
                 ${CMAKE_CURRENT_BINARY_DIR}/scratch_install ${MPIEXEC_EXECUTABLE})
set_tests_properties(capi_install_consumer PROPERTIES ENVIRONMENT "${HPCTRAIN_TEST_ENV};OMP_NUM_THREADS=1"
                     TIMEOUT 180 LABELS "capi;install"
                     PASS_REGULAR_EXPRESSION "consumer \\(C\\) ok.*consumer \\(C\\) ok")
# The Fortran module's generic interfaces (when Fortran is enabled), at 1 and 2 ranks.
if(HPCTRAIN_HAS_FORTRAN)
  add_executable(test_fortran capi/test_fortran.f90)
  target_link_libraries(test_fortran PRIVATE hpctrain::hpctrain_fortran MPI::MPI_Fortran)
  hpctrain_program_test(test_fortran RANKS 1 2 TIMEOUT 60 LABELS "mpi;capi")
endif()
# Device (cudaMalloc) arrays through the C API: CUDA builds only; exits 77 (skipped) without a GPU.
if(Kokkos_ENABLE_CUDA)
  find_package(CUDAToolkit REQUIRED)
  add_executable(test_capi_device capi/test_capi_device.c)
  target_link_libraries(test_capi_device PRIVATE hpctrain::hpctrain CUDA::cudart m)
  hpctrain_program_test(test_capi_device RANKS 1 TIMEOUT 120 LABELS "cuda;gpu" NEEDS_GPU)
endif()
# A host without MPI: the library initialises and finalises it.
add_executable(test_capi_owns_mpi capi/test_capi_owns_mpi.c)
target_link_libraries(test_capi_owns_mpi PRIVATE hpctrain::hpctrain)
hpctrain_program_test(test_capi_owns_mpi RANKS 2 TIMEOUT 60 LABELS "mpi;capi")
