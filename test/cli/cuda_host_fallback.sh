#!/usr/bin/env bash
# The GPU build on a node without a GPU (run by ctest from the repository root of a CUDA build):
#  1. `device auto` (the default): inputs/quickstart.in trains to the end on the host, on 2 ranks,
#     with exactly one warning line saying so; the banner names the host backend;
#  2. `device gpu`: every rank stops with exit code 2 and one error naming the deck, the key and
#     the host without a GPU.
# The GPU is hidden with CUDA_VISIBLE_DEVICES=-1, so this also runs on a machine that has one.
# usage: cuda_host_fallback.sh CUDA_TRAIN_BINARY MPIEXEC WORKDIR
set -u
train=$1 mpiexec=$2 work=$3
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fresh_dir "$work"
# common.sh's fail, with the last run's output under the message.
fail() { echo "FAIL: $*"; echo "--- stdout"; cat "$work/out" 2>/dev/null; echo "--- stderr"; cat "$work/err" 2>/dev/null; exit 1; }
export OMP_NUM_THREADS=1 CUDA_VISIBLE_DEVICES=-1
"$(dirname "$train")/datagen" friedman1 "$work/data.h5" --rows 2000 >/dev/null || fail "datagen"
run() {
  "$mpiexec" -np 2 --bind-to none "$train" inputs/quickstart.in --set data_file="$work/data.h5" \
    --set epochs=2 --set metrics_file= --set output="$work/weights.h5" "$@" >"$work/out" 2>"$work/err"
}

run
code=$?
[ "$code" -eq 0 ] || fail "device auto: exit code $code, expected 0"
warnings=$(grep -c "^warning: no GPU visible on host .*; training on the host CPUs$" "$work/err")
[ "$warnings" -eq 1 ] || fail "device auto: $warnings fallback warning lines, expected exactly 1"
grep -q "execution space OpenMP" "$work/out" || fail "device auto: the banner does not name the host backend"
[ -f "$work/weights.h5" ] || fail "device auto: no trained weights written"
echo "ok: device auto trains on the host with one warning"

run --set device=gpu
code=$?
[ "$code" -eq 2 ] || fail "device gpu: exit code $code, expected 2"
grep -Eq "^error: --set:[0-9]+: device: no GPU visible on host " "$work/err" ||
  fail "device gpu: no error line naming the key and the host"
[ "$(grep -c "^error:" "$work/err")" -eq 1 ] || fail "device gpu: not exactly one error line"
echo "ok: device gpu without a GPU is an error"
