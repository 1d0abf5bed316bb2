# Warnings on for our own targets (not for Kokkos headers, which come in as SYSTEM includes).
add_library(hpctrain_warnings INTERFACE)
target_compile_options(hpctrain_warnings INTERFACE
  $<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>:-Wall -Wextra -Wno-unused-parameter>)
