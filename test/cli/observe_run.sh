#!/usr/bin/env bash
# One small 2-rank training run with every "seeing it" output on (metrics_file, tensorboard_dir,
# trace_file, checkpoints so the checkpoint phase shows): the fixture the TensorBoard read-back, the
# trace check and the plot smoke test read (run by ctest from the repository root).
# usage: observe_run.sh TRAIN_BINARY MPIEXEC WORKDIR
set -u
train=$1 mpiexec=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
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
echo "PASS"
