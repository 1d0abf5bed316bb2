# The layer library: gradient checks, kernels, allocation, and per-layer PyTorch parity.
# (Included by test/CMakeLists.txt: paths are relative to test/, tests run in build/test.)
# A PyTorch parity check of layers (python/layer_parity.py) on the files parity_layer_<case>.h5 of
# each case given, which the dump program of fixture FIXTURE writes.
function(hpctrain_layer_parity name fixture)
  set(files)
  foreach(case ${ARGN})
    list(APPEND files parity_layer_${case}.h5)
  endforeach()
  add_test(NAME ${name} COMMAND ${HPCTRAIN_REFERENCE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/layer_parity.py ${files})
  set_tests_properties(${name} PROPERTIES FIXTURES_REQUIRED ${fixture} SKIP_RETURN_CODE 77 LABELS parity
                       WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
endfunction()
hpctrain_test(test_gradients SOURCES nn/test_gradients.cpp LIBS hpctrain_test_layer_check hpctrain_models RANKS 1 LABELS unit)
hpctrain_test(test_gradient_ready SOURCES nn/test_gradient_ready.cpp LIBS hpctrain_models RANKS 1 LABELS unit)
hpctrain_test(test_linear_chunk_sums SOURCES nn/test_linear_chunk_sums.cpp LIBS hpctrain_nn RANKS 1 THREADS 1 2 LABELS unit)
hpctrain_test(test_parity_dump SOURCES nn/dump_mlp_parity.cpp LIBS hpctrain_models RANKS 1 LABELS parity)
set_tests_properties(test_parity_dump_np1_nt1 PROPERTIES FIXTURES_SETUP mlp_parity)
add_test(NAME parity_mlp_torch COMMAND ${HPCTRAIN_REFERENCE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/mlp_parity.py
         parity_mlp_relu.h5 parity_mlp_gelu.h5 parity_mlp_silu.h5 parity_mlp_tanh.h5 parity_mlp_embeddings.h5)
set_tests_properties(parity_mlp_torch PROPERTIES FIXTURES_REQUIRED mlp_parity SKIP_RETURN_CODE 77
                     LABELS parity WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
# The layer library: every layer and loss through the one finite-difference harness (nn/layer_check),
# the determinism of index sums, dropout keys, Linear's GEMM routes batch-invariant; and per-layer PyTorch
# parity (layer_parity.py).
hpctrain_test(test_layers SOURCES nn/test_layers.cpp nn/test_layer_rules.cpp nn/test_linear_routes.cpp
              LIBS hpctrain_test_layer_check hpctrain_nn
              RANKS 1 THREADS 1 2 LABELS unit)
hpctrain_test(test_layer_parity_dump SOURCES nn/dump_layer_parity.cpp nn/dump_attention_parity.cpp nn/layer_parity_case.cpp
              LIBS hpctrain_nn RANKS 1 LABELS parity)
set_tests_properties(test_layer_parity_dump_np1_nt1 PROPERTIES FIXTURES_SETUP layer_parity)
hpctrain_layer_parity(parity_layers_torch layer_parity
                      linear_identity linear_relu linear_gelu linear_silu linear_tanh activation_relu activation_gelu
                      activation_silu activation_tanh add_silu layer_norm layer_norm_3d embedding gather scatter_add
                      concat dropout mse cross_entropy cross_entropy_smooth bce)
hpctrain_test(test_layer_allocation SOURCES nn/test_layer_allocation.cpp LIBS hpctrain_test_allocation_counter hpctrain_nn RANKS 1 THREADS 1 2 LABELS unit)
hpctrain_test(test_workspace SOURCES nn/test_workspace.cpp LIBS hpctrain_nn RANKS 1 LABELS unit)
# The convolutional layers (issue 22): gradient checks, gemm == direct, synchronised batch norm at 1 and 2 ranks.
hpctrain_test(test_cnn_layers SOURCES nn/test_cnn_layers.cpp LIBS hpctrain_test_layer_check hpctrain_nn RANKS 1 2 LABELS unit)
hpctrain_test(test_cnn_kernels SOURCES nn/test_cnn_kernels.cpp LIBS hpctrain_nn RANKS 1 LABELS unit)
# bf16/fp16 GEMMs (Note [half GEMMs]): cuBLAS tensor cores vs a host reference on GPU builds, the emulation on host builds.
hpctrain_test(test_gemm_half SOURCES nn/test_gemm_half.cpp LIBS hpctrain_nn RANKS 1 LABELS "unit;cuda")
# cuDNN convolutions (Note [cuDNN plans]) against the gemm path on GPU builds with a GPU; the host's
# library path (oneDNN / direct, half emulated) against it everywhere else, the GPU build's host twin included.
hpctrain_test(test_conv_cudnn SOURCES nn/test_conv_cudnn.cpp LIBS hpctrain_nn RANKS 1 LABELS "unit;cuda")
# The oneDNN convolutions compiled against oneDNN 3.2's headers and run on its library alone (Note
# [oneDNN 2 and 3]), whichever oneDNN this build uses: Debian's 2.6.3 must not hide a break of the 3.x
# API (spack's onednn). Needs HPCTRAIN_ONEDNN3_PREFIX (scripts/setup --reference fetches it).
if(NOT Kokkos_ENABLE_CUDA)
  set(onednn3 ${HPCTRAIN_ONEDNN3_PREFIX})
  # Configured again when the prefix appears there (scripts/setup --reference after the first cmake).
  get_filename_component(onednn3_parent ${onednn3} DIRECTORY)
  if(IS_DIRECTORY ${onednn3_parent})
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${onednn3_parent})
  endif()
  if(EXISTS ${onednn3}/include/oneapi/dnnl/dnnl_version.h AND EXISTS ${onednn3}/lib/libdnnl.so.3)
    add_executable(test_conv_onednn3 nn/test_conv_onednn3.cpp ${PROJECT_SOURCE_DIR}/src/nn/conv_onednn.cpp)
    target_include_directories(test_conv_onednn3 PRIVATE ${PROJECT_SOURCE_DIR}/src)
    target_include_directories(test_conv_onednn3 SYSTEM BEFORE PRIVATE ${onednn3}/include)
    target_compile_definitions(test_conv_onednn3 PRIVATE HPCTRAIN_HAVE_ONEDNN=1)
    # Kokkos for nn/conv.hpp's headers only; nothing here links the build's own oneDNN.
    target_link_libraries(test_conv_onednn3 PRIVATE ${onednn3}/lib/libdnnl.so.3 GTest::gtest_main Kokkos::kokkos
                                                    hpctrain_warnings)
    add_test(NAME test_conv_onednn3 COMMAND test_conv_onednn3)
  else()
    add_test(NAME test_conv_onednn3 COMMAND sh -c "echo 'no oneDNN 3 in ${onednn3}: run scripts/setup \
--reference (scripts/fetch-onednn3), then cmake again'; exit 77")
  endif()
  set_tests_properties(test_conv_onednn3 PROPERTIES SKIP_RETURN_CODE 77 LABELS unit PROCESSORS 1
                       ENVIRONMENT OMP_NUM_THREADS=1 WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
endif()
hpctrain_test(test_cnn_parity_dump SOURCES nn/dump_cnn_parity.cpp LIBS hpctrain_nn RANKS 1 LABELS parity)
set_tests_properties(test_cnn_parity_dump_np1_nt1 PROPERTIES FIXTURES_SETUP cnn_parity)
hpctrain_layer_parity(parity_cnn_layers_torch cnn_parity
                      conv7x7s2 conv3x3 conv3x3s2_direct conv3x3_dilated_grouped conv1x1 conv1x1s2 batch_norm2d
                      max_pool2d global_avg_pool resize_up resize_down
                      conv7x7s2_onednn conv3x3s2_onednn conv3x3_dilated_grouped_onednn conv1x1s2_onednn)  # last: oneDNN's
# The attention layers of the SMART family (issue 19): gradient checks, and their PyTorch parity.
hpctrain_test(test_attention_layers SOURCES nn/test_attention_layers.cpp nn/test_edge_blocked.cpp LIBS hpctrain_test_layer_check hpctrain_nn
              RANKS 1 THREADS 1 2 LABELS unit)
hpctrain_layer_parity(parity_attention_torch layer_parity
                      edge_softmax edge_attention edge_attention_self fourier_embedding causal_attention)
if(Kokkos_ENABLE_CUDA)
  hpctrain_gpu_test(test_layer_allocation)  # the GPU build's layers allocate nothing either, on a GPU node
endif()
