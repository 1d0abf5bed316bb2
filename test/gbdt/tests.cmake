# The GBDT family: units, input, training against LightGBM, the exports, categorical tables, decks, resume.
# (Included by test/CMakeLists.txt: paths are relative to test/, tests run in build/test.)
# A script test against the reference libraries: python/NAME.py BUILD MPIEXEC SCRATCH with one thread a
# rank on 2 cores, skipped (77) where LightGBM or XGBoost cannot be imported; ENV the test environment.
function(gbdt_reference_test name timeout env)
  add_test(NAME ${name} COMMAND ${HPCTRAIN_REFERENCE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/${name}.py
           ${PROJECT_BINARY_DIR} ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_${name})
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT ${timeout} PROCESSORS 2
                       ENVIRONMENT "${env};OMP_NUM_THREADS=1" LABELS "gbdt;parity")
endfunction()

hpctrain_test(test_gbdt_units SOURCES gbdt/test_gbdt_units.cpp gbdt/test_gbdt_split.cpp gbdt/test_gbdt_metrics.cpp gbdt/test_gbdt_kernels.cpp
              gbdt/test_log_link.cpp gbdt/test_rank.cpp gbdt/test_robust.cpp
              LIBS hpctrain_gbdt hpctrain_data
              RANKS 1 2 THREADS 1 2 LABELS unit gbdt TIMEOUT 120)
hpctrain_test(test_gbdt_input SOURCES gbdt/test_gbdt_input.cpp LIBS hpctrain_gbdt hpctrain_data
              RANKS 1 2 LABELS unit gbdt TIMEOUT 120)
hpctrain_test(test_gbdt_train SOURCES gbdt/test_gbdt_train.cpp LIBS hpctrain_gbdt hpctrain_data
              RANKS 1 2 LABELS gbdt TIMEOUT 180)
target_compile_definitions(test_gbdt_train PRIVATE HPCTRAIN_REFERENCE_PYTHON="${HPCTRAIN_REFERENCE_PYTHON}")

# Models other tools load (apps/convert): the exports' unit tests, and the networks whose
# safetensors conversion PyTorch checks (safetensors_parity.py); the GBDT exports in the real
# xgboost and lightgbm packages against apps/predict (convert_gbdt_parity.py).
hpctrain_test(test_convert SOURCES gbdt/test_export.cpp gbdt/test_model_io.cpp nn/test_safetensors.cpp
              LIBS hpctrain_gbdt hpctrain_models nlohmann_json::nlohmann_json RANKS 1 LABELS unit gbdt)
set_tests_properties(test_convert_np1_nt1 PROPERTIES FIXTURES_SETUP convert_networks)
add_test(NAME convert_safetensors_torch COMMAND ${HPCTRAIN_REFERENCE_PYTHON}
         ${CMAKE_CURRENT_SOURCE_DIR}/python/safetensors_parity.py $<TARGET_FILE:convert> ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties(convert_safetensors_torch PROPERTIES FIXTURES_REQUIRED convert_networks SKIP_RETURN_CODE 77
                     ENVIRONMENT "${HPCTRAIN_TEST_ENV};OMP_NUM_THREADS=1" LABELS parity
                     WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
add_test(NAME convert_gbdt_parity COMMAND ${HPCTRAIN_REFERENCE_PYTHON}
         ${CMAKE_CURRENT_SOURCE_DIR}/python/convert_gbdt_parity.py ${PROJECT_BINARY_DIR} ${MPIEXEC_EXECUTABLE}
         ${CMAKE_CURRENT_BINARY_DIR}/scratch_convert_gbdt ${PROJECT_SOURCE_DIR}/examples/data)
set_tests_properties(convert_gbdt_parity PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300
                     ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV};OMP_NUM_THREADS=1" LABELS "gbdt;parity"
                     WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
# Categorical features end to end: a pandas CSV with text columns through train (1 and 2 ranks),
# predict and convert, against LightGBM and XGBoost (categorical_tables.py).
add_test(NAME gbdt_categorical_tables COMMAND ${HPCTRAIN_REFERENCE_PYTHON}
         ${CMAKE_CURRENT_SOURCE_DIR}/python/categorical_tables.py ${PROJECT_BINARY_DIR} ${MPIEXEC_EXECUTABLE}
         ${CMAKE_CURRENT_BINARY_DIR}/scratch_categorical_tables)
set_tests_properties(gbdt_categorical_tables PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 180 PROCESSORS 2
                     ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV};OMP_NUM_THREADS=1" LABELS "gbdt;parity"
                     WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
# Parquet tables (data_format parquet, the Parquet module) against the same pandas DataFrame as CSV:
# gbdt at 1 and 2 ranks, an mlp with one-hot inputs and text classes, predict, auto, the refusals
# (parquet_tables.py; pandas + pyarrow of .deps/zarr3env, where a skip is a failure). Only where
# the module is built: a build without Arrow has none to test.
if(HPCTRAIN_HAVE_PARQUET)
  add_test(NAME cli_parquet_tables COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/python/zarr3_python.sh
           ${CMAKE_CURRENT_SOURCE_DIR}/python/parquet_tables.py ${PROJECT_BINARY_DIR} ${MPIEXEC_EXECUTABLE}
           ${CMAKE_CURRENT_BINARY_DIR}/scratch_parquet_tables)
  set_tests_properties(cli_parquet_tables PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 240 PROCESSORS 2
                       ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV};OMP_NUM_THREADS=1" LABELS "cli;gbdt")
endif()
# Counts and positive amounts (objectives poisson, gamma, tweedie) against LightGBM trained alike, and
# converted into LightGBM and XGBoost (gbdt_log_link.py); 1 and 2 ranks give the same model.
gbdt_reference_test(gbdt_log_link 180 "${HPCTRAIN_REFUSAL_ENV}")
# Medians, quantiles and robust regression (absolute_error, quantile, pseudo_huber) against LightGBM
# trained alike and converted into LightGBM and XGBoost (gbdt_robust.py); 1 and 2 ranks give the same model.
gbdt_reference_test(gbdt_robust 180 "${HPCTRAIN_REFUSAL_ENV}")
# The GBDT decks as documented, scaled down (see the script's header).
add_test(NAME cli_gbdt_decks COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/gbdt_decks.sh $<TARGET_FILE:train>
         ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_gbdt_decks)
set_tests_properties(cli_gbdt_decks PROPERTIES ENVIRONMENT "${HPCTRAIN_TEST_ENV}" TIMEOUT 120 PROCESSORS 2
                     LABELS "cli;gbdt" WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
# The trees on pandas-written tables with a text label (docs/tables.md): learns, the same model as
# integer-coded labels, 1 rank == 2 ranks byte for byte, predict's classes, refusals naming file:line.
add_test(NAME cli_gbdt_text_labels COMMAND ${HPCTRAIN_REFERENCE_PYTHON}
         ${CMAKE_CURRENT_SOURCE_DIR}/python/gbdt_text_labels.py ${PROJECT_BINARY_DIR} ${MPIEXEC_EXECUTABLE}
         ${CMAKE_CURRENT_BINARY_DIR}/scratch_gbdt_text_labels)
set_tests_properties(cli_gbdt_text_labels PROPERTIES ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV}" TIMEOUT 120 PROCESSORS 2
                     LABELS "cli;gbdt")
# GBDT checkpoints: kill -9 and SIGUSR1, resumed on 2 and on 1 rank to the same model file (issue 20).
add_test(NAME cli_gbdt_resume COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/gbdt_resume.sh $<TARGET_FILE:train>
         ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_gbdt_resume)
set_tests_properties(cli_gbdt_resume PROPERTIES ENVIRONMENT "${HPCTRAIN_TEST_ENV}" TIMEOUT 180 PROCESSORS 2
                     LABELS "cli;gbdt;checkpoint" WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
# Learning to rank (objective lambdarank, docs/ranking.md) on synthetic queries: LibSVM qid: on 1 rank
# = CSV group_column on 2 ranks, test NDCG near LightGBM's lambdarank, converted models in LightGBM
# (exact) and XGBoost, LightGBM's ndcg/map of our scores = ours, early stopping, refusals (gbdt_rank.py).
gbdt_reference_test(gbdt_rank 120 "${HPCTRAIN_REFUSAL_ENV}")
# Ranking with row weights and label_gain (Note [rank weights]): LightGBM's first tree = ours, and from our
# scores before each, every weighted tree; its weighted ndcg/map of our scores = ours, 1 = 2 ranks,
# label_gain in the model file and predict, refusals.
gbdt_reference_test(gbdt_rank_weights 120 "${HPCTRAIN_REFUSAL_ENV}")
# Absent LibSVM entries as 0 (libsvm_absent zero, LightGBM's reading) or missing (the default, XGBoost's):
# the trees of the zeros written out, LightGBM reading the file grows our first tree, 1 = 2 ranks, the
# model file and predict read as training did, the LightGBM and XGBoost exports (gbdt_libsvm_absent.py).
gbdt_reference_test(gbdt_libsvm_absent 120 "${HPCTRAIN_REFUSAL_ENV}")
# Row weights as users hold them (weight_column, validation_weight_file): LightGBM's first trees, its and
# XGBoost's weighted validation metrics of every round, early stopping, 1 = 2 ranks, refusals (gbdt_weights.py).
gbdt_reference_test(gbdt_weights 120 "${HPCTRAIN_REFUSAL_ENV}")
