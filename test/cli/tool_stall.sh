#!/bin/bash
# The tools' heartbeat (Note [the tools' guard] in src/comm/run_guard.hpp): a rank of a 2-rank
# `predict` or `sample` stalled at its data's open or in its loop ends the job non-zero, the message
# naming the rank and the place, instead of hanging the other rank until the job's time limit.
#  1. rank 1's main thread stopped (HPCTRAIN_TEST_FREEZE_AT=1:<place>+main, a library call that never
#     returns) where it opens its data, and at its first batch (predict) or block of contexts
#     (sample): the job ends naming rank 1 and the place, whichever rank's heartbeat decides. Rank 0
#     waits for rank 1 in a collective, its last beat about as old as rank 1's, and both run with the
#     same timeout, as a user's job does: rank 1's heartbeat names itself and rank 0 as waiting in a
#     collective, or rank 0's says it waits and names rank 1 as alive but stalled, from the progress
#     board (Notes [stalled peers] in src/comm/progress_board.hpp, [waiting in a collective]).
#  2. rank 1 frozen whole (SIGSTOP) at its open: rank 0's heartbeat names rank 1 and its place from
#     the progress board.
# Also: every multi-rank tool's --help says the option, and a bad value is refused, naming it.
# Note [no guessed times] (failures.sh): the freeze points are chosen and the jobs run side by side
# (Note [frozen jobs side by side]); the guard below is a hang guard only.
# usage: tool_stall.sh APPS_DIR MPIEXEC WORKDIR
set -u
apps=$1 mpiexec=$2 work=$3
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fresh_dir "$work"
export OMP_NUM_THREADS=1

for tool in predict sample wxeval cape_predict cape_eval smart_eval; do
  "$apps/$tool" --help | grep -q -- "--watchdog-timeout S" || fail "$tool --help does not say --watchdog-timeout"
done
"$apps/datagen" friedman1 "$work/data.h5" --rows 200 >/dev/null || fail "datagen"
"$apps/train" inputs/quickstart.in --set data_file="$work/data.h5" --set epochs=1 --set output="$work/mlp.h5" \
  --set metrics_file= >"$work/train_mlp.log" 2>&1 || fail "train mlp: $(tail -3 "$work/train_mlp.log")"
"$apps/predict" "$work/mlp.h5" "$work/data.h5" "$work/x.h5" --watchdog-timeout -1 >"$work/bad.log" 2>&1
[ $? -eq 2 ] && grep -q "watchdog-timeout -1: must be a number of seconds >= 0" "$work/bad.log" ||
  fail "predict --watchdog-timeout -1 not refused: $(cat "$work/bad.log")"
"$apps/diffgen" "$work/diff_train.h5" --rows 40 --seed 1 >/dev/null || fail "diffgen"
"$apps/diffgen" "$work/diff_test.h5" --rows 4 --seed 2 >/dev/null || fail "diffgen"
"$apps/train" inputs/diffusion_quickstart.in --set data_file="$work/diff_train.h5" --set diffusion_hidden=16 \
  --set epochs=1 --set batch_size=16 --set warmup_steps=0 --set output="$work/diff.h5" --set metrics_file= \
  >"$work/train_diff.log" 2>&1 || fail "train diffusion: $(tail -3 "$work/train_diff.log")"

declare -A pids=()
# job NAME FREEZE TOOL ARGS...: TOOL on 2 ranks in the background, rank 1 stopped at FREEZE, its
# output file $work/NAME.out.h5 (how its ranks are told apart) and its own Open MPI session folder
# (Note [frozen jobs side by side]).
job() {
  local name=$1 freeze=$2 tool=$3 sessions=$work/s${#pids[@]}
  shift 3
  mkdir -p "$sessions"
  HPCTRAIN_TEST_FREEZE_AT=$freeze OMPI_MCA_orte_tmpdir_base=$sessions "$mpiexec" -np 2 --bind-to none \
    "$apps/$tool" "$@" "$work/$name.out.h5" "${opts[@]}" --watchdog-timeout 1 >"$work/$name.log" 2>&1 &
  pids[$name]=$!
}
trap 'kill_jobs "$work/[a-z_]*\.out\.h5"' EXIT

opts=()
job predict_open "1:opening data+main" predict "$work/mlp.h5" "$work/data.h5"
job predict_batch "1:predicting a batch+main" predict "$work/mlp.h5" "$work/data.h5"
job predict_frozen "1:opening data" predict "$work/mlp.h5" "$work/data.h5"
opts=(--members 2 --method ddim --steps 2 --chunk 2)
job sample_open "1:opening data+main" sample "$work/diff.h5" "$work/diff_test.h5"
job sample_block "1:sampling+main" sample "$work/diff.h5" "$work/diff_test.h5"
end=$((SECONDS + 60))
for name in "${!pids[@]}"; do
  wait_failed "$name" "${pids[$name]}" "$work/$name.log" "$end" "$work/$name.out.h5"
done

# expect NAME PATTERN WHAT: the job's log holds a line matching PATTERN (grep -E).
expect() {
  grep -Eq "$2" "$work/$1.log" || fail "$1: $3: $(grep -i error "$work/$1.log")"
  echo "$1: $(grep -Eo '\[rank [0-9]+\] watchdog: no progress.*' "$work/$1.log" | head -1)"
}
# stalled PLACE: rank 1 named with PLACE, by its own heartbeat or by rank 0's, rank 0 as waiting (1. above).
stalled() {
  echo "^error: \[rank 1\] watchdog: no progress for [0-9]+ s \(last: $1\); rank 0 is waiting in a collective \
|^error: \[rank 0\] watchdog: no progress for [0-9]+ s \(last: [^;]*; since then waiting in a collective\); rank 1 \
is alive but has made no progress for [0-9]+ s \(its last progress: $1\)"
}
expect predict_open "$(stalled "opening data: $work/data.h5")" "rank 1 and its open not named"
expect predict_batch "$(stalled "predicting a batch")" "rank 1 and its batch not named"
expect predict_frozen "^error: \[rank 0\] watchdog: no progress .*rank 1 stopped \(dead or frozen: .*its last progress: \
opening data: $work/data.h5" "rank 0 did not name rank 1 and its open"
expect sample_open "$(stalled "opening data: $work/diff_test.h5")" "rank 1 and its open not named"
expect sample_block "$(stalled "sampling a block of contexts: $work/diff_test.h5")" "rank 1 and its block not named"
echo "every stalled tool ended, naming the rank and its place"
