# The io layer: weights files and their errors, long attributes, text tables, and seeing a run.
# (Included by test/CMakeLists.txt: paths are relative to test/, tests run in build/test.)
hpctrain_test(test_data_errors SOURCES io/test_data_errors.cpp LIBS ${HPCTRAIN_TEST_LIBS} LABELS mpi)
hpctrain_test(test_long_attributes SOURCES io/test_long_attributes.cpp LIBS ${HPCTRAIN_TEST_LIBS} RANKS 1 LABELS unit)
hpctrain_test(test_text_tables SOURCES io/test_text_tables.cpp LIBS hpctrain_io RANKS 1 LABELS unit gbdt)
# Compressed text tables (Note [compressed text]): gzip, zstd, bzip2, xz read as the plain file, rows
# from anywhere through the restart points (xz's at blocks: a read from the middle does not decode from
# the top); damaged xz blocks refused; names say the format through .gz/.zst/.bz2/.xz.
hpctrain_test(test_compressed_text SOURCES io/test_compressed_text.cpp LIBS hpctrain_io hpctrain_compression RANKS 1
              LABELS unit)
# A contiguous dataset written in pieces equals one write byte for byte; the spool files behind it.
hpctrain_test(test_hdf5_pieces SOURCES io/test_hdf5_pieces.cpp LIBS hpctrain_io RANKS 1 LABELS unit)
# Seeing a run (issue 11): TensorBoard event encoding, the trace recorder, the progress line.
hpctrain_test(test_observability SOURCES io/test_tensorboard.cpp core/test_trace.cpp core/test_progress.cpp
              LIBS hpctrain_io RANKS 1 LABELS unit)
# One 2-rank run with metrics_file, tensorboard_dir, trace_file and checkpoints on; three checks
# read its outputs: TensorBoard's own reader against the metrics (skipped without tensorboard), the
# traces' nesting per rank, and the loss-curve PNG (skipped without matplotlib).
set(HPCTRAIN_OBSERVE_DIR ${CMAKE_CURRENT_BINARY_DIR}/scratch_observe)
add_test(NAME observe_run COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/observe_run.sh $<TARGET_FILE:train>
         ${MPIEXEC_EXECUTABLE} ${HPCTRAIN_OBSERVE_DIR})
set_tests_properties(observe_run PROPERTIES ENVIRONMENT "${HPCTRAIN_TEST_ENV}" TIMEOUT 120 PROCESSORS 2
                     FIXTURES_SETUP observe_run LABELS integration WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
add_test(NAME tensorboard_readback COMMAND ${HPCTRAIN_REFERENCE_PYTHON}
         ${CMAKE_CURRENT_SOURCE_DIR}/python/tensorboard_readback.py ${HPCTRAIN_OBSERVE_DIR}/tb
         ${HPCTRAIN_OBSERVE_DIR}/metrics.jsonl)
add_test(NAME trace_timeline COMMAND ${HPCTRAIN_REFERENCE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/trace_check.py
         ${HPCTRAIN_OBSERVE_DIR}/trace.rank0.json ${HPCTRAIN_OBSERVE_DIR}/trace.rank1.json)
add_test(NAME plot_metrics_smoke COMMAND ${HPCTRAIN_REFERENCE_PYTHON}
         ${CMAKE_CURRENT_SOURCE_DIR}/python/plot_metrics_smoke.py ${PROJECT_SOURCE_DIR}
         ${HPCTRAIN_OBSERVE_DIR}/metrics.jsonl ${HPCTRAIN_OBSERVE_DIR}/loss.png)
set_tests_properties(tensorboard_readback trace_timeline plot_metrics_smoke PROPERTIES
                     FIXTURES_REQUIRED observe_run SKIP_RETURN_CODE 77 LABELS integration TIMEOUT 60)
set_tests_properties(tensorboard_readback PROPERTIES LABELS "integration;parity")
