# Ensembles (docs/ensembles.md): inputs/ensemble_quickstart.in ahead of its best member, and
# `predict ENSEMBLE` equal to the meta-model over the members' own predict outputs.
# (Included by test/CMakeLists.txt: paths are relative to test/, tests run in build/test.)
hpctrain_test(test_ensemble SOURCES ensemble/test_ensemble.cpp LIBS hpctrain_ensemble ${HPCTRAIN_TEST_LIBS}
              nlohmann_json::nlohmann_json RANKS 1 LABELS unit ensemble)
add_test(NAME cli_ensemble_quickstart COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/ensemble_quickstart.sh $<TARGET_FILE:train>
         ${HPCTRAIN_REFERENCE_PYTHON} ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_ensemble_quickstart
         ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_ensemble_quickstart PROPERTIES ENVIRONMENT "${HPCTRAIN_TEST_ENV};OMP_NUM_THREADS=1" TIMEOUT 120
                     PROCESSORS 2 SKIP_RETURN_CODE 77 LABELS "cli;integration;ensemble")
# An ensemble stopped by a signal between members and inside a tree member's rounds, resumed to
# the uninterrupted run's ensemble file on 1 and 2 ranks (the run loop's passes).
add_test(NAME cli_ensemble_resume COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/ensemble_resume.sh $<TARGET_FILE:train>
         ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_ensemble_resume)
set_tests_properties(cli_ensemble_resume PROPERTIES ENVIRONMENT "${HPCTRAIN_TEST_ENV};OMP_NUM_THREADS=1" TIMEOUT 180
                     PROCESSORS 2 LABELS "cli;integration;ensemble")
# A GBDT member deck with best_output (which a `model gbdt` run refuses) is refused as a member too,
# at the member deck's file:line:key, before anything is written (friedman1 rows from the cli fixture).
set(HPCTRAIN_ENSEMBLE_ERROR_DIR ${CMAKE_CURRENT_BINARY_DIR}/scratch_cli_ensemble_member_error)
add_test(NAME cli_ensemble_member_best_output COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/ensemble_member_error.sh
         ${HPCTRAIN_ENSEMBLE_ERROR_DIR} 2
         "^error: test/cli/gbdt_member_best_output.in:7: best_output: model gbdt trains no epochs"
         ${HPCTRAIN_MPIRUN} $<TARGET_FILE:train> inputs/ensemble_quickstart.in --set objective=regression
         --set members=test/cli/gbdt_member_best_output.in --set combine=average --set folds=2
         --set data_file=${CMAKE_CURRENT_BINARY_DIR}/scratch_cli_no_validation.h5
         --set output=${HPCTRAIN_ENSEMBLE_ERROR_DIR}/ensemble.json)
set_tests_properties(cli_ensemble_member_best_output PROPERTIES ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV};OMP_NUM_THREADS=1"
                     TIMEOUT 30 PROCESSORS 2 LABELS "cli;ensemble" WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                     FIXTURES_REQUIRED cli_no_validation_data)
# A network member deck that asks for what needs a validation set (best_output, early stopping) is
# refused at its line: members train on K-fold parts without one.
foreach(case "best_output:best_output:_mlp" "early_stopping:early_stopping_patience:_mlp_es")
  string(REPLACE ":" ";" case "${case}")
  list(GET case 0 name)
  list(GET case 1 key)
  list(GET case 2 dir)
  add_test(NAME cli_ensemble_network_member_${name} COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/ensemble_member_error.sh
           ${HPCTRAIN_ENSEMBLE_ERROR_DIR}${dir} 2
           "^error: test/cli/mlp_member_${name}.in:9: ${key}: ensemble members train without a validation set"
           ${HPCTRAIN_MPIRUN} $<TARGET_FILE:train> inputs/ensemble_quickstart.in --set objective=regression
           --set members=test/cli/mlp_member_${name}.in --set combine=average --set folds=2
           --set data_file=${CMAKE_CURRENT_BINARY_DIR}/scratch_cli_no_validation.h5
           --set output=${HPCTRAIN_ENSEMBLE_ERROR_DIR}${dir}/ensemble.json)
  set_tests_properties(cli_ensemble_network_member_${name} PROPERTIES
                       ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV};OMP_NUM_THREADS=1" TIMEOUT 30 PROCESSORS 2
                       LABELS "cli;ensemble" WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                       FIXTURES_REQUIRED cli_no_validation_data)
endforeach()
# Ensembles on a text label (docs/ensembles.md): class names in the ensemble file and predict's
# OUTPUT.h5, 1 rank == 2 ranks byte for byte, members coding the classes differently refused; the
# refusals of num_class above the class count (ensemble, gbdt, mlp) and of predict --margin with an .h5;
# row weights (weights 0 = rows left out, byte for byte; an mlp deck trains weighted; predict --weight-file).
add_test(NAME cli_ensemble_text_labels COMMAND ${HPCTRAIN_REFERENCE_PYTHON}
         ${CMAKE_CURRENT_SOURCE_DIR}/python/ensemble_text_labels.py ${PROJECT_BINARY_DIR} ${MPIEXEC_EXECUTABLE}
         ${CMAKE_CURRENT_BINARY_DIR}/scratch_ensemble_text_labels)
set_tests_properties(cli_ensemble_text_labels PROPERTIES ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV}" TIMEOUT 180 PROCESSORS 2
                     LABELS "cli;ensemble")
# Text feature columns (docs/ensembles.md): network deck members take one-hot blocks or embeddings as
# `model mlp` does, tree decks categorical splits; predict reads the text; a member file coding the
# categories otherwise refused.
add_test(NAME cli_ensemble_text_features COMMAND ${HPCTRAIN_REFERENCE_PYTHON}
         ${CMAKE_CURRENT_SOURCE_DIR}/python/ensemble_text_features.py ${PROJECT_BINARY_DIR} ${MPIEXEC_EXECUTABLE}
         ${CMAKE_CURRENT_BINARY_DIR}/scratch_ensemble_text_features)
set_tests_properties(cli_ensemble_text_features PROPERTIES ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV}" TIMEOUT 180
                     PROCESSORS 2 LABELS "cli;ensemble")
# A bad label names its file, line and split (it named the set and a row count: "valid row 2").
hpctrain_cli_error(ensemble_bad_label_split 2
                   "^error: (rank [0-9]+: )?test/cli/bad_class_tail.csv:18: num_class: label 2.5 is not a class index of a multiclass ensemble of 3 classes \\(0 \\.\\. 2\\) \\(a row of the validation split: the last 4 rows of data_file, validation_fraction 0.2\\)$"
                   inputs/ensemble_quickstart.in --set data_file=test/cli/bad_class_tail.csv --set data_format=csv
                   --set label_column=0 --set objective=multiclass --set num_class=3
                   --set output=${CMAKE_CURRENT_BINARY_DIR}/scratch_cli_ensemble_bad_label.json)
# A tree member's objective refuses a label of the ensemble's training rows (a poisson member of a
# regression ensemble: a negative count) as the ensemble's own checks do: file, line, split and member.
# (The regex has . for the message's semicolon, which would split the CMake list.)
hpctrain_cli_error(ensemble_log_link_member_label 2
                   "^error: (rank [0-9]+: )?test/cli/negative_count.csv:4: objective: label -1 is negative. the poisson objective models amounts >= 0 \\(a row of the training split: the first 16 rows of data_file, which member test/cli/poisson_member.in trains on\\)$"
                   inputs/ensemble_quickstart.in --set data_file=test/cli/negative_count.csv --set data_format=csv
                   --set label_column=0 --set objective=regression --set members=test/cli/poisson_member.in
                   --set combine=average --set folds=2
                   --set output=${CMAKE_CURRENT_BINARY_DIR}/scratch_cli_ensemble_log_link/ensemble.json)
# An ensemble's run and `predict ENSEMBLE` refuse the input rows its network members were trained
# refusing (Note [member non-finite inputs] in src/ensemble/refused_rows.cpp): a NaN where a member
# reads none, an Inf for every network member, naming file, row, split, member and count on 2 ranks;
# trees read both (CSV and HDF5 tables).
add_test(NAME cli_ensemble_non_finite COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/ensemble_non_finite.sh
         ${PROJECT_BINARY_DIR} ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_ensemble_non_finite)
set_tests_properties(cli_ensemble_non_finite PROPERTIES ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV};OMP_NUM_THREADS=1"
                     TIMEOUT 120 PROCESSORS 2 LABELS "cli;ensemble")
