#!/usr/bin/env bash
# GBDT on the run machinery (run by ctest from the repository root): a boosting job on 2 ranks with
# checkpoints every 3 rounds and early stopping
#  1. kill -9 of a rank: the job ends; `resume auto` on 2 ranks finishes with the model file of an
#     uninterrupted run, byte for byte, and refuses to resume with another max_depth or libsvm_absent;
#  2. SIGUSR1 (as SLURM sends it): checkpoint after the same round on every rank, exit code 3;
#     `resume auto` on 1 rank (2 -> 1) finishes with the same model file;
#  3. kill -9 of a 1-rank job: resumed on 1 rank to the same model file;
#  4. a rank frozen (SIGSTOP) after its third round: the watchdog aborts the job and names it;
# and the metrics file holds one `round` record per round and a `summary` (appended on resume).
# usage: gbdt_resume.sh TRAIN_BINARY MPIEXEC WORKDIR
set -u
train=$1 mpiexec=$2 work=$3
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fresh_dir "$work"
export OMP_NUM_THREADS=1
# inputs/gbdt_cpu64.in scaled down: bagging and column sampling on, early stopping after 8 rounds.
base=(--set data_file=$work/higgs.h5 --set ranks_per_node=0 --set num_trees=200 --set max_depth=5
      --set log_every=1000000 --set checkpoint_every_trees=3 --set checkpoint_keep=100
      --set early_stopping_rounds=8)
"$(dirname "$train")/datagen" higgs "$work/higgs.h5" --rows 8000 >/dev/null || fail "datagen"
run() { local np=$1; shift; "$mpiexec" -np "$np" --bind-to none "$train" inputs/gbdt_cpu64.in "${base[@]}" "$@"; }
# In the background, with $! the pid of mpirun itself (signals go to the launcher, as with srun).
start() { local np=$1; shift; (exec "$mpiexec" -np "$np" --bind-to none "$train" inputs/gbdt_cpu64.in "${base[@]}" "$@") & }
rank_pid() {  # pid of rank $1 of this test's job whose command line goes on with $2 (the frozen job runs besides)
  local p
  for p in $(pgrep -f "$train inputs/gbdt_cpu64.in --set data_file=$work/higgs.h5 .*$2"); do
    if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1"; then echo "$p"; return; fi
  done
}
wait_for_checkpoints() {  # dir count timeout_s
  local i
  for ((i = 0; i < $3 * 10; ++i)); do
    [ "$(ls "$1"/ckpt-*.h5 2>/dev/null | wc -l)" -ge "$2" ] && return 0
    sleep 0.1
  done
  return 1
}
wait_gone() {  # launcher pid: the job must end within 30 s
  local i
  for ((i = 0; i < 300; ++i)); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$1"; fail "job still running 30 s after its rank was killed"
}

# 4. Rank 1 frozen mid-training: rank 0 waits in a watched collective (tree building or the per-round agreement).
# Rank 1 stops itself (SIGSTOP) after its third round (HPCTRAIN_TEST_FREEZE_AT, the heartbeat's test
# hook): the point is chosen, not guessed with a sleep. The job then only waits for rank 0's watchdog
# (3 s plus half its grace), so it runs while 1.-3. do (its ranks told apart by rank_pid's second
# argument) and is checked at the end.
frozen=(--set checkpoint_dir= --set early_stopping_rounds=0 --set num_trees=100000 --set watchdog_timeout=3)
HPCTRAIN_TEST_FREEZE_AT="1:gbdt: after a round@3" start 2 "${frozen[@]}" --set output= --set metrics_file= \
  >"$work/frozen.log" 2>&1
frozen_launcher=$!
victim=""
# Whatever happens, none of its processes stays (rank 0 would wait for rank 1 forever).
trap 'kill -9 $frozen_launcher $victim $(rank_pid 0 "${frozen[*]} ") 2>/dev/null' EXIT
for ((i = 0; i < 600; ++i)); do
  [ -n "$victim" ] || victim=$(rank_pid 1 "${frozen[*]} ")
  [ -n "$victim" ] && [ "$(awk '{print $3}' "/proc/$victim/stat" 2>/dev/null)" = T ] && break
  kill -0 $frozen_launcher 2>/dev/null || fail "frozen: the job ended before rank 1 froze: $(tail -3 "$work/frozen.log")"
  sleep 0.1
done
[ "$(awk '{print $3}' "/proc/$victim/stat" 2>/dev/null)" = T ] || fail "frozen: rank 1 did not stop after round 3"
frozen_at=$SECONDS

run 2 --set output=$work/reference.json --set metrics_file=$work/reference.jsonl --set checkpoint_dir= \
  >"$work/reference.log" 2>&1 || fail "reference run failed: $(tail -3 "$work/reference.log")"
rounds=$(grep -o 'early stopping kept [0-9]* rounds' "$work/reference.log" | grep -o '[0-9]*')
trained=$(grep -c '"type": "round"' "$work/reference.jsonl")
[ -n "$rounds" ] && [ "$trained" -gt 12 ] || fail "reference: expected early stopping after more than 12 rounds"
grep -q '"type": "summary".*"valid-auc"' "$work/reference.jsonl" || fail "reference: no summary record"
echo "reference: $trained rounds trained, $rounds kept"

# 1. kill -9 of rank 1 once 2 checkpoints exist, resumed on 2 ranks.
dir=$work/kill
start 2 --set checkpoint_dir=$dir --set output=$work/kill.json --set metrics_file= >"$work/kill.log" 2>&1
launcher=$!
wait_for_checkpoints "$dir" 2 60 || fail "kill: no checkpoints appeared"
killed=$(rank_pid 1 "--set checkpoint_dir=$dir ")
[ -n "$killed" ] || fail "kill: rank 1 not found"
kill -9 "$killed"
wait_gone $launcher
wait $launcher && fail "kill: job with a killed rank exited 0"
# A key that shapes the trees cannot change on resume (the run stops before training, exit 2).
run 2 --set checkpoint_dir=$dir --set resume=auto --set max_depth=6 --set output= --set metrics_file= \
  >"$work/kill_changed.log" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "max_depth: cannot change on resume" "$work/kill_changed.log" ||
  fail "kill: resume with another max_depth: exit $rc, $(grep error "$work/kill_changed.log")"
# Nor how a LibSVM file reads (the model file keeps libsvm_absent; the trees so far saw the other reading).
run 2 --set checkpoint_dir=$dir --set resume=auto --set libsvm_absent=zero --set output= --set metrics_file= \
  >"$work/kill_absent.log" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "libsvm_absent: cannot change on resume" "$work/kill_absent.log" ||
  fail "kill: resume with another libsvm_absent: exit $rc, $(grep error "$work/kill_absent.log")"
run 2 --set checkpoint_dir=$dir --set resume=auto --set output=$work/kill.json --set metrics_file= \
  >"$work/kill_resume.log" 2>&1 || fail "kill: resume failed: $(tail -3 "$work/kill_resume.log")"
grep -q "resume: from $dir/ckpt-" "$work/kill_resume.log" || fail "kill: the run did not resume"
cmp "$work/reference.json" "$work/kill.json" || fail "kill: model after kill -9 + resume differs from the uninterrupted run's"
echo "kill -9: $(grep -o 'resume: from [^ ]* (round [0-9]*' "$work/kill_resume.log")), same model file"

# 2. SIGUSR1 to the launcher, resumed on 1 rank.
dir=$work/usr1
start 2 --set checkpoint_dir=$dir --set checkpoint_every_trees=0 --set checkpoint_every_minutes=0.0001 \
  --set output=$work/usr1.json --set metrics_file=$work/usr1.jsonl >"$work/usr1.log" 2>&1
launcher=$!
wait_for_checkpoints "$dir" 2 60 || fail "usr1: no checkpoint before the signal"
kill -USR1 $launcher  # mpirun forwards SIGUSR1 to the ranks, as srun does with --signal
wait $launcher
rc=$?
[ $rc -eq 3 ] || fail "usr1: exit code $rc, expected 3: $(tail -3 "$work/usr1.log")"
grep -q "Stopped by signal 10 after round [0-9]*: checkpoint $dir/ckpt-" "$work/usr1.log" ||
  fail "usr1: no stop message naming the checkpoint: $(tail -2 "$work/usr1.log")"
[ -e "$work/usr1.json" ] && fail "usr1: a stopped run wrote a model file"
run 1 --set checkpoint_dir=$dir --set resume=auto --set output=$work/usr1.json --set metrics_file=$work/usr1.jsonl \
  >"$work/usr1_resume.log" 2>&1 || fail "usr1: resume on 1 rank failed: $(tail -3 "$work/usr1_resume.log")"
cmp "$work/reference.json" "$work/usr1.json" || fail "usr1: model after SIGUSR1 + resume on 1 rank differs"
# Every round has a record (rounds between the checkpoint and the stop appear twice).
last=$(grep -o '"round": [0-9]*' "$work/usr1.jsonl" | tail -1 | grep -o '[0-9]*$')
[ "$last" = "$trained" ] || fail "usr1: metrics end at round $last, expected $trained"
[ "$(grep -c '"type": "summary"' "$work/usr1.jsonl")" = 1 ] || fail "usr1: expected one summary record"
echo "SIGUSR1: exit 3, $(grep -o 'after round [0-9]*' "$work/usr1.log"), resumed on 1 rank to the same model file"

# 3. kill -9 of a 1-rank job, resumed on 1 rank.
dir=$work/solo
start 1 --set checkpoint_dir=$dir --set output=$work/solo.json --set metrics_file= >"$work/solo.log" 2>&1
launcher=$!
wait_for_checkpoints "$dir" 2 60 || fail "solo: no checkpoints appeared"
kill -9 "$(rank_pid 0 "--set checkpoint_dir=$dir ")"
wait_gone $launcher
run 1 --set checkpoint_dir=$dir --set resume=auto --set output=$work/solo.json --set metrics_file= \
  >"$work/solo_resume.log" 2>&1 || fail "solo: resume failed: $(tail -3 "$work/solo_resume.log")"
cmp "$work/reference.json" "$work/solo.json" || fail "solo: model after kill -9 + resume on 1 rank differs"
echo "kill -9 at 1 rank: $(grep -o 'resume: from [^ ]* (round [0-9]*' "$work/solo_resume.log")), same model file"
# 4. (started above): the job ends within 30 s of rank 1's freeze, its watchdog naming rank 1.
while kill -0 $frozen_launcher 2>/dev/null && [ $((SECONDS - frozen_at)) -lt 30 ]; do sleep 0.1; done
kill -9 "$victim" 2>/dev/null
kill -0 $frozen_launcher 2>/dev/null && { kill -9 $frozen_launcher; fail "frozen: job still running 30 s after rank 1 froze"; }
wait $frozen_launcher && fail "frozen: job with a frozen rank exited 0"
trap - EXIT
grep -qE "watchdog: the (tree-building all-reduce of|stop agreement after) round [0-9]* did not complete .*rank\(s\) 1 not responding" \
  "$work/frozen.log" || fail "frozen: the watchdog did not name rank 1: $(grep -i -e watchdog -e heartbeat "$work/frozen.log")"
echo "frozen rank: job aborted: $(grep -o 'round [0-9]* did not complete.*responding' "$work/frozen.log")"
echo "PASS"
