#!/usr/bin/env bash
# One small 2-rank training run with every "seeing it" output on (metrics_file, tensorboard_dir,
# trace_file, checkpoints so the checkpoint phase shows): the fixture the TensorBoard read-back, the
# trace check and the plot smoke test read (run by ctest from the repository root).
# usage: observe_run.sh TRAIN_BINARY MPIEXEC WORKDIR
set -u
train=$1 mpiexec=$2 work=$3
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fresh_dir "$work"
export OMP_NUM_THREADS=1
"$(dirname "$train")/datagen" friedman1 "$work/friedman1.h5" --rows 3000 >/dev/null || fail "datagen friedman1"
"$mpiexec" -np 2 --bind-to none "$train" inputs/quickstart.in --set data_file="$work/friedman1.h5" \
    --set epochs=3 --set log_every=7 --set warmup_steps=5 --set output= \
    --set metrics_file="$work/metrics.jsonl" --set tensorboard_dir="$work/tb" \
    --set trace_file="$work/trace.json" --set checkpoint_dir="$work/ckpt" --set checkpoint_every_epochs=1 \
    >"$work/run.log" 2>&1 || { cat "$work/run.log"; fail "train"; }
for f in metrics.jsonl trace.rank0.json trace.rank1.json; do [ -s "$work/$f" ] || fail "no $f"; done
[ "$(ls "$work/tb" | grep -c '^events\.out\.tfevents\.')" = 1 ] || fail "expected one event file in $work/tb"
grep -q '\[#' "$work/run.log" && fail "the progress bar was drawn into a log file"
# The peak memory in the summary line and record: the host's always, the GPU's when it ran on one.
summary=$(grep '"type": "summary"' "$work/metrics.jsonl")
grep -Eq '^  peak memory: host [1-9][0-9.]* MiB' "$work/run.log" || fail "no host peak memory in the summary"
echo "$summary" | grep -Eq '"peak_host_mib": [1-9]' || fail "no peak_host_mib in the summary record"
if grep -q "execution space Cuda" "$work/run.log"; then
  grep -Eq '^  peak memory: host .*, GPU [0-9.]+ of [0-9.]+ GiB' "$work/run.log" || fail "no GPU peak memory in the summary"
  echo "$summary" | grep -Eq '"peak_device_mib": [1-9]' || fail "no peak_device_mib in the summary record"
else
  echo "$summary" | grep -q 'peak_device_mib' && fail "peak_device_mib in the summary of a run on the host"
fi
echo "PASS"
