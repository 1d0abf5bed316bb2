# The data layer: epoch order, the data path and every source (HDF5, images, netCDF, ERA5, CSV) on
# files written by the tools users use, and the decks that train on them.
# (Included by test/CMakeLists.txt: paths are relative to test/, tests run in build/test.)
hpctrain_test(test_epoch_order SOURCES data/test_epoch_order.cpp LIBS hpctrain_data RANKS 1 LABELS unit)
hpctrain_test(test_data_path SOURCES data/test_data_path.cpp LIBS hpctrain_test_allocation_counter ${HPCTRAIN_TEST_LIBS}
              LABELS mpi)
hpctrain_test(test_data_sources SOURCES data/test_data_sources.cpp data/test_image_sources.cpp
              LIBS ${HPCTRAIN_TEST_LIBS} LABELS mpi)
# The image sources on files written by Pillow (issue 37): image_folder and coco_keypoints.
add_test(NAME image_files_pillow COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/python/reference_python.sh
         ${CMAKE_CURRENT_SOURCE_DIR}/python/make_image_files.py ${CMAKE_CURRENT_BINARY_DIR}/scratch_image_files)
set_tests_properties(image_files_pillow PROPERTIES FIXTURES_SETUP image_files SKIP_RETURN_CODE 77 LABELS "mpi;images")
hpctrain_test(test_image_files SOURCES data/test_image_folder.cpp data/test_coco_keypoints.cpp data/test_image_checks.cpp
              data/test_broken_images.cpp
              LIBS ${HPCTRAIN_TEST_LIBS} LABELS "mpi;images" FIXTURES image_files)
# WebP and TIFF on files written by Pillow, against Pillow's decode of each.
add_test(NAME image_formats_pillow COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/python/reference_python.sh
         ${CMAKE_CURRENT_SOURCE_DIR}/python/make_image_formats.py ${CMAKE_CURRENT_BINARY_DIR}/scratch_image_formats)
set_tests_properties(image_formats_pillow PROPERTIES FIXTURES_SETUP image_formats SKIP_RETURN_CODE 77 LABELS "mpi;images")
hpctrain_test(test_image_formats SOURCES data/test_image_formats.cpp LIBS ${HPCTRAIN_TEST_LIBS} LABELS "mpi;images"
              FIXTURES image_formats)
# BMP, GIF and PNM on files written by Pillow (and PNM layouts by hand), against Pillow's decode.
add_test(NAME bitmap_images_pillow COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/python/reference_python.sh
         ${CMAKE_CURRENT_SOURCE_DIR}/python/make_bitmap_images.py ${CMAKE_CURRENT_BINARY_DIR}/scratch_bitmap_images)
set_tests_properties(bitmap_images_pillow PROPERTIES FIXTURES_SETUP bitmap_images SKIP_RETURN_CODE 77 LABELS "mpi;images")
hpctrain_test(test_bitmap_images SOURCES data/test_bitmap_images.cpp LIBS hpctrain_test_allocation_counter
              ${HPCTRAIN_TEST_LIBS} LABELS "mpi;images" FIXTURES bitmap_images)
# The same files' references against Pillow 13 (.deps/zarr3env), the Pillow a user installs today.
add_test(NAME bitmap_images_pillow13 COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/python/zarr3_python.sh
         ${CMAKE_CURRENT_SOURCE_DIR}/python/bitmap_images_pillow13.py ${CMAKE_CURRENT_BINARY_DIR}/scratch_bitmap_images)
set_tests_properties(bitmap_images_pillow13 PROPERTIES FIXTURES_REQUIRED bitmap_images SKIP_RETURN_CODE 77
                     LABELS "mpi;images")
# HEIF (HEIC) and AVIF on files written by heif-enc, pillow-heif and Pillow, against pillow-heif's and
# Pillow's decode (pillow-heif and Pillow >= 11.3 are in .deps/zarr3env).
add_test(NAME heif_images_pillow COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/python/zarr3_python.sh
         ${CMAKE_CURRENT_SOURCE_DIR}/python/make_heif_images.py ${CMAKE_CURRENT_BINARY_DIR}/scratch_heif_images)
set_tests_properties(heif_images_pillow PROPERTIES FIXTURES_SETUP heif_images SKIP_RETURN_CODE 77 LABELS "mpi;images")
hpctrain_test(test_heif_images SOURCES data/test_heif_images.cpp LIBS ${HPCTRAIN_TEST_LIBS} LABELS "mpi;images"
              FIXTURES heif_images)
# inputs/resnet_folder.in on a folder of HEIC, AVIF, PNG and JPEG files, a cut HEIC and AVIF skipped.
add_test(NAME cli_heif_decks COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/heif_decks.sh $<TARGET_FILE:train>
         ${HPCTRAIN_REFERENCE_PYTHON} ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_heif_decks
         ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/scratch_heif_images)
set_tests_properties(cli_heif_decks PROPERTIES ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV};OMP_NUM_THREADS=1" TIMEOUT 120
                     PROCESSORS 2 FIXTURES_REQUIRED heif_images SKIP_RETURN_CODE 77 LABELS "cli;images")
# The netcdf source on files xarray wrote (the fixture runs the reference interpreter, which has it).
add_test(NAME netcdf_grids_xarray COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/python/reference_python.sh
         ${CMAKE_CURRENT_SOURCE_DIR}/python/make_netcdf_grids.py ${CMAKE_CURRENT_BINARY_DIR}/scratch_netcdf_grids)
set_tests_properties(netcdf_grids_xarray PROPERTIES FIXTURES_SETUP netcdf_grids SKIP_RETURN_CODE 77 LABELS "mpi;gnn")
hpctrain_test(test_netcdf_source SOURCES data/test_netcdf_source.cpp LIBS ${HPCTRAIN_TEST_LIBS} LABELS "mpi;gnn"
              FIXTURES netcdf_grids)
hpctrain_test(test_grid_forcings SOURCES data/test_grid_forcings.cpp LIBS ${HPCTRAIN_TEST_LIBS} RANKS 1 LABELS "unit;gnn")
add_test(NAME era5_grids_xarray COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/python/reference_python.sh
         ${CMAKE_CURRENT_SOURCE_DIR}/python/make_era5_grids.py ${CMAKE_CURRENT_BINARY_DIR}/scratch_era5_grids)
set_tests_properties(era5_grids_xarray PROPERTIES FIXTURES_SETUP era5_grids SKIP_RETURN_CODE 77 LABELS "mpi;gnn")
add_test(NAME era5_grids_eccodes COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/python/make_era5_grib.sh
         ${CMAKE_CURRENT_BINARY_DIR}/scratch_era5_grids)
set_tests_properties(era5_grids_eccodes PROPERTIES FIXTURES_SETUP era5_grids LABELS "mpi;gnn")
hpctrain_test(test_era5_sources SOURCES data/test_era5_sources.cpp LIBS ${HPCTRAIN_TEST_LIBS} LABELS "mpi;gnn"
              FIXTURES era5_grids)
hpctrain_test(test_grid_file_lists SOURCES data/test_grid_file_lists.cpp LIBS ${HPCTRAIN_TEST_LIBS} RANKS 1
              LABELS "unit;gnn")
set_tests_properties(test_grid_file_lists_np1_nt1 PROPERTIES FIXTURES_REQUIRED era5_grids)
hpctrain_test(test_projected_grids SOURCES data/test_projected_grids.cpp LIBS ${HPCTRAIN_TEST_LIBS} RANKS 1
              LABELS "unit;gnn")
set_tests_properties(test_projected_grids_np1_nt1 PROPERTIES FIXTURES_REQUIRED era5_grids)
# Reduced Gaussian N32 by grib_filter, as NetCDF by cfgrib and xarray, and an anemoi store of it.
add_test(NAME reduced_grids_eccodes COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/python/make_reduced_grids.sh
         ${CMAKE_CURRENT_BINARY_DIR}/scratch_reduced_grids 8)
set_tests_properties(reduced_grids_eccodes PROPERTIES FIXTURES_SETUP reduced_grids LABELS "mpi;gnn")
hpctrain_test(test_unstructured_grids SOURCES data/test_unstructured_grids.cpp LIBS ${HPCTRAIN_TEST_LIBS} RANKS 1
              LABELS "unit;gnn")
set_tests_properties(test_unstructured_grids_np1_nt1 PROPERTIES FIXTURES_REQUIRED reduced_grids)
add_test(NAME era5_zarr3_xarray COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/python/zarr3_python.sh
         ${CMAKE_CURRENT_SOURCE_DIR}/python/make_era5_zarr3.py ${CMAKE_CURRENT_BINARY_DIR}/scratch_era5_zarr3)
set_tests_properties(era5_zarr3_xarray PROPERTIES FIXTURES_SETUP era5_zarr3 SKIP_RETURN_CODE 77 LABELS "mpi;gnn")
hpctrain_test(test_zarr_stores SOURCES data/test_zarr_stores.cpp LIBS ${HPCTRAIN_TEST_LIBS} nlohmann_json::nlohmann_json
              LABELS "mpi;gnn" FIXTURES era5_grids era5_zarr3)
# A CSV with a header for networks and trees alike (csv source, named columns; see the script).
add_test(NAME cli_csv_tables COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/csv_tables.sh ${PROJECT_BINARY_DIR}
         ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_csv_tables)
set_tests_properties(cli_csv_tables PROPERTIES ENVIRONMENT "${HPCTRAIN_TEST_ENV}" TIMEOUT 120 PROCESSORS 2
                     LABELS "cli;gbdt" WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
# Compressed CSV tables (docs/compressed-tables.md): pandas' gzip/bz2/xz, gzip members, zstd train the plain file's
# mlp weights and gbdt model bit for bit on 1 and 2 ranks, and a .xz of many blocks (xz -T2) on 2 ranks; predict
# reads .csv.gz, LibSVM .bz2, validation_file .gz; damaged files exit 2.
add_test(NAME cli_compressed_tables COMMAND ${HPCTRAIN_REFERENCE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/compressed_tables.py
         ${PROJECT_BINARY_DIR} ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_compressed_tables)
set_tests_properties(cli_compressed_tables PROPERTIES ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV}" TIMEOUT 300 PROCESSORS 2
                     LABELS "cli;mlp;gbdt")
# An mlp on pandas-written tables with text columns and a text label (docs/tables.md): learns, 1 rank
# == 2 ranks bitwise (rank_invariant), predict with an unseen category, refusals naming file:line.
add_test(NAME cli_mlp_tables COMMAND ${HPCTRAIN_REFERENCE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/mlp_tables.py
         ${PROJECT_BINARY_DIR} ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_mlp_tables)
set_tests_properties(cli_mlp_tables PROPERTIES ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV}" TIMEOUT 300 PROCESSORS 2
                     LABELS "cli;mlp")
# Category embeddings (docs/tables.md): a 1500-category column refused one-hot, learned embedded;
# PyTorch recomputes predict's probabilities from the CSV and the weights; 1 rank == 2 ranks bitwise.
add_test(NAME cli_mlp_embeddings COMMAND ${HPCTRAIN_REFERENCE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/mlp_embeddings.py
         ${PROJECT_BINARY_DIR} ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_mlp_embeddings)
set_tests_properties(cli_mlp_embeddings PROPERTIES ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV}" TIMEOUT 300 PROCESSORS 2
                     LABELS "cli;mlp;parity")
# Row and class weights for the mlp (docs/row_weights.md): PyTorch's weighted SGD steps and validation loss
# for mse, cross_entropy and bce; weights 1 = unweighted and 1 rank = 2 ranks bitwise; weight_file,
# class_weights balanced = their explicit columns; bad weights exit 2 naming file, line and key.
add_test(NAME cli_mlp_weights COMMAND ${HPCTRAIN_REFERENCE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/mlp_weights.py
         ${PROJECT_BINARY_DIR} ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_mlp_weights)
set_tests_properties(cli_mlp_weights PROPERTIES ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV}" TIMEOUT 300 PROCESSORS 2
                     SKIP_RETURN_CODE 77 LABELS "cli;mlp;parity")
# The mlp on LibSVM files (Note [absent LibSVM entries]): absent entries 0 by default, bit for bit the CSV of
# zeros scikit-learn's load_svmlight_file reads; libsvm_absent missing = empty cells; refusals exit 2.
add_test(NAME cli_mlp_libsvm COMMAND ${HPCTRAIN_REFERENCE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/mlp_libsvm.py
         ${PROJECT_BINARY_DIR} ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_mlp_libsvm)
set_tests_properties(cli_mlp_libsvm PROPERTIES ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV}" TIMEOUT 120 PROCESSORS 2
                     SKIP_RETURN_CODE 77 LABELS "cli;mlp;parity")
# Standardised inputs and label, missing numbers (Note [mlp standardisation]): the statistics are
# numpy's, PyTorch recomputes predict from the raw CSV, 1 rank == 2 ranks bitwise, refusals name the column.
add_test(NAME cli_mlp_standardize COMMAND ${HPCTRAIN_REFERENCE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/mlp_standardize.py
         ${PROJECT_BINARY_DIR} ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_mlp_standardize)
set_tests_properties(cli_mlp_standardize PROPERTIES ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV}" TIMEOUT 300 PROCESSORS 2
                     SKIP_RETURN_CODE 77 LABELS "cli;mlp;parity")
# Real images through the hdf5_images source: inputs/mlp_digits.in on scikit-learn's digits
# (scripts/make-digits), 2 ranks, at least 95% validation accuracy (skipped without scikit-learn/h5py).
add_test(NAME cli_mlp_digits COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/mlp_digits.sh $<TARGET_FILE:train>
         ${HPCTRAIN_REFERENCE_PYTHON} ${MPIEXEC_EXECUTABLE} ${CMAKE_CURRENT_BINARY_DIR}/scratch_mlp_digits
         ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_mlp_digits PROPERTIES ENVIRONMENT "${HPCTRAIN_TEST_ENV};OMP_NUM_THREADS=1" TIMEOUT 120
                     PROCESSORS 2 SKIP_RETURN_CODE 77 LABELS "cli;integration")
# inputs/resnet_folder.in and cape_coco.in on Pillow-written files (issue 37): 1 rank == 2 ranks, bitwise
# resume, broken files stopping every rank with one error line, cape_eval on a COCO file.
add_test(NAME cli_image_decks COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/image_decks.sh $<TARGET_FILE:train>
         $<TARGET_FILE:cape_eval> ${HPCTRAIN_REFERENCE_PYTHON} ${MPIEXEC_EXECUTABLE}
         ${CMAKE_CURRENT_BINARY_DIR}/scratch_image_decks ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_image_decks PROPERTIES ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV};OMP_NUM_THREADS=1" TIMEOUT 240
                     PROCESSORS 2 LABELS "cli;images")
# Damaged copies of valid files (test/python/damaged_files.py): cut, bytes flipped or zeroed, a
# delimiter or line dropped or doubled; each read by train or scenes_import decodes or is refused with
# one error line naming it, never a crash, hang or output left. 3 mutations of each file the script
# writes (CSV, TSV, LibSVM, HDF5, PNG, TIFF, NetCDF, track CSV) and of some of the fixtures' (JPEG,
# WebP, tiled and palette TIFF, BMP, GIF, PPM, COCO JSON, GRIB, Zarr v2 and v3; Parquet with the
# zarr3env), one mutation of six on 2 ranks. The full sweep (all 46 cases, under AddressSanitizer):
# the script's usage.
set(HPCTRAIN_DAMAGED_CASES csv tsv libsvm hdf5 png tiff netcdf tracks_csv jpeg webp coco tiff_tiled tiff_palette bmp
    gif ppm grib zarr2_chunk zarr2_meta zarr3_shard parquet tracks_parquet)
string(JOIN "," HPCTRAIN_DAMAGED_CASES ${HPCTRAIN_DAMAGED_CASES})
add_test(NAME damaged_files COMMAND ${HPCTRAIN_REFERENCE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/damaged_files.py
         ${PROJECT_BINARY_DIR} ${CMAKE_CURRENT_BINARY_DIR}/scratch_damaged_files --mutations 3 --jobs 2
         --cases ${HPCTRAIN_DAMAGED_CASES}
         --ranks2 1 --ranks2-cases csv,png,coco,grib,zarr2_chunk,parquet
         --timeout 60 --mpiexec ${MPIEXEC_EXECUTABLE} --fixtures ${CMAKE_CURRENT_BINARY_DIR}
         --parquet-python ${PROJECT_SOURCE_DIR}/.deps/zarr3env/bin/python)
set_tests_properties(damaged_files PROPERTIES ENVIRONMENT "${HPCTRAIN_REFUSAL_ENV}" TIMEOUT 180 PROCESSORS 2
                     LABELS "cli;images;gnn" FIXTURES_REQUIRED "image_files;image_formats;bitmap_images;era5_grids;era5_zarr3")
