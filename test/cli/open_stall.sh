#!/bin/bash
# A rank that stalls while it opens the data (a library call that never returns, as HDF5 looping
# on a damaged NetCDF-4 file in nc_open) is ended by the heartbeat, which watches from before the
# open (Note [guard before the open], Note [beats from the open]): the job exits non-zero within a
# few watchdog timeouts, naming the file the rank was opening; no rank is left hanging.
#  1. 1 rank, its main thread stopped at the open (HPCTRAIN_TEST_FREEZE_AT=0:opening data+main):
#     its own heartbeat ends it.
#  2. 2 ranks, rank 1's main thread stopped there: the job ends naming rank 1 and the file, whichever
#     rank's heartbeat decides (rank 0 waits for rank 1 in a collective, its last beat about as old):
#     rank 1's own, naming rank 0 as waiting in a collective, or rank 0's, saying it waits and naming
#     rank 1 alive but stalled (Note [stalled peers] in src/comm/progress_board.hpp, Note [waiting in
#     a collective] in src/core/heartbeat.hpp).
#  3. 2 ranks, rank 1 frozen whole there (SIGSTOP): rank 0's heartbeat names rank 1 and the file
#     from the progress board (Note [progress board]).
#  4. 1 rank of a GNN on a NetCDF file (the fixture era5_grids'), stopped where nc_open is called
#     (HPCTRAIN_TEST_FREEZE_AT=0:opening a NetCDF file+main): the place of the hang damaged_files.py
#     found. Left out, and said so, where the fixture wrote no file (no xarray).
# Note [no guessed times] (failures.sh): the freeze points are chosen, and the jobs run side by side
# (each waits about 2 x watchdog_timeout + 5 s: Note [heartbeat after the watchdog]; watchdog_timeout
# is 1 s on every rank, as in a user's job); the guard below is a hang guard only.
# usage: open_stall.sh TRAIN_BINARY MPIEXEC WORKDIR NETCDF_FILE
set -u
train=$1 mpiexec=$2 work=$3 netcdf=$4
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fresh_dir "$work"
export OMP_NUM_THREADS=1
"$(dirname "$train")/datagen" friedman1 "$work/data.h5" --rows 200 >/dev/null || fail "datagen"
guard=120  # seconds

declare -A pids=()
# job NAME RANKS FREEZE [DECK ARGS...]: starts job NAME in the background, its own Open MPI session folder
# (failures.sh: Note [frozen jobs side by side]) and checkpoint_dir (never written: how its ranks are
# told apart).
job() {
  local name=$1 ranks=$2 freeze=$3 sessions=$work/s${#pids[@]}
  shift 3
  [ $# -gt 0 ] || set -- inputs/quickstart.in --set data_file="$work/data.h5"
  mkdir -p "$sessions"
  HPCTRAIN_TEST_FREEZE_AT=$freeze OMPI_MCA_orte_tmpdir_base=$sessions "$mpiexec" -np "$ranks" --bind-to none \
    "$train" "$@" --set checkpoint_dir="$work/$name" --set checkpoint_every_steps=0 --set epochs=1 \
    --set metrics_file= --set output= --set watchdog_timeout=1 >"$work/$name.log" 2>&1 &
  pids[$name]=$!
}
trap 'kill_jobs "checkpoint_dir=$work/"' EXIT

job stall1 1 "0:opening data+main"
job stall2 2 "1:opening data+main"
job frozen2 2 "1:opening data"
jobs=(stall1 stall2 frozen2)
if [ -f "$netcdf" ]; then
  job netcdf 1 "0:opening a NetCDF file+main" inputs/gnn_era5.in --set data_file="$netcdf" --set state_variables=t2m
  jobs+=(netcdf)
else
  echo "netcdf: not run: no $netcdf (the fixture era5_grids writes it with xarray)"
fi
end=$((SECONDS + guard))
for name in "${jobs[@]}"; do  # a frozen rank 1 killed after
  wait_failed "$name" "${pids[$name]}" "$work/$name.log" "$end" "checkpoint_dir=$work/$name "
done

file="$work/data.h5"
grep -q "^error: \[rank 0\] watchdog: no progress for [0-9]* s (last: opening data: $file)" "$work/stall1.log" ||
  fail "stall1: no message naming the file: $(grep -i error "$work/stall1.log")"
grep -Eq "^error: \[rank 1\] watchdog: no progress for [0-9]+ s \(last: opening data: $file\); rank 0 is waiting \
in a collective |^error: \[rank 0\] watchdog: no progress for [0-9]+ s \(last: [^;]*; since then waiting in a \
collective\); rank 1 is alive but has made no progress for [0-9]+ s \(its last progress: opening data: $file\)" \
  "$work/stall2.log" || fail "stall2: rank 1 and the file not named: $(grep -i error "$work/stall2.log")"
grep -q "\[rank 0\] watchdog: no progress .*rank 1 stopped (dead or frozen: .*its last progress: opening data: $file" \
  "$work/frozen2.log" || fail "frozen2: rank 0 did not name rank 1 and the file: $(grep -i error "$work/frozen2.log")"
if [ -f "$netcdf" ]; then
  grep -q "^error: \[rank 0\] watchdog: no progress for [0-9]* s (last: opening a NetCDF file: $netcdf)" \
    "$work/netcdf.log" || fail "netcdf: no message naming the file: $(grep -i error "$work/netcdf.log")"
fi
for name in "${jobs[@]}"; do
  echo "$name: $(grep -o 'watchdog: no progress[^;]*;[^:]*' "$work/$name.log" | head -1)"
done
echo "every stalled open ended, naming its file"
