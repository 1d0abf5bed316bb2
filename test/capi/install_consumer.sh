#!/bin/sh
# Installs libhpctrain into a scratch prefix and builds and runs programs against it, once through
# the CMake package (C and Fortran) and once through pkg-config (C, mpicc).
# usage: install_consumer.sh BUILD_DIR SOURCE_DIR WORK_DIR MPIEXEC
set -e
build=$1 src=$2 work=$3 mpiexec=$4
rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" > "$work.install.log" 2>&1 || { cat "$work.install.log"; exit 1; }
cmake -S "$src/test/capi/consumer" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$work/prefix" > "$work.cmake.log" 2>&1 ||
  { cat "$work.cmake.log"; exit 1; }
cmake --build "$work/cmake" > "$work.build.log" 2>&1 || { cat "$work.build.log"; exit 1; }
"$mpiexec" -n 1 "$work/cmake/consumer_c"
if [ -x "$work/cmake/consumer_fortran" ]; then "$mpiexec" -n 1 "$work/cmake/consumer_fortran"; fi
PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" mpicc "$src/test/capi/consumer/consumer.c" -o "$work/consumer_pc" \
  $(PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" pkg-config --cflags --libs hpctrain) -lm
"$mpiexec" -n 1 "$work/consumer_pc"
