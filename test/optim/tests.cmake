# The optimizers against hand-computed steps, and the fp16 loss scaler.
# (Included by test/CMakeLists.txt: paths are relative to test/, tests run in build/test.)
hpctrain_test(test_optimizers SOURCES optim/test_optimizers.cpp LIBS hpctrain_optim RANKS 1 LABELS unit)
hpctrain_test(test_loss_scaler SOURCES optim/test_loss_scaler.cpp LIBS hpctrain_optim hpctrain_nn RANKS 1 LABELS unit)
# lr_schedule plateau: ReduceLROnPlateau by hand, its state, and every rate of the series
# test_plateau writes against torch's own scheduler (python/plateau_parity.py).
hpctrain_test(test_plateau SOURCES optim/test_plateau.cpp LIBS hpctrain_optim RANKS 1 LABELS unit)
set_tests_properties(test_plateau_np1_nt1 PROPERTIES FIXTURES_SETUP plateau_parity)
add_test(NAME parity_plateau_torch COMMAND ${HPCTRAIN_REFERENCE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/plateau_parity.py
         plateau_parity.txt)
set_tests_properties(parity_plateau_torch PROPERTIES FIXTURES_REQUIRED plateau_parity SKIP_RETURN_CODE 77
                     LABELS parity WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
