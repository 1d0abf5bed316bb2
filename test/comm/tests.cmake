# The communication layer: collectives, the hierarchical all-reduce, the shared-memory reducer.
# (Included by test/CMakeLists.txt: paths are relative to test/, tests run in build/test.)
hpctrain_test(test_comm SOURCES comm/test_comm.cpp LIBS ${HPCTRAIN_TEST_LIBS} LABELS mpi)
# The hierarchical all-reduce on pretend nodes of 2 ranks (issue 20): 4 ranks are 2 nodes x 2.
hpctrain_test(test_hierarchical_allreduce SOURCES comm/test_hierarchical_allreduce.cpp LIBS ${HPCTRAIN_TEST_LIBS}
              RANKS 1 2 3 4 LABELS mpi)
hpctrain_test(test_shared_memory_reducer SOURCES comm/test_shared_memory_reducer.cpp LIBS ${HPCTRAIN_TEST_LIBS} RANKS 1 2 3
              LABELS mpi TIMEOUT 120)
# The hierarchical all-reduce in training: 4 ranks as 2 pretend nodes x 2 against the flat all-reduce.
add_test(NAME cli_hierarchical_train COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/hierarchical_train.sh $<TARGET_FILE:train>
         ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_hierarchical_train)
set_tests_properties(cli_hierarchical_train PROPERTIES ENVIRONMENT "${HPCTRAIN_TEST_ENV}" TIMEOUT 120 PROCESSORS 2
                     LABELS "cli;mpi" WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
# The progress board of the heartbeat (Note [stalled peers]): 3 ranks, so that two peers are named.
hpctrain_test(test_progress_board SOURCES comm/test_progress_board.cpp LIBS ${HPCTRAIN_TEST_LIBS} RANKS 1 2 3
              LABELS mpi TIMEOUT 60)
