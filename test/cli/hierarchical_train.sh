#!/usr/bin/env bash
# The hierarchical all-reduce in training (run by ctest from the repository root): 4 ranks laid out
# as 2 pretend nodes x 2 (HPCTRAIN_PRETEND_RANKS_PER_NODE=2) with hierarchical_allreduce true train
# the parameters of the flat MPI all-reduce within 1e-6, and a repeated run gives the same bits.
# Prints the wall time of both (2 cores, 4 ranks oversubscribed: ratios only, never a verdict).
# usage: hierarchical_train.sh TRAIN_BINARY MPIEXEC WORKDIR
set -u
train=$1 mpiexec=$2 work=$3
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fresh_dir "$work"
export OMP_NUM_THREADS=1
"$(dirname "$train")/datagen" friedman1 "$work/data.h5" --rows 4000 >/dev/null || fail "datagen"
base=(--set data_file=$work/data.h5 --set epochs=2 --set batch_size=16 --set log_every=1000000
      --set metrics_file= --set comm_backend=mpi --set bucket_mb=0)
run() {  # name, extra arguments
  local name=$1; shift
  "$mpiexec" -np 4 --oversubscribe --bind-to none -x HPCTRAIN_PRETEND_RANKS_PER_NODE "$train" inputs/quickstart.in \
    "${base[@]}" --set output="$work/$name.h5" "$@" >"$work/$name.log" 2>&1 ||
    fail "$name run failed: $(tail -3 "$work/$name.log")"
  echo "$name: $(grep -o 'Done: .*samples/s' "$work/$name.log")"
}
weights() {  # h5diff over every weight dataset; extra arguments (a tolerance) passed on
  local a=$1 b=$2 t; shift 2
  for t in fc0/weight fc0/bias fc1/weight fc1/bias fc2/weight fc2/bias; do
    h5diff -q "$@" "$a" "$b" "$t" "$t" || return 1
  done
}
export HPCTRAIN_PRETEND_RANKS_PER_NODE=2
run flat
run hierarchical --set hierarchical_allreduce=true
grep -q "gradient all-reduce: hierarchical, 2 node(s) of up to 2 rank(s)" "$work/hierarchical.log" ||
  fail "the log does not name the hierarchical all-reduce over 2 nodes: $(grep 'all-reduce' "$work/hierarchical.log")"
run hierarchical_again --set hierarchical_allreduce=true
weights "$work/hierarchical.h5" "$work/hierarchical_again.h5" || fail "a repeated hierarchical run differs"
weights "$work/flat.h5" "$work/hierarchical.h5" -d 1e-6 || fail "hierarchical and flat differ by more than 1e-6"
if weights "$work/flat.h5" "$work/hierarchical.h5"; then echo "hierarchical == flat, bitwise"
else echo "hierarchical within 1e-6 of flat"; fi
echo "PASS"
