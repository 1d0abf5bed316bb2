# The `train` program end to end: errors, options, help, signals and failures, Slurm, predict over
# every family, rank invariance, the layout decks.
# (Included by test/CMakeLists.txt: paths are relative to test/, tests run in build/test.)
# The `train` program end to end on 2 ranks: bad input exits non-zero on every rank within seconds
# with one error line naming file:line:key (mpiexec returns a rank's non-zero code).
hpctrain_cli_error(batch_size_zero 2 "^error: --set:1: batch_size: value 0 is out of range"
                   inputs/quickstart.in --set batch_size=0 ${HPCTRAIN_NO_OUTPUTS})
hpctrain_cli_error(typo 2 "^error: test/cli/typo.in:3: batch_sise: unknown key \\(did you mean batch_size\\?\\)$"
                   test/cli/typo.in)
hpctrain_cli_error(missing_deck 2 "^error: no_such.in: cannot open deck$" no_such.in)
hpctrain_cli_error(layout_mismatch 2 "^error: --set:1: nodes: deck expects 4 node\\(s\\) but the job runs on 1 \\(ranks: 2\\)$"
                   inputs/quickstart.in --set nodes=4 ${HPCTRAIN_NO_OUTPUTS})
hpctrain_cli_error(missing_data 2 "^error: nowhere.h5: cannot open"
                   inputs/quickstart.in --set data_file=nowhere.h5 ${HPCTRAIN_NO_OUTPUTS})
hpctrain_cli_error(unknown_option 2 "^error: unknown option --bogus" inputs/quickstart.in --bogus ${HPCTRAIN_NO_OUTPUTS})
# best_output needs the validation loss of an epoch: a network deck with a validation split.
hpctrain_cli_error(best_output_no_validation 2 "^error: --set:2: best_output: needs a validation split"
                   inputs/quickstart.in --set validation_fraction=0
                   --set best_output=${CMAKE_CURRENT_BINARY_DIR}/scratch_cli_best.h5 ${HPCTRAIN_NO_OUTPUTS})
hpctrain_cli_error(best_output_gbdt 2 "^error: --set:1: best_output: model gbdt trains no epochs"
                   inputs/gbdt_binary.in --set best_output=${CMAKE_CURRENT_BINARY_DIR}/scratch_cli_best.h5
                   ${HPCTRAIN_NO_OUTPUTS})
# A bad label in data_file's held-out tail names its split (it read as a training row).
hpctrain_cli_error(gbdt_bad_label_split 2
                   "^error: (rank [0-9]+: )?test/cli/bad_class_tail.csv:18: objective: label 2.5 is not a class index \\(0, 1, \\.\\.\\.\\) \\(a row of the validation split: the last 5 rows of data_file, validation_fraction 0.25\\)$"
                   inputs/gbdt_binary.in --set data_file=test/cli/bad_class_tail.csv --set weight_file= --set test_file=
                   --set data_format=csv --set objective=multiclass --set num_class=3 --set validation_fraction=0.25
                   --set num_trees=2 --set eval_metric=mlogloss ${HPCTRAIN_NO_OUTPUTS})
hpctrain_cli_error(deck_is_directory 2 "^error: inputs: is a directory, not a deck file$" inputs)
# Without validation rows the summary says so (it printed "final val loss nan").
add_test(NAME cli_no_validation COMMAND ${HPCTRAIN_MPIRUN} $<TARGET_FILE:train> inputs/quickstart.in
         --set validation_fraction=0 --set epochs=1 --set data_file=${CMAKE_CURRENT_BINARY_DIR}/scratch_cli_no_validation.h5
         ${HPCTRAIN_NO_OUTPUTS})
set_tests_properties(cli_no_validation PROPERTIES ENVIRONMENT "${HPCTRAIN_TEST_ENV};OMP_NUM_THREADS=1" TIMEOUT 60
                     PROCESSORS 2 LABELS cli WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                     FIXTURES_REQUIRED cli_no_validation_data
                     PASS_REGULAR_EXPRESSION "Done: [0-9]+ steps.*; no validation data"
                     FAIL_REGULAR_EXPRESSION "val loss nan")
add_test(NAME cli_no_validation_data COMMAND $<TARGET_FILE:datagen> friedman1
         ${CMAKE_CURRENT_BINARY_DIR}/scratch_cli_no_validation.h5 --rows 500)
set_tests_properties(cli_no_validation_data PROPERTIES FIXTURES_SETUP cli_no_validation_data LABELS cli)
hpctrain_cli_error(nccl_without_nccl 2 "comm_backend nccl: this build has no NCCL" inputs/quickstart.in
                   --set comm_backend=nccl --set data_file=${CMAKE_CURRENT_BINARY_DIR}/scratch_cli_no_validation.h5
                   ${HPCTRAIN_NO_OUTPUTS})
set_tests_properties(cli_nccl_without_nccl PROPERTIES FIXTURES_REQUIRED cli_no_validation_data)
if(NOT Kokkos_ENABLE_CUDA)
  hpctrain_cli_error(device_gpu_host_build 2 "^error: --set:1: device: this is a host build \\(Kokkos "
                     inputs/quickstart.in --set device=gpu ${HPCTRAIN_NO_OUTPUTS})
endif()
# Either spelling of the thread option sets the thread count, over OMP_NUM_THREADS (Note [thread
# option spellings] in core/runtime.cpp): Kokkos 3.x ignored the 4.x spelling without a word.
foreach(spelling threads num-threads)
  add_test(NAME cli_kokkos_${spelling} COMMAND $<TARGET_FILE:train> inputs/quickstart.in --kokkos-${spelling}=1
           --set epochs=1 --set data_file=${CMAKE_CURRENT_BINARY_DIR}/scratch_cli_no_validation.h5 ${HPCTRAIN_NO_OUTPUTS})
  set_tests_properties(cli_kokkos_${spelling} PROPERTIES ENVIRONMENT "${HPCTRAIN_TEST_ENV};OMP_NUM_THREADS=2"
                       TIMEOUT 60 PROCESSORS 2 LABELS cli WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                       FIXTURES_REQUIRED cli_no_validation_data
                       PASS_REGULAR_EXPRESSION "\\(concurrency 1\\).*host threads 1,.*Done: ")
endforeach()
add_test(NAME cli_help_deck COMMAND $<TARGET_FILE:train> --help-deck)
set_tests_properties(cli_help_deck PROPERTIES ENVIRONMENT "${HPCTRAIN_TEST_ENV}" LABELS cli
                     PASS_REGULAR_EXPRESSION "batch_size \\(int, default 32, range \\[1,")
# Our usage is the first line of --help (Kokkos printed 42 lines of its own first); Kokkos's help
# only on --help-kokkos (Note [help options] in core/runtime.cpp).
add_test(NAME cli_help COMMAND $<TARGET_FILE:train> --help)
set_tests_properties(cli_help PROPERTIES ENVIRONMENT "${HPCTRAIN_TEST_ENV}" LABELS cli
                     PASS_REGULAR_EXPRESSION "^usage: train DECK" FAIL_REGULAR_EXPRESSION "kokkos-(num-)?threads")
add_test(NAME cli_help_kokkos COMMAND $<TARGET_FILE:train> --help-kokkos)
set_tests_properties(cli_help_kokkos PROPERTIES ENVIRONMENT "${HPCTRAIN_TEST_ENV}" LABELS cli
                     PASS_REGULAR_EXPRESSION "--kokkos-(num-)?threads" FAIL_REGULAR_EXPRESSION "usage: train")
# apps/predict on every family's weights file trained by a tiny `train` run, and on a GBDT model
# (see the script's header); the mlp outputs against a PyTorch forward pass of the same weights.
set(HPCTRAIN_PREDICT_DIR ${CMAKE_CURRENT_BINARY_DIR}/scratch_predict)
add_test(NAME predict_networks COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/predict_networks.sh ${PROJECT_BINARY_DIR}
         ${MPIEXEC_EXECUTABLE} ${HPCTRAIN_PREDICT_DIR})
set_tests_properties(predict_networks PROPERTIES ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV}" TIMEOUT 180 PROCESSORS 2
                     FIXTURES_SETUP predict_networks LABELS "integration;diffusion;cli"
                     WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
add_test(NAME predict_mlp_torch COMMAND ${HPCTRAIN_REFERENCE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/predict_outputs.py
         ${HPCTRAIN_PREDICT_DIR})
set_tests_properties(predict_mlp_torch PROPERTIES FIXTURES_REQUIRED predict_networks SKIP_RETURN_CODE 77
                     LABELS "integration;parity" TIMEOUT 60)
# apps/predict on a model of several inputs: a tiny gnn's state, forcing and static, one dataset each.
add_test(NAME cli_predict_gnn COMMAND ${HPCTRAIN_REFERENCE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/predict_gnn.py
         ${PROJECT_BINARY_DIR} ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_predict_gnn)
set_tests_properties(cli_predict_gnn PROPERTIES ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV}" TIMEOUT 120 PROCESSORS 2
                     LABELS "cli;gnn")
# The EMA of the weights (issue 39): predict, sample, convert and the evaluation apps read the EMA
# by default, the trained weights with --weights raw.
add_test(NAME cli_ema_consumers COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/ema_consumers.sh ${PROJECT_BINARY_DIR}
         ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_ema_consumers ${HPCTRAIN_REFERENCE_PYTHON})
set_tests_properties(cli_ema_consumers PROPERTIES ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV}" TIMEOUT 120 PROCESSORS 1
                     SKIP_RETURN_CODE 77 LABELS "integration;cli" WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
# kill -9, SIGUSR1 and a frozen rank against the real program (see the script's header).
add_test(NAME cli_failures COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/failures.sh $<TARGET_FILE:train>
         ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_failures)
set_tests_properties(cli_failures PROPERTIES ENVIRONMENT "${HPCTRAIN_TEST_ENV}" TIMEOUT 300 PROCESSORS 2
                     LABELS "cli;checkpoint" WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
# A rank stalled while opening the data (1 rank, 2 ranks, a frozen rank) ends the job naming the file.
add_test(NAME cli_open_stall COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/open_stall.sh $<TARGET_FILE:train>
         ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_open_stall
         ${CMAKE_CURRENT_BINARY_DIR}/scratch_era5_grids/era5_cds.nc)
set_tests_properties(cli_open_stall PROPERTIES ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV}" TIMEOUT 150 PROCESSORS 2
                     LABELS cli WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} FIXTURES_REQUIRED era5_grids)
# A rank of a 2-rank predict or sample stalled at its open or in its loop ends the job, naming it and the place.
add_test(NAME cli_tool_stall COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/tool_stall.sh $<TARGET_FILE_DIR:predict>
         ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_tool_stall)
set_tests_properties(cli_tool_stall PROPERTIES ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV}" TIMEOUT 120 PROCESSORS 2
                     LABELS cli WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
# Output paths readied before any work, for every model family (see the script's header).
add_test(NAME cli_output_paths COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/output_paths.sh $<TARGET_FILE:train>
         ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_output_paths)
set_tests_properties(cli_output_paths PROPERTIES ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV}" TIMEOUT 120 PROCESSORS 2
                     LABELS cli WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
# Hostile deck text: very long keys and values, NUL and non-UTF-8 bytes (see the script's header).
add_test(NAME cli_deck_bytes COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/deck_bytes.sh $<TARGET_FILE:train>
         ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_deck_bytes)
set_tests_properties(cli_deck_bytes PROPERTIES ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV}" TIMEOUT 60 PROCESSORS 2
                     LABELS cli WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
# The shared-memory gradient window does not fit in /dev/shm (see the script's header).
add_test(NAME cli_shm_window_full COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/shm_window_full.sh $<TARGET_FILE:train>
         ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_shm_window_full)
set_tests_properties(cli_shm_window_full PROPERTIES ENVIRONMENT "${HPCTRAIN_TEST_ENV};OMP_NUM_THREADS=1" TIMEOUT 60
                     PROCESSORS 2 SKIP_RETURN_CODE 77 LABELS cli WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
# The SLURM jobs on a real Slurm: a private munged + slurmctld + slurmd started by the test itself
# (test/cli/slurm_local.sh; Debian's slurm-wlm from `scripts/setup --slurm`, implied by --reference).
# Every jobs/*.sbatch passes `sbatch --test-only`; cpu_n1.sbatch, signalled before its time limit,
# exits 3, is requeued by jobs/requeue.sh and resumes to the uninterrupted run's weights bit for bit.
# Skipped (77) only where Slurm cannot start (not installed, not root), saying why.
# cli_slurm_requeue holds one core: most of its minute is waiting on slurmctld (its 30-second
# time-limit sweep, the requeue hold), and a slower job changes none of its checks (bitwise resume).
add_test(NAME cli_slurm_sbatch_test_only COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/slurm_sbatch_test_only.sh
         ${CMAKE_CURRENT_BINARY_DIR}/scratch_slurm_test_only ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_slurm_sbatch_test_only PROPERTIES TIMEOUT 180 SKIP_RETURN_CODE 77 LABELS "cli;slurm")
add_test(NAME cli_slurm_requeue COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/slurm_requeue.sh $<TARGET_FILE:train>
         ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_slurm_requeue ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_slurm_requeue PROPERTIES ENVIRONMENT "${HPCTRAIN_TEST_ENV}" TIMEOUT 600 PROCESSORS 1
                     SKIP_RETURN_CODE 77 LABELS "cli;checkpoint;slurm" WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
add_test(NAME scaling_smoke COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/scaling_smoke.sh $<TARGET_FILE:train>
         ${HPCTRAIN_REFERENCE_PYTHON} ${CMAKE_CURRENT_BINARY_DIR}/scratch_scaling)
set_tests_properties(scaling_smoke PROPERTIES ENVIRONMENT "${HPCTRAIN_TEST_ENV}" TIMEOUT 180 PROCESSORS 2
                     LABELS integration WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
# The GPU build without a GPU hands over to its host twin (src/core/gpu_fallback.hpp): quickstart
# trains on the host with one warning; `device gpu` is an error. Needs the host build next to it.
if(Kokkos_ENABLE_CUDA AND HPCTRAIN_HOST_BUILD_DIR)
  add_test(NAME cli_cuda_host_fallback COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/cuda_host_fallback.sh
           $<TARGET_FILE:train> ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_cuda_fallback)
  set_tests_properties(cli_cuda_host_fallback PROPERTIES ENVIRONMENT "${HPCTRAIN_TEST_ENV}" TIMEOUT 120
                       PROCESSORS 2 LABELS "cli;cuda" WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  # Checkpoints cross builds: host -> CUDA -> host resumes (what it proves with and without a GPU:
  # see the script's header).
  add_test(NAME cli_cuda_checkpoint_cross COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/cuda_checkpoint_cross.sh
           $<TARGET_FILE:train> ${HPCTRAIN_HOST_BUILD_DIR}/apps/train ${MPIEXEC_EXECUTABLE}
           ${CMAKE_CURRENT_BINARY_DIR}/scratch_cuda_checkpoint_cross)
  set_tests_properties(cli_cuda_checkpoint_cross PROPERTIES ENVIRONMENT "${HPCTRAIN_TEST_ENV}" TIMEOUT 180
                       LABELS "cli;cuda;checkpoint" WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# The seven layout decks (inputs/n*_gpu*.in, cpu_n1.in: model smart, effective batch 64) run by the
# 2-rank line of their headers on one shared tiny scene file (1 step each).
add_test(NAME cli_layout_decks COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/layout_decks.sh
         $<TARGET_FILE:train> $<TARGET_FILE:trajgen> ${MPIEXEC_EXECUTABLE}
         ${CMAKE_CURRENT_BINARY_DIR}/scratch_layout_decks ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_layout_decks PROPERTIES ENVIRONMENT "${HPCTRAIN_TEST_ENV};OMP_NUM_THREADS=1" TIMEOUT 180
                     PROCESSORS 2 LABELS "cli;integration")

# rank_invariant true (issue 39): weights bitwise on 1, 2, 3 and 4 ranks and on resume across rank
# counts (see the script's header); the common path (mlp, diffusion) and the other families apart.
foreach(part "core;mlp diffusion" "families;gnn smart transformer resnet cape")
  list(GET part 0 tag)
  list(GET part 1 families)
  string(REPLACE " " ";" families "${families}")
  add_test(NAME cli_rank_invariant_${tag} COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/rank_invariant.sh ${PROJECT_BINARY_DIR}
           ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_rank_invariant_${tag} ${PROJECT_SOURCE_DIR}
           ${HPCTRAIN_REFERENCE_PYTHON} ${families})
  set_tests_properties(cli_rank_invariant_${tag} PROPERTIES ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV}" TIMEOUT 600 PROCESSORS 2
                       LABELS "mpi;integration;cli")
endforeach()
# lr_schedule plateau and early stopping in a `train` run: the rate drops, the run stops with exit 0 (see the script's header).
add_test(NAME cli_plateau_run COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/plateau_run.sh $<TARGET_FILE:train>
         ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_plateau_run)
set_tests_properties(cli_plateau_run PROPERTIES ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV}" TIMEOUT 120 PROCESSORS 2
                     LABELS cli WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
