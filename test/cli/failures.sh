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
# Note [no guessed times]: every point of failure is chosen, not hit by a sleep: rank 1 stops
# itself (HPCTRAIN_TEST_FREEZE_AT, HPCTRAIN_TEST_FREEZE_IN_SUM) at a given step or place, and the
# test waits for what it needs (the rank stopped, a signal pending in it, the job ended). The time
# limits below are hang guards only, far above what any step takes on a loaded machine.
# Note [frozen jobs side by side]: the 7 jobs of 3. and 4. spend their time waiting with rank 1
# stopped (rank 0's watchdog decides 1 s + half its grace after the freeze, the heartbeat 7 s after
# the last sign of life), so they run at once: the wait of the longest instead of the sum of all
# (33 s one after another). Each job has its own checkpoint_dir, which rank_pid tells them by, and
# its own Open MPI session folder: mpiruns started at once under one orte_tmpdir_base race to create
# the same ompi.<host>.<uid> folder, and the loser fails in orte_init ("File exists"). Their names
# are one digit long, as the session folder holds a socket whose path must stay under 108 bytes.
# usage: failures.sh TRAIN_BINARY MPIEXEC WORKDIR
set -u
train=$1 mpiexec=$2 work=$3
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fresh_dir "$work"
export OMP_NUM_THREADS=1
base=(--set data_file=$work/data.h5 --set epochs=2 --set batch_size=16 --set hidden_sizes=256,256
      --set log_every=1000000 --set metrics_file= --set checkpoint_every_steps=25 --set checkpoint_keep=100)
"$(dirname "$train")/datagen" friedman1 "$work/data.h5" --rows 4000 >/dev/null || fail "datagen"  # 2 epochs of 113 steps
run() { "$mpiexec" -np 2 --bind-to none "$train" inputs/quickstart.in "${base[@]}" "$@"; }
# In the background, with $! the pid of mpirun itself (signals go to the launcher, as with srun).
start() { (exec "$mpiexec" -np 2 --bind-to none "$train" inputs/quickstart.in "${base[@]}" "$@") & }
guard=120  # seconds: a hang guard for each wait (the test's TIMEOUT is 300)

# The pid of rank N of the running job (a train process of this test whose MPI rank is N); with
# MARK, of the job whose checkpoint_dir is $work/MARK (the jobs of 3. and 4. run side by side).
rank_pid() {
  local p
  for p in $(pgrep -f "$train inputs/quickstart.in --set data_file=$work/data.h5 .*${2:+--set checkpoint_dir=$work/$2 }"); do
    if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1"; then echo "$p"; return; fi
  done
}
# On exit, whatever happened: no launcher or (stopped) rank of this test is left behind.
cleanup() {
  local p
  for p in "${launcher:-}" "${launchers[@]}"; do kill -9 "$p" 2>/dev/null; done
  for p in $(pgrep -f "$train inputs/quickstart.in --set data_file=$work/data.h5"); do kill -9 "$p" 2>/dev/null; done
}
declare -A launchers=() started=()
trap cleanup EXIT
rank_stopped() {  # rank N of the job is stopped (state T): it reached its freeze point
  local p
  p=$(rank_pid "$1")
  [ -n "$p" ] && [ "$(sed -n 's/^.*) \(.\) .*/\1/p' "/proc/$p/stat" 2>/dev/null)" = T ]
}
usr1_pending() {  # SIGUSR1 (10) pending in process $1: bit 9 of SigPnd or ShdPnd
  local m
  for m in $(awk '/^(SigPnd|ShdPnd):/ { print $2 }' "/proc/$1/status" 2>/dev/null); do
    (( 0x$m & 0x200 )) && return 0
  done
  return 1
}
# until_job WHAT LOG COMMAND...: polls COMMAND until it succeeds; fails if the job ($launcher) ended
# first or after the hang guard.
until_job() {
  local what=$1 log=$2 end=$((SECONDS + guard)); shift 2
  until "$@"; do
    kill -0 "$launcher" 2>/dev/null || fail "$what: the job ended first: $(tail -3 "$log")"
    [ "$SECONDS" -lt "$end" ] || fail "$what: not within $guard s"
    sleep 0.1
  done
}
# job_exit WHAT [MARK]: waits for the job ($launcher) to end and returns its exit status; a rank it
# left behind (frozen) is killed.
job_exit() {
  local end=$((SECONDS + guard)) rc p
  while kill -0 "$launcher" 2>/dev/null; do
    [ "$SECONDS" -lt "$end" ] || fail "$1: job still running after $guard s"
    sleep 0.1
  done
  wait "$launcher"
  rc=$?
  for p in $(rank_pid 0 "${2:-}") $(rank_pid 1 "${2:-}"); do kill -9 "$p" 2>/dev/null; done
  return $rc
}
# Weight datasets equal bit for bit (attributes differ on purpose: they hold each run's deck).
same_weights() {
  local t
  for t in fc0/weight fc0/bias fc1/weight fc1/bias fc2/weight fc2/bias; do
    h5diff -q "$1" "$2" "$t" "$t" || return 1
  done
}
ckpt() { printf '%s/ckpt-%09d.h5' "$1" "$2"; }

run --set output=$work/reference.h5 >"$work/reference.log" 2>&1 || fail "reference run failed"
steps=$(grep -o 'Done: [0-9]* steps' "$work/reference.log" | grep -o '[0-9]*')
echo "reference: $steps steps"

# 1. Rank 1 stops at the start of the step after checkpoint n (of every 25 steps) and is killed there:
# after checkpoint 2, and after checkpoint 5 in the second epoch.
for n in 2 5; do
  dir=$work/kill$n
  HPCTRAIN_TEST_FREEZE_AT="1:a training step@$((n * 25 + 1))" \
    start --set checkpoint_dir=$dir --set output=$work/kill$n.h5 >"$work/kill$n.log" 2>&1
  launcher=$!
  until_job "kill $n: rank 1 at step $((n * 25 + 1))" "$work/kill$n.log" rank_stopped 1
  kill -9 "$(rank_pid 1)"
  job_exit "kill $n" && fail "job killed at checkpoint $n exited 0"
  newest=$dir/$(cat "$dir/latest")
  [ "$newest" = "$(ckpt "$dir" $((n * 25)))" ] || fail "kill $n: newest checkpoint $newest"
  # A write killed midway leaves only a temporary file (writes are atomic); add one, and damage the
  # checkpoint `latest` names, as a bad copy or a failing file system would.
  echo partial >"$dir/ckpt-999999999.h5.tmp.12345"
  head -c 1000 "$newest" >"$dir/truncated" && mv "$dir/truncated" "$newest"
  run --set checkpoint_dir=$dir --set resume=auto --set output=$work/kill$n.h5 >"$work/resume$n.log" 2>&1 ||
    fail "resume after kill $n failed: $(tail -3 "$work/resume$n.log")"
  grep -q "skipping unusable checkpoint: $newest" "$work/resume$n.log" || fail "truncated checkpoint not reported"
  grep -q "resume: from $(ckpt "$dir" $((n * 25 - 25)))" "$work/resume$n.log" ||
    fail "kill $n: not resumed from the checkpoint before the truncated one: $(grep resume: "$work/resume$n.log")"
  [ -e "$dir/ckpt-999999999.h5.tmp.12345" ] && fail "stale temporary file not cleaned up"
  same_weights "$work/reference.h5" "$work/kill$n.h5" || fail "weights after kill $n + resume differ from the uninterrupted run"
  echo "kill -9 after checkpoint $n: resumed from $(grep -o 'resume: from [^ ]*' "$work/resume$n.log"), same weights"
done

# 2. SIGUSR1 to mpirun while rank 1 is stopped at step 51: once the forwarded signal is pending in
# rank 1 it continues, and the ranks agree to stop at that step.
dir=$work/usr1
HPCTRAIN_TEST_FREEZE_AT="1:a training step@51" \
  start --set checkpoint_dir=$dir --set output=$work/usr1.h5 >"$work/usr1.log" 2>&1
launcher=$!
until_job "usr1: rank 1 at step 51" "$work/usr1.log" rank_stopped 1
victim=$(rank_pid 1)
kill -USR1 $launcher  # mpirun forwards SIGUSR1 to the ranks, as srun does with --signal
until_job "usr1: SIGUSR1 forwarded to rank 1" "$work/usr1.log" usr1_pending "$victim"
kill -CONT "$victim"
job_exit usr1
rc=$?
[ $rc -eq 3 ] || fail "SIGUSR1: exit code $rc, expected 3: $(tail -3 "$work/usr1.log")"
grep -q "Stopped by signal 10 at step 51: checkpoint $(ckpt "$dir" 51)" "$work/usr1.log" ||
  fail "no stop message at step 51: $(grep -i stopped "$work/usr1.log")"
run --set checkpoint_dir=$dir --set resume=auto --set output=$work/usr1.h5 \
  >"$work/usr1_resume.log" 2>&1 || fail "resume after SIGUSR1 failed"
same_weights "$work/reference.h5" "$work/usr1.h5" || fail "weights after SIGUSR1 + resume differ"
echo "SIGUSR1: exit 3, $(grep -o 'checkpoint [^ ]*ckpt[^ ]*' "$work/usr1.log" | tail -1), resumed to the same weights"

# 3. and 4. run side by side (Note [frozen jobs side by side]): each job has rank 1 stopped and waits
# seconds for the watchdog or the heartbeat; every job is told apart by its checkpoint_dir ($work/NAME,
# never written to: checkpoint_every_steps 0), so its waits and checks are its own.
# hang_start NAME ARGS...: starts job NAME (the freeze point is set in the caller's environment).
hang_start() {
  local name=$1; shift
  local sessions=${OMPI_MCA_orte_tmpdir_base:-$work/sessions}/${#launchers[@]}
  mkdir -p "$sessions"
  OMPI_MCA_orte_tmpdir_base=$sessions start --set checkpoint_dir=$work/$name --set checkpoint_every_steps=0 \
    --set watchdog_timeout=1 --set output= "$@" >"$work/$name.log" 2>&1
  launchers[$name]=$!
  started[$name]=$SECONDS
}
# hang_exit NAME: waits for job NAME to end; it must fail.
hang_exit() {
  launcher=${launchers[$1]}
  job_exit "$1" "$1" && fail "$1: job with a frozen rank exited 0"
  launcher=
}

# 3. Rank 1 frozen at the start of its second step: rank 0 waits in that step's all-reduce, which
# the watchdog covers and names the rank in; with the single all-reduce, small buckets started during
# backward (several outstanding requests under the watchdog), the sharded optimizer and the
# shared-memory reducer. The heartbeat (Note [heartbeat after the watchdog]) comes later.
frozen_rank() {  # name, extra --set arguments
  local name=$1; shift
  HPCTRAIN_TEST_FREEZE_AT="1:a training step@2" hang_start "$name" --set validation_fraction=0 "$@"
}
frozen_rank hang --set bucket_mb=0 --set comm_backend=mpi
frozen_rank hang_buckets --set bucket_mb=0.001 --set comm_backend=mpi  # 3 buckets of the 256,256 mlp
frozen_rank hang_sharded --set optimizer_sharding=true --set comm_backend=mpi
frozen_rank hang_shm --set comm_backend=shm  # names the rank that did not publish its gradients
frozen_rank hang_shm_sharded --set comm_backend=shm --set optimizer_sharding=true
# Frozen inside the sum: rank 1 stops itself once it holds a claimed chunk (HPCTRAIN_TEST_FREEZE_IN_SUM),
# after publishing everything, so only the claim's owner record can name it (Note [claim owner]).
HPCTRAIN_TEST_FREEZE_IN_SUM=1 hang_start hang_in_sum --set validation_fraction=0 --set comm_backend=shm
# 4. Frozen at validation (HPCTRAIN_TEST_FREEZE_AT): rank 0 waits in a collective the watchdog does not
# cover; its heartbeat ends the job and names rank 1, whose signs of life stopped (Note [progress board]).
HPCTRAIN_TEST_FREEZE_AT=1:validation hang_start hang_validation --set epochs=1

for name in hang hang_buckets hang_sharded hang_shm hang_shm_sharded; do
  hang_exit "$name"
  grep -q "watchdog: .*rank(s) 1 not responding" "$work/$name.log" ||
    fail "$name: watchdog did not name rank 1: $(grep -i watchdog "$work/$name.log")"
  echo "frozen rank ($name): job aborted after $((SECONDS - started[$name])) s: $(grep -o 'rank(s) 1 not responding[^;]*' "$work/$name.log")"
done
hang_exit hang_in_sum
grep -q "watchdog: .*rank(s) 1 not responding: stopped while summing a chunk" "$work/hang_in_sum.log" ||
  fail "hang_in_sum: watchdog did not name rank 1: $(grep -i watchdog "$work/hang_in_sum.log")"
echo "frozen rank inside the shm sum: $(grep -o 'rank(s) 1 not responding[^;]*' "$work/hang_in_sum.log")"
hang_exit hang_validation
grep -q "\[rank 0\] watchdog: no progress .*rank 1 stopped (dead or frozen" "$work/hang_validation.log" ||
  fail "hang_validation: the heartbeat did not name rank 1: $(grep -i watchdog "$work/hang_validation.log")"
echo "frozen rank at validation: $(grep -o 'rank 1 stopped[^)]*)' "$work/hang_validation.log" | head -1)"
echo "all failure scenarios passed"
