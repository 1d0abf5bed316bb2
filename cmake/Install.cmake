# Installation of libhpctrain (the in-situ library): the shared libraries, hpctrain.h, the
# Fortran module, a CMake package config exporting hpctrain::hpctrain (and hpctrain::hpctrain_fortran)
# and pkg-config files. The static layer libraries are inside libhpctrain.so and not installed.
include(CMakePackageConfigHelpers)
set(HPCTRAIN_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/hpctrain)
# The installed library finds Kokkos, HDF5 and BLAS where it was linked against them.
# CMake leaves out link directories inside the project (a Kokkos prefix under the source tree, as
# .deps here), so Kokkos's directory is added by name.
set(HPCTRAIN_KOKKOS_RPATH)
foreach(lib Kokkos::kokkoscore Kokkos::kokkoskernels)
  if(TARGET ${lib})
    get_target_property(location ${lib} LOCATION)
    if(location)
      get_filename_component(dir ${location} DIRECTORY)
      list(APPEND HPCTRAIN_KOKKOS_RPATH ${dir})
    endif()
  endif()
endforeach()
list(REMOVE_DUPLICATES HPCTRAIN_KOKKOS_RPATH)
set_target_properties(hpctrain PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON INSTALL_RPATH "${HPCTRAIN_KOKKOS_RPATH}")
set(HPCTRAIN_INSTALL_TARGETS hpctrain)
if(HPCTRAIN_HAS_FORTRAN)
  list(APPEND HPCTRAIN_INSTALL_TARGETS hpctrain_fortran)
  set_target_properties(hpctrain_fortran PROPERTIES INSTALL_RPATH "$ORIGIN")
  install(FILES ${PROJECT_BINARY_DIR}/fortran_modules/hpctrain.mod DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/hpctrain)
endif()
install(TARGETS ${HPCTRAIN_INSTALL_TARGETS} EXPORT hpctrainTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        PUBLIC_HEADER DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT hpctrainTargets NAMESPACE hpctrain:: DESTINATION ${HPCTRAIN_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/hpctrainConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/hpctrainConfig.cmake INSTALL_DESTINATION ${HPCTRAIN_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/hpctrainConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/hpctrainConfig.cmake ${PROJECT_BINARY_DIR}/hpctrainConfigVersion.cmake
        DESTINATION ${HPCTRAIN_CMAKE_DIR})
# Relocatable pkg-config files: the prefix is found from the .pc file's own place.
file(RELATIVE_PATH HPCTRAIN_PC_TO_PREFIX "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
configure_file(${PROJECT_SOURCE_DIR}/cmake/hpctrain.pc.in ${PROJECT_BINARY_DIR}/hpctrain.pc @ONLY)
set(HPCTRAIN_PC_FILES ${PROJECT_BINARY_DIR}/hpctrain.pc)
if(HPCTRAIN_HAS_FORTRAN)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/hpctrain_fortran.pc.in ${PROJECT_BINARY_DIR}/hpctrain_fortran.pc @ONLY)
  list(APPEND HPCTRAIN_PC_FILES ${PROJECT_BINARY_DIR}/hpctrain_fortran.pc)
endif()
install(FILES ${HPCTRAIN_PC_FILES} DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
