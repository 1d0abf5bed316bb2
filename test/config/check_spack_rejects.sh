#!/bin/sh
# scripts/check-spack fails on test/config/spack_typos.yaml and names each of its four mistakes.
# usage: check_spack_rejects.sh SOURCE_DIR
src=$1
out=$("$src/scripts/check-spack" "$src/test/config/spack_typos.yaml") && { echo "FAIL: exit 0 on typos"; exit 1; }
for want in "spack:viewx: not a section" "kokkos has no variant 'cudaa'" "unknown package 'kokos'" \
            "hdf5 has no variant 'mpii'"; do
  echo "$out" | grep -qF "$want" || { echo "$out"; echo "FAIL: not reported: $want"; exit 1; }
done
echo "$out" | grep -q "fabrics" && { echo "$out"; echo "FAIL: openmpi's fabrics variant flagged"; exit 1; }
echo "PASS: every mistake named"
