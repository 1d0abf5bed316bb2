# The core and deck layers' suites: deck errors, log text, vector maths, launch helpers, host BLAS, JSON text,
# stop signals.
# (Included by test/CMakeLists.txt: paths are relative to test/, tests run in build/test.)
hpctrain_test(test_deck SOURCES deck/test_deck.cpp LIBS hpctrain_deck RANKS 1 LABELS unit)
hpctrain_test(test_log SOURCES core/test_log.cpp LIBS hpctrain_core RANKS 1 LABELS unit)
hpctrain_test(test_vector_math SOURCES core/test_vector_math.cpp LIBS hpctrain_core RANKS 1 LABELS unit)
hpctrain_test(test_launch_helpers SOURCES core/test_launch_helpers.cpp LIBS hpctrain_core RANKS 1 THREADS 1 2 LABELS unit)
hpctrain_test(test_blas_kernels SOURCES core/test_blas_kernels.cpp LIBS hpctrain_nn RANKS 1 THREADS 1 2 LABELS unit)
hpctrain_test(test_json_text SOURCES core/test_json_text.cpp LIBS hpctrain_core RANKS 1 LABELS unit)
# Forks children that start the stop signals' thread first, as a program does (core/signals.hpp);
# one thread, since a child of a process with an OpenMP pool cannot run OpenMP.
hpctrain_test(test_signals SOURCES core/test_signals.cpp LIBS hpctrain_core $<TARGET_NAME_IF_EXISTS:hpctrain_onednn>
              RANKS 1 LABELS unit)
