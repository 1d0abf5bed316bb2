#!/usr/bin/env bash
# Process-level failure tests of `train` on 2 ranks (run by ctest from the repository root):
#  1. kill -9 a rank at two points; the job ends; `resume auto` finishes with exactly the weights of
#     an uninterrupted run, also when the newest checkpoint is truncated and a temporary file from a
#     write killed midway is left behind;
#  2. SIGUSR1 (as SLURM sends it): checkpoint, exit code 3, resume continues to the same weights;
#  3. a frozen rank (SIGSTOP): the watchdog aborts the job and names it,
#     with the single all-reduce, bucketed all-reduces, the sharded optimizer and comm_backend shm,
#     and with shm a rank frozen while it holds a claimed chunk of the window (every rank arrived);
#  4. a rank frozen outside the watched collectives (at validation): the heartbeat names it.
# usage: failures.sh TRAIN_BINARY MPIEXEC WORKDIR
set -u
train=$1 mpiexec=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
export OMP_NUM_THREADS=1
base=(--set data_file=$work/data.h5 --set epochs=2 --set batch_size=16 --set hidden_sizes=256,256
      --set log_every=1000000 --set metrics_file= --set checkpoint_every_steps=50 --set checkpoint_keep=100)
"$(dirname "$train")/datagen" friedman1 "$work/data.h5" --rows 20000 >/dev/null || fail "datagen"
run() { "$mpiexec" -np 2 --bind-to none "$train" inputs/quickstart.in "${base[@]}" "$@"; }
# In the background, with $! the pid of mpirun itself (signals go to the launcher, as with srun).
start() { (exec "$mpiexec" -np 2 --bind-to none "$train" inputs/quickstart.in "${base[@]}" "$@") & }

# The pid of rank N of the running job (a train process of this test whose MPI rank is N).
# Weight datasets equal bit for bit (attributes differ on purpose: they hold each run's deck).
same_weights() {
  local t
  for t in fc0/weight fc0/bias fc1/weight fc1/bias fc2/weight fc2/bias; do
    h5diff -q "$1" "$2" "$t" "$t" || return 1
  done
}
rank_pid() {
  local want=$2 p
  for p in $(pgrep -f "$train inputs/quickstart.in --set data_file=$work/data.h5"); do
    if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$want"; then echo "$p"; return; fi
  done
}
wait_for_checkpoints() {  # dir count timeout
  local i
  for ((i = 0; i < $3 * 10; ++i)); do
    [ "$(ls "$1"/ckpt-*.h5 2>/dev/null | wc -l)" -ge "$2" ] && return 0
    sleep 0.1
  done
  return 1
}

run --set output=$work/reference.h5 >"$work/reference.log" 2>&1 || fail "reference run failed"
steps=$(grep -o 'Done: [0-9]* steps' "$work/reference.log" | grep -o '[0-9]*')
echo "reference: $steps steps"

for n in 2 5; do
  dir=$work/kill$n
  start --set checkpoint_dir=$dir --set output=$work/kill$n.h5 >"$work/kill$n.log" 2>&1
  launcher=$!
  wait_for_checkpoints "$dir" "$n" 60 || fail "no checkpoint $n appeared"
  victim=$(rank_pid $launcher 1)
  [ -n "$victim" ] || fail "rank 1 not found"
  kill -9 "$victim"
  for ((i = 0; i < 300; ++i)); do kill -0 $launcher 2>/dev/null || break; sleep 0.1; done
  kill -0 $launcher 2>/dev/null && { kill -9 $launcher; fail "job still running 30 s after a rank was killed"; }
  wait $launcher && fail "job killed at checkpoint $n exited 0"
  # A write killed midway leaves only a temporary file (writes are atomic); add one, and damage the
  # checkpoint `latest` names, as a bad copy or a failing file system would.
  echo partial >"$dir/ckpt-999999999.h5.tmp.12345"
  newest=$dir/$(cat "$dir/latest")
  head -c 1000 "$newest" >"$dir/truncated" && mv "$dir/truncated" "$newest"
  run --set checkpoint_dir=$dir --set resume=auto --set output=$work/kill$n.h5 >"$work/resume$n.log" 2>&1 ||
    fail "resume after kill $n failed: $(tail -3 "$work/resume$n.log")"
  grep -q "skipping unusable checkpoint: $newest" "$work/resume$n.log" || fail "truncated checkpoint not reported"
  [ -e "$dir/ckpt-999999999.h5.tmp.12345" ] && fail "stale temporary file not cleaned up"
  same_weights "$work/reference.h5" "$work/kill$n.h5" || fail "weights after kill $n + resume differ from the uninterrupted run"
  echo "kill -9 after checkpoint $n: resumed from $(grep -o 'resume: from [^ ]*' "$work/resume$n.log"), same weights"
done

dir=$work/usr1
start --set checkpoint_dir=$dir --set output=$work/usr1.h5 >"$work/usr1.log" 2>&1
launcher=$!
# Signal once training is surely under way (2 checkpoints, 100 of ~1130 steps), not after a guess.
wait_for_checkpoints "$dir" 2 60 || fail "no checkpoint before the signal"
kill -USR1 $launcher  # mpirun forwards SIGUSR1 to the ranks, as srun does with --signal
wait $launcher
rc=$?
[ $rc -eq 3 ] || fail "SIGUSR1: exit code $rc, expected 3: $(tail -3 "$work/usr1.log")"
grep -q "Stopped by signal" "$work/usr1.log" || fail "no stop message"
run --set checkpoint_dir=$dir --set resume=auto --set output=$work/usr1.h5 \
  >"$work/usr1_resume.log" 2>&1 || fail "resume after SIGUSR1 failed"
same_weights "$work/reference.h5" "$work/usr1.h5" || fail "weights after SIGUSR1 + resume differ"
echo "SIGUSR1: exit 3, $(grep -o 'checkpoint [^ ]*ckpt[^ ]*' "$work/usr1.log" | tail -1), resumed to the same weights"

# The frozen rank with the single all-reduce, with small buckets started during backward (several
# outstanding requests under the watchdog), with the sharded optimizer and with the shared-memory reducer.
frozen_rank() {  # name, extra --set arguments
  local name=$1; shift
  local dir=$work/$name
  # Long epochs and no validation: the freeze must land in a step's all-reduce, which the watchdog
  # covers and names the rank in. Frozen at an epoch boundary (validation, loading the next epoch),
  # the other rank waits in a collective outside the watchdog, and the heartbeat ends the job first
  # without a name; with epochs of a few seconds the freeze 1.5 s in falls inside the first one.
  start --set checkpoint_dir=$dir --set checkpoint_every_steps=0 --set watchdog_timeout=3 --set epochs=3 \
    --set data_file="$work/data_long.h5" --set validation_fraction=0 --set output= "$@" >"$work/$name.log" 2>&1
  local launcher=$!
  sleep 1.5
  local victim
  victim=$(rank_pid $launcher 1)
  kill -STOP "$victim"
  local start=$SECONDS
  for ((i = 0; i < 300; ++i)); do kill -0 $launcher 2>/dev/null || break; sleep 0.1; done
  kill -9 "$victim" 2>/dev/null
  kill -0 $launcher 2>/dev/null && { kill -9 $launcher; fail "$name: job still running 30 s after rank 1 froze"; }
  wait $launcher && fail "$name: job with a frozen rank exited 0"
  grep -q "watchdog: .*rank(s) 1 not responding" "$work/$name.log" ||
    fail "$name: watchdog did not name rank 1: $(grep -i watchdog "$work/$name.log")"
  echo "frozen rank ($name): job aborted after $((SECONDS - start)) s: $(grep -o 'rank(s) 1 not responding[^;]*' "$work/$name.log")"
}
"$(dirname "$train")/datagen" friedman1 "$work/data_long.h5" --rows 400000 >/dev/null || fail "datagen (long)"
frozen_rank hang --set bucket_mb=0 --set comm_backend=mpi
frozen_rank hang_buckets --set bucket_mb=0.001 --set comm_backend=mpi  # 3 buckets of the 256,256 mlp
frozen_rank hang_sharded --set optimizer_sharding=true --set comm_backend=mpi
frozen_rank hang_shm --set comm_backend=shm  # names the rank that did not publish its gradients
frozen_rank hang_shm_sharded --set comm_backend=shm --set optimizer_sharding=true
# Frozen inside the sum: rank 1 stops itself once it holds a claimed chunk (HPCTRAIN_TEST_FREEZE_IN_SUM),
# after publishing everything, so only the claim's owner record can name it (Note [claim owner]).
HPCTRAIN_TEST_FREEZE_IN_SUM=1 start --set checkpoint_every_steps=0 --set watchdog_timeout=3 --set epochs=3 \
  --set data_file="$work/data_long.h5" --set validation_fraction=0 --set output= --set comm_backend=shm \
  >"$work/hang_in_sum.log" 2>&1
launcher=$!
for ((i = 0; i < 300; ++i)); do kill -0 $launcher 2>/dev/null || break; sleep 0.1; done
victim=$(rank_pid $launcher 1)
[ -n "$victim" ] && kill -9 "$victim" 2>/dev/null
kill -0 $launcher 2>/dev/null && { kill -9 $launcher; fail "hang_in_sum: job still running 30 s after rank 1 froze"; }
wait $launcher && fail "hang_in_sum: job with a frozen rank exited 0"
grep -q "watchdog: .*rank(s) 1 not responding: stopped while summing a chunk" "$work/hang_in_sum.log" ||
  fail "hang_in_sum: watchdog did not name rank 1: $(grep -i watchdog "$work/hang_in_sum.log")"
echo "frozen rank inside the shm sum: $(grep -o 'rank(s) 1 not responding[^;]*' "$work/hang_in_sum.log")"
# Frozen at validation (HPCTRAIN_TEST_FREEZE_AT): rank 0 waits in a collective the watchdog does not
# cover; its heartbeat ends the job and names rank 1, whose signs of life stopped (Note [progress board]).
HPCTRAIN_TEST_FREEZE_AT=1:validation start --set checkpoint_every_steps=0 --set watchdog_timeout=2 --set epochs=2 \
  --set output= >"$work/hang_validation.log" 2>&1
launcher=$!
for ((i = 0; i < 300; ++i)); do kill -0 $launcher 2>/dev/null || break; sleep 0.1; done
victim=$(rank_pid $launcher 1)
[ -n "$victim" ] && kill -9 "$victim" 2>/dev/null
kill -0 $launcher 2>/dev/null && { kill -9 $launcher; fail "hang_validation: job still running 30 s after rank 1 froze"; }
wait $launcher && fail "hang_validation: job with a frozen rank exited 0"
grep -q "\[rank 0\] watchdog: no progress .*rank 1 stopped (dead or frozen" "$work/hang_validation.log" ||
  fail "hang_validation: the heartbeat did not name rank 1: $(grep -i watchdog "$work/hang_validation.log")"
echo "frozen rank at validation: $(grep -o 'rank 1 stopped[^)]*)' "$work/hang_validation.log" | head -1)"
echo "all failure scenarios passed"
