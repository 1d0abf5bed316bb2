# The model families: gnn, resnet, cape, diffusion, smart, transformer and the token_bag family
# under test/, each with its PyTorch parity and its quickstart decks scaled down.
# (Included by test/CMakeLists.txt: paths are relative to test/, tests run in build/test.)
hpctrain_test(test_registry SOURCES models/test_registry.cpp LIBS ${HPCTRAIN_TEST_LIBS} RANKS 1 LABELS unit)
hpctrain_test(test_predict SOURCES models/test_predict.cpp LIBS hpctrain_models RANKS 1 LABELS unit diffusion)
add_test(NAME cli_wxgen COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/wxgen.sh $<TARGET_FILE:wxgen> ${CMAKE_CURRENT_SOURCE_DIR}/python/reference_python.sh
         ${CMAKE_CURRENT_BINARY_DIR}/scratch_wxgen)
set_tests_properties(cli_wxgen PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60 LABELS "cli;gnn")
# The gnn family on a small wxgen file (the fixture writes it once for every rank count).
add_test(NAME gnn_wx_data COMMAND $<TARGET_FILE:wxgen> ${CMAKE_CURRENT_BINARY_DIR}/scratch_gnn_wx.nc
         --nx 12 --ny 9 --margin 6 --hours 60 --spinup 24)
set_tests_properties(gnn_wx_data PROPERTIES FIXTURES_SETUP gnn_data LABELS gnn)
hpctrain_test(test_gnn SOURCES models/test_gnn.cpp LIBS hpctrain_test_layer_check hpctrain_test_allocation_counter
              ${HPCTRAIN_TEST_LIBS} LABELS "mpi;gnn" TIMEOUT 120 FIXTURES gnn_data)
hpctrain_test(test_gnn_curriculum SOURCES models/test_gnn_curriculum.cpp LIBS ${HPCTRAIN_TEST_LIBS}
              LABELS "mpi;gnn" TIMEOUT 120 FIXTURES gnn_data)
hpctrain_test(test_gnn_point_weights SOURCES models/test_gnn_point_weights.cpp LIBS ${HPCTRAIN_TEST_LIBS} RANKS 1
              LABELS "unit;gnn")
hpctrain_test(test_sphere_mesh SOURCES models/test_sphere_mesh.cpp LIBS ${HPCTRAIN_TEST_LIBS} RANKS 1 LABELS "unit;gnn")
hpctrain_test(test_gnn_recompute SOURCES models/test_gnn_recompute.cpp LIBS ${HPCTRAIN_TEST_LIBS} RANKS 1
              LABELS "unit;gnn")
hpctrain_test(test_forecast_file SOURCES models/test_forecast_file.cpp LIBS ${HPCTRAIN_TEST_LIBS} RANKS 1
              LABELS "unit;gnn")
# The whole gnn against a PyTorch rebuild on the same weights and graph (fp32, 1e-5 relative).
hpctrain_test(test_gnn_parity_dump SOURCES models/dump_gnn_parity.cpp LIBS ${HPCTRAIN_TEST_LIBS} RANKS 1 LABELS "parity;gnn")
set_tests_properties(test_gnn_parity_dump_np1_nt1 PROPERTIES FIXTURES_SETUP gnn_parity)
add_test(NAME parity_gnn_torch COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/python/reference_python.sh
         ${CMAKE_CURRENT_SOURCE_DIR}/python/gnn_parity.py ${CMAKE_CURRENT_BINARY_DIR}/scratch_gnn_parity.h5
         ${CMAKE_CURRENT_BINARY_DIR}/scratch_gnn_parity_sphere.h5)
set_tests_properties(parity_gnn_torch PROPERTIES FIXTURES_REQUIRED gnn_parity SKIP_RETURN_CODE 77 TIMEOUT 60
                     LABELS "parity;gnn")
add_test(NAME cli_gnn_quickstart COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/gnn_quickstart.sh $<TARGET_FILE:wxgen>
         $<TARGET_FILE:train> $<TARGET_FILE:wxeval> ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_gnn_quickstart
         ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_gnn_quickstart PROPERTIES ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV};OMP_NUM_THREADS=1" TIMEOUT 120
                     PROCESSORS 2 LABELS "cli;gnn")
# inputs/gnn_global.in scaled down: the icosahedral mesh on a reduced Gaussian GRIB (1 rank == 2 ranks).
add_test(NAME cli_gnn_global COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/gnn_global.sh ${PROJECT_BINARY_DIR}
         ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_gnn_global ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_gnn_global PROPERTIES ENVIRONMENT "${HPCTRAIN_TEST_ENV};OMP_NUM_THREADS=1" TIMEOUT 180
                     PROCESSORS 2 LABELS "cli;gnn")
# wxeval --init: forecasts past the data's end equal the hindcasts from the same time, read no truth
# after it, and refuse what they lack (regional and global, 1 and 2 ranks).
add_test(NAME cli_gnn_future COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/gnn_future.sh ${PROJECT_BINARY_DIR}
         ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_gnn_future ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_gnn_future PROPERTIES ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV};OMP_NUM_THREADS=1" TIMEOUT 180
                     PROCESSORS 2 LABELS "cli;gnn")
add_test(NAME cli_gnn_seed001 COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/gnn_seed001.sh $<TARGET_FILE:wxgen>
         $<TARGET_FILE:train> $<TARGET_FILE:wxeval> ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_gnn_seed001
         ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_gnn_seed001 PROPERTIES ENVIRONMENT "${HPCTRAIN_TEST_ENV};OMP_NUM_THREADS=1" TIMEOUT 120
                     PROCESSORS 2 LABELS "cli;gnn")
# The resnet family (issue 22): residual blocks through the gradient check; ResNet-18/50 against plain torch.
hpctrain_test(test_resnet SOURCES models/test_resnet.cpp LIBS hpctrain_test_layer_check hpctrain_models RANKS 1 LABELS unit)
hpctrain_test(test_resnet_allocation SOURCES models/test_resnet_allocation.cpp LIBS hpctrain_test_allocation_counter hpctrain_models RANKS 1 LABELS unit)
hpctrain_test(test_resnet_parity_dump SOURCES models/dump_resnet_parity.cpp LIBS hpctrain_models hpctrain_optim RANKS 1
              LABELS parity)
set_tests_properties(test_resnet_parity_dump_np1_nt1 PROPERTIES FIXTURES_SETUP resnet_parity)
add_test(NAME parity_resnet_torch COMMAND ${HPCTRAIN_REFERENCE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/resnet_parity.py
         parity_resnet18.h5 parity_resnet50.h5 parity_resnet18_default.h5)
set_tests_properties(parity_resnet_torch PROPERTIES FIXTURES_REQUIRED resnet_parity SKIP_RETURN_CODE 77
                     LABELS parity WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
# model cape (issue 22): no allocation in the step, episodes keyed by (seed, epoch, row), the matching head vs torch.
hpctrain_test(test_cape SOURCES models/test_cape.cpp LIBS hpctrain_test_allocation_counter hpctrain_models RANKS 1 LABELS unit)
set_tests_properties(test_cape_np1_nt1 PROPERTIES FIXTURES_SETUP cape_parity)
add_test(NAME parity_cape_head_torch COMMAND ${HPCTRAIN_REFERENCE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/cape_head_parity.py
         cape_head_parity.h5)
set_tests_properties(parity_cape_head_torch PROPERTIES FIXTURES_REQUIRED cape_parity SKIP_RETURN_CODE 77
                     LABELS parity WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
# inputs/cape_quickstart.in and cape_seed004.in scaled down: 1 rank == 2 ranks, bitwise resume, cape_eval, plot-cape.
add_test(NAME cli_cape_decks COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/cape_decks.sh $<TARGET_FILE:posegen> $<TARGET_FILE:train>
         $<TARGET_FILE:cape_eval> ${HPCTRAIN_REFERENCE_PYTHON} ${MPIEXEC_EXECUTABLE}
         ${CMAKE_CURRENT_BINARY_DIR}/scratch_cape_decks ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_cape_decks PROPERTIES ENVIRONMENT "${HPCTRAIN_TEST_ENV};OMP_NUM_THREADS=1" TIMEOUT 240
                     PROCESSORS 2 SKIP_RETURN_CODE 77 LABELS "cli;integration")
# apps/cape_predict on Pillow-written COCO photographs: COCO keypoint results (one category or several, a
# support each), 1 rank == 2 ranks bytewise,
# the inverse crop map against cape_eval's episodes within 1e-4 pixels, the refusals; apps/predict names it.
add_test(NAME cli_cape_predict COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/cape_predict.sh $<TARGET_FILE:train>
         $<TARGET_FILE:cape_eval> $<TARGET_FILE:cape_predict> $<TARGET_FILE:predict> ${HPCTRAIN_REFERENCE_PYTHON} ${MPIEXEC_EXECUTABLE}
         ${CMAKE_CURRENT_BINARY_DIR}/scratch_cape_predict ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_cape_predict PROPERTIES ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV};OMP_NUM_THREADS=1" TIMEOUT 240
                     PROCESSORS 2 SKIP_RETURN_CODE 77 LABELS "cli;images")
# inputs/resnet_digits.in (issue 22): ResNet-18 on the digits, at least 97%; synchronised batch norm 1 rank == 2 ranks.
add_test(NAME cli_resnet_digits COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/resnet_digits.sh $<TARGET_FILE:train>
         ${HPCTRAIN_REFERENCE_PYTHON} ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_resnet_digits
         ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_resnet_digits PROPERTIES ENVIRONMENT "${HPCTRAIN_TEST_ENV};OMP_NUM_THREADS=1" TIMEOUT 240
                     PROCESSORS 2 SKIP_RETURN_CODE 77 LABELS "cli;integration")
hpctrain_test(test_diffusion_net SOURCES models/test_diffusion_net.cpp LIBS hpctrain_test_layer_check hpctrain_models RANKS 1 2
              LABELS unit diffusion)
hpctrain_test(test_diffusion_parity SOURCES models/test_diffusion_parity.cpp LIBS hpctrain_models RANKS 1 2
              LABELS integration diffusion parity)
target_compile_definitions(test_diffusion_parity PRIVATE HPCTRAIN_REFERENCE_PYTHON="${HPCTRAIN_REFERENCE_PYTHON}")
hpctrain_test(test_diffusion_ranks SOURCES models/test_diffusion_ranks.cpp LIBS hpctrain_train RANKS 1 2
              LABELS integration diffusion)
add_test(NAME diffusion_tools_smoke
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/models/diffusion_tools_smoke.sh ${PROJECT_BINARY_DIR}
                 ${PROJECT_SOURCE_DIR} ${MPIEXEC_EXECUTABLE})
set_tests_properties(diffusion_tools_smoke PROPERTIES ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV};OMP_NUM_THREADS=1"
                     TIMEOUT 120 PROCESSORS 2 LABELS "integration;diffusion")

# diffgen --grid: the downscaler's samples cut from xarray-written NetCDF and Zarr, checked against numpy.
add_test(NAME cli_diffgen_grid COMMAND ${HPCTRAIN_REFERENCE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/diffgen_grid.py
         ${PROJECT_BINARY_DIR} ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_diffgen_grid ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_diffgen_grid PROPERTIES ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV}" TIMEOUT 120 PROCESSORS 2
                     LABELS "integration;diffusion")

add_test(NAME sample_parallel_write
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/models/sample_parallel_write.sh ${PROJECT_BINARY_DIR}
                 ${PROJECT_SOURCE_DIR} ${MPIEXEC_EXECUTABLE})
set_tests_properties(sample_parallel_write PROPERTIES ENVIRONMENT "${HPCTRAIN_TEST_ENV};OMP_NUM_THREADS=1"
                     TIMEOUT 120 PROCESSORS 2 SKIP_RETURN_CODE 77 LABELS "integration;diffusion")
# apps/trajgen's driving scenes (issue 19).
hpctrain_test(test_trajgen SOURCES models/smart/test_trajgen.cpp LIBS ${HPCTRAIN_TEST_LIBS} RANKS 1 LABELS unit)
# `model smart` at a tiny size (issue 19): tokens, graphs, data parallel equivalence, resume.
hpctrain_test(test_smart SOURCES models/smart/test_smart.cpp LIBS hpctrain_test_allocation_counter ${HPCTRAIN_TEST_LIBS}
              LABELS mpi TIMEOUT 120)
# Each agent type's own motion tokens (motion_vocab_per_type): deck errors, rollouts, 1 == 2 ranks, resume.
hpctrain_test(test_smart_types SOURCES models/smart/test_smart_types.cpp LIBS ${HPCTRAIN_TEST_LIBS} LABELS mpi
              TIMEOUT 120)
# The motion vocabulary fitted to the training scenes (k-disks, Note [fitted vocabulary]).
hpctrain_test(test_vocab_fit SOURCES models/smart/test_vocab_fit.cpp LIBS ${HPCTRAIN_TEST_LIBS} RANKS 1 LABELS unit)
# Rollout windows with key/value caches against full forwards (issue 35).
hpctrain_test(test_smart_windows SOURCES models/smart/test_smart_windows.cpp LIBS ${HPCTRAIN_TEST_LIBS} RANKS 1
              LABELS unit)
# The whole SMART model against a plain-PyTorch reference in float64 (forward, loss, every gradient within 1e-5).
hpctrain_test(test_smart_parity_dump SOURCES models/smart/dump_smart_parity.cpp LIBS hpctrain_models RANKS 1 LABELS parity)
set_tests_properties(test_smart_parity_dump_np1_nt1 PROPERTIES FIXTURES_SETUP smart_parity)
add_test(NAME parity_smart_torch COMMAND ${HPCTRAIN_REFERENCE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/smart_parity.py
         parity_smart.h5)
set_tests_properties(parity_smart_torch PROPERTIES FIXTURES_REQUIRED smart_parity SKIP_RETURN_CODE 77
                     LABELS parity WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
# The same on scenes whose agents come and go (masked steps: nodes without edges or loss).
add_test(NAME parity_smart_torch_masked COMMAND ${HPCTRAIN_REFERENCE_PYTHON}
         ${CMAKE_CURRENT_SOURCE_DIR}/python/smart_parity.py parity_smart_masked.h5)
set_tests_properties(parity_smart_torch_masked PROPERTIES FIXTURES_REQUIRED smart_parity SKIP_RETURN_CODE 77
                     LABELS parity WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
# The same with fewer tokens for some agent types (Note [tokens per type]: each type's own softmax).
add_test(NAME parity_smart_torch_types COMMAND ${HPCTRAIN_REFERENCE_PYTHON}
         ${CMAKE_CURRENT_SOURCE_DIR}/python/smart_parity.py parity_smart_types.h5)
set_tests_properties(parity_smart_torch_types PROPERTIES FIXTURES_REQUIRED smart_parity SKIP_RETURN_CODE 77
                     LABELS parity WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
# Pedestrians' grid one heading cell: a ReLU input within fp32 rounding of 0 (Note [ReLU kinks]).
add_test(NAME parity_smart_torch_single_cell COMMAND ${HPCTRAIN_REFERENCE_PYTHON}
         ${CMAKE_CURRENT_SOURCE_DIR}/python/smart_parity.py parity_smart_single_cell.h5)
set_tests_properties(parity_smart_torch_single_cell PROPERTIES FIXTURES_REQUIRED smart_parity SKIP_RETURN_CODE 77
                     LABELS parity WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
# apps/scenes_import on track tables written by pandas (issue 35): resampling, masks, AV2 names, bad lines.
add_test(NAME cli_scenes_import COMMAND ${HPCTRAIN_REFERENCE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/track_tables.py
         $<TARGET_FILE:scenes_import> ${CMAKE_CURRENT_BINARY_DIR}/scratch_scenes_import)
set_tests_properties(cli_scenes_import PROPERTIES LABELS cli TIMEOUT 60)
# Lane centre lines from two bounds by arc length (lanelet2 and Argoverse 2 maps).
hpctrain_test(test_centre_line SOURCES models/smart/test_centre_line.cpp LIBS hpctrain_models RANKS 1 LABELS unit)
# scenes_import --map on Argoverse 2 map archives written in AV2's layout by test/python/av2_map.py.
add_test(NAME cli_av2_map COMMAND ${HPCTRAIN_REFERENCE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/av2_map.py
         $<TARGET_FILE:scenes_import> ${CMAKE_CURRENT_BINARY_DIR}/scratch_av2_map)
set_tests_properties(cli_av2_map PROPERTIES LABELS cli TIMEOUT 60)
# scenes_import on Argoverse 2 scenario files as they ship (Parquet written by pandas + pyarrow, in
# .deps/zarr3env), against the same tables as CSV; a build without Arrow checks the refusal only.
if(HPCTRAIN_HAVE_PARQUET)
  set(HPCTRAIN_TEST_HAVE_PARQUET 1)
else()
  set(HPCTRAIN_TEST_HAVE_PARQUET 0)
endif()
add_test(NAME cli_av2_parquet COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/python/zarr3_python.sh
         ${CMAKE_CURRENT_SOURCE_DIR}/python/av2_parquet.py $<TARGET_FILE:scenes_import>
         ${CMAKE_CURRENT_BINARY_DIR}/scratch_av2_parquet ${HPCTRAIN_TEST_HAVE_PARQUET})
set_tests_properties(cli_av2_parquet PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 120)
# scenes_import on 400 AV2 scenario files: peak memory against 40 of them (one file at a time), the
# scenes equal to the same rows as one file's, a truncated file late among the 40 leaving nothing.
add_test(NAME cli_av2_stream COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/python/zarr3_python.sh
         ${CMAKE_CURRENT_SOURCE_DIR}/python/av2_stream.py $<TARGET_FILE:scenes_import>
         ${CMAKE_CURRENT_BINARY_DIR}/scratch_av2_stream ${HPCTRAIN_TEST_HAVE_PARQUET})
set_tests_properties(cli_av2_stream PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 300)
# scenes_import --map on lanelet2 maps written by lanelet2 (PyPI), against lanelet2's own centre lines.
add_test(NAME cli_lanelet_map COMMAND ${HPCTRAIN_REFERENCE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/lanelet_map.py
         $<TARGET_FILE:scenes_import> ${CMAKE_CURRENT_BINARY_DIR}/scratch_lanelet_map)
set_tests_properties(cli_lanelet_map PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 60)
# inputs/smart_quickstart.in as its header says, scaled down (48 scenes, 2 epochs), then smart_eval.
add_test(NAME cli_smart_quickstart COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/models/smart/smart_quickstart.sh
         $<TARGET_FILE:train> $<TARGET_FILE:trajgen> $<TARGET_FILE:smart_eval> ${MPIEXEC_EXECUTABLE}
         ${CMAKE_CURRENT_BINARY_DIR}/scratch_smart_quickstart ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_smart_quickstart PROPERTIES ENVIRONMENT "${HPCTRAIN_TEST_ENV};OMP_NUM_THREADS=1" TIMEOUT 120
                     PROCESSORS 2 LABELS "cli;integration")
# `model transformer`: the decoder-only language model on CausalAttention (issue 19).
hpctrain_test(test_transformer SOURCES models/transformer/test_transformer.cpp LIBS ${HPCTRAIN_TEST_LIBS}
              LABELS mpi TIMEOUT 120)
hpctrain_test(test_lm_parity_dump SOURCES models/transformer/dump_lm_parity.cpp LIBS hpctrain_models RANKS 1 LABELS parity)
set_tests_properties(test_lm_parity_dump_np1_nt1 PROPERTIES FIXTURES_SETUP lm_parity)
add_test(NAME parity_lm_torch COMMAND ${HPCTRAIN_REFERENCE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/lm_parity.py parity_lm.h5)
set_tests_properties(parity_lm_torch PROPERTIES FIXTURES_REQUIRED lm_parity SKIP_RETURN_CODE 77
                     LABELS parity WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
# inputs/lm_quickstart.in as its header says, scaled down (300 rows of the docs' bytes, 2 epochs).
add_test(NAME cli_lm_quickstart COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/models/transformer/lm_quickstart.sh
         $<TARGET_FILE:train> ${HPCTRAIN_REFERENCE_PYTHON} ${MPIEXEC_EXECUTABLE}
         ${CMAKE_CURRENT_BINARY_DIR}/scratch_lm_quickstart ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_lm_quickstart PROPERTIES ENVIRONMENT "${HPCTRAIN_TEST_ENV};OMP_NUM_THREADS=1" TIMEOUT 120
                     PROCESSORS 2 SKIP_RETURN_CODE 77 LABELS "cli;integration")
# inputs/smart_seed002.in (the seed's settings) scaled down by --set to seconds on 2 ranks.
add_test(NAME cli_smart_seed002 COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/models/smart/smart_seed002.sh
         $<TARGET_FILE:train> $<TARGET_FILE:trajgen> ${MPIEXEC_EXECUTABLE}
         ${CMAKE_CURRENT_BINARY_DIR}/scratch_smart_seed002 ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_smart_seed002 PROPERTIES ENVIRONMENT "${HPCTRAIN_TEST_ENV};OMP_NUM_THREADS=1" TIMEOUT 120
                     PROCESSORS 2 LABELS "cli;integration")
# A family that lives under test/ (one folder plus one registry line): token_bag, with a ragged
# int64 field, trained in-process and through its own build of `train` on an h5py-written file.
add_library(hpctrain_test_token_bag OBJECT models/token_bag/token_bag_model.cpp)
target_link_libraries(hpctrain_test_token_bag PUBLIC hpctrain_train PRIVATE hpctrain_warnings)
target_include_directories(hpctrain_test_token_bag PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/models)
hpctrain_test(test_token_bag SOURCES models/token_bag/test_token_bag.cpp LIBS hpctrain_test_token_bag
              hpctrain_test_allocation_counter ${HPCTRAIN_TEST_LIBS} LABELS mpi)
add_executable(train_token_bag models/token_bag/train_token_bag.cpp)
target_link_libraries(train_token_bag PRIVATE hpctrain_test_token_bag hpctrain_train hpctrain_warnings)
add_test(NAME cli_token_bag_train COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/models/token_bag/token_bag_train.sh
         $<TARGET_FILE:train_token_bag> ${HPCTRAIN_REFERENCE_PYTHON} ${MPIEXEC_EXECUTABLE}
         ${CMAKE_CURRENT_BINARY_DIR}/scratch_token_bag ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_token_bag_train PROPERTIES ENVIRONMENT "${HPCTRAIN_TEST_ENV};OMP_NUM_THREADS=1" TIMEOUT 120
                     PROCESSORS 2 SKIP_RETURN_CODE 77 LABELS "cli;integration")
