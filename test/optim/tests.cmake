# The optimizers against hand-computed steps, and the fp16 loss scaler.
# (Included by test/CMakeLists.txt: paths are relative to test/, tests run in build/test.)
hpctrain_test(test_optimizers SOURCES optim/test_optimizers.cpp LIBS hpctrain_optim RANKS 1 LABELS unit)
hpctrain_test(test_loss_scaler SOURCES optim/test_loss_scaler.cpp LIBS hpctrain_optim hpctrain_nn RANKS 1 LABELS unit)
