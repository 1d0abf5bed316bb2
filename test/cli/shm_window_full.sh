#!/usr/bin/env bash
# A /dev/shm too small for the shared-memory gradient window (comm_backend shm): `auto` trains over
# MPI after one warning line; an explicit `comm_backend shm` stops on every rank with one error
# line that says why. Runs `train` in a private mount namespace with a 2 MiB /dev/shm (the seed
# denoiser's window needs 2.1 MiB at 2 ranks); skipped (77) where mount namespaces are not allowed.
# usage: shm_window_full.sh TRAIN_BINARY MPIEXEC WORKDIR
set -u
train=$1 mpiexec=$2 work=$3
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fresh_dir "$work"
unshare -m true 2>/dev/null || skip "no mount namespaces here (unshare -m)"
small_shm() {  # command... : run with a 2 MiB /dev/shm
  unshare -m sh -c 'mount -t tmpfs -o size=2M tmpfs /dev/shm && exec "$@"' sh "$@"
}
"$(dirname "$train")/diffgen" "$work/data.h5" --rows 640 --seed 1 >/dev/null || fail "diffgen"
args=(inputs/diffusion_seed000.in --set data_file="$work/data.h5" --set epochs=1 --set log_every=100000
      --set metrics_file="$work/m.jsonl")
small_shm "$mpiexec" -np 2 --bind-to none "$train" "${args[@]}" --set output="$work/auto.h5" >"$work/auto.log" 2>&1 ||
  { cat "$work/auto.log"; fail "comm_backend auto did not fall back to MPI"; }
grep -q "^warning: rank .*comm_backend shm: the gradient window .*No space left on device.*the gradients go over MPI instead" \
  "$work/auto.log" || { cat "$work/auto.log"; fail "no fallback warning"; }
[ -f "$work/auto.h5" ] || fail "no weights after the fallback run"
echo "auto: $(grep -o 'warning: .*' "$work/auto.log" | head -1)"
small_shm "$(dirname "$0")/expect_error.sh" 1 "^error: rank [0-9]+: comm_backend shm: the gradient window .*No space left on device" \
  "$mpiexec" -np 2 --bind-to none "$train" "${args[@]}" --set output="$work/shm.h5" --set comm_backend=shm ||
  fail "comm_backend shm with a full /dev/shm"
[ -e "$work/shm.h5" ] && fail "weights written by a run that stopped at start"
echo "shm window full: passed"
