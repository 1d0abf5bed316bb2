# Warnings on for our own targets (not for Kokkos headers, which come in as SYSTEM includes).
add_library(hpctrain_warnings INTERFACE)
target_compile_options(hpctrain_warnings INTERFACE
  $<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>:-Wall -Wextra -Wno-unused-parameter>)
# Note [GCC 12 -Wrestrict]: in C++20 mode (a Kokkos 5.x build) GCC 12 warns about
# `"literal" + std::string&&` with impossible sizes (GCC bug 105329), at spots that move
# with every inlining decision. Off for that compiler and standard only; C++17 builds keep it.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13
   AND CMAKE_CXX_STANDARD GREATER_EQUAL 20)
  target_compile_options(hpctrain_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
endif()
