#!/usr/bin/env bash
# lr_schedule plateau and early stopping in a real `train` run (run by ctest from the repository
# root, on 2 ranks): the MLP of inputs/quickstart.in on a small Friedman #1 set, its rate dropping as
# the validation loss levels off, until early stopping ends the run with exit 0; the log lines and
# the metrics records show both. A deck that asks for either without validation rows, or sets
# early_stopping_patience for gbdt, exits 2 naming the key.
# usage: plateau_run.sh TRAIN_BINARY MPIEXEC WORKDIR
set -u
train=$1 mpiexec=$2 work=$3
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fresh_dir "$work"
export OMP_NUM_THREADS=1
here=$(dirname "$0")
"$(dirname "$train")/datagen" friedman1 "$work/friedman1.h5" --rows 2000 >/dev/null || fail "datagen friedman1"
# early_stopping_min_delta is in the loss's units, the standardised label's (Note [mlp
# standardisation]): 4e-5 is 1e-3 of Friedman #1's label (variance about 24).
"$mpiexec" -np 2 --bind-to none "$train" inputs/quickstart.in --set data_file="$work/friedman1.h5" \
    --set epochs=60 --set log_every=10 --set warmup_steps=10 --set lr=1e-2 --set lr_schedule=plateau --set plateau_patience=1 \
    --set plateau_factor=0.3 --set early_stopping_patience=4 --set early_stopping_min_delta=4e-5 \
    --set metrics_file="$work/metrics.jsonl" --set output="$work/out.h5" --set checkpoint_dir="$work/ckpt" \
    >"$work/run.log" 2>&1 || { cat "$work/run.log"; fail "train"; }
grep -E '^  plateau: lr|^Early stopping|^Epoch' "$work/run.log"
grep -q '^  plateau: lr 0.01 -> 0.003 after epoch' "$work/run.log" || fail "no plateau line for the first drop"
grep -q '^Early stopping after epoch [0-9]*/60: ' "$work/run.log" || fail "no early stopping line"
grep -q '^Epoch 60/60' "$work/run.log" && fail "it trained all 60 epochs"
[ "$(grep -c '"type": "plateau"' "$work/metrics.jsonl")" -ge 2 ] || fail "fewer than 2 plateau records"
[ "$(grep -c '"type": "early_stop"' "$work/metrics.jsonl")" = 1 ] || fail "expected one early_stop record"
grep -q '"type": "summary"' "$work/metrics.jsonl" || fail "no summary record"
[ -s "$work/out.h5" ] || fail "no output after the early stop"
# The step records' rates (every 10th step, from the end of warmup): only ever lower, and lowered.
grep '"type": "step"' "$work/metrics.jsonl" | sed 's/.*"lr": \([^,}]*\).*/\1/' >"$work/lr.txt"
awk 'NR > 1 && $1 > prev * (1 + 1e-9) { bad = 1 } { prev = $1 } END { exit bad }' "$work/lr.txt" ||
  fail "the rate rose after warmup"
[ "$(sort -u "$work/lr.txt" | wc -l)" -ge 3 ] || fail "the step records do not show the rate dropping"
for key in early_stopping_patience=2 lr_schedule=plateau; do
  "$here/expect_error.sh" 2 "^error: .*--set:[0-9]+: ${key%%=*}: .*needs a validation split" \
      "$mpiexec" -np 2 --bind-to none "$train" inputs/quickstart.in --set data_file="$work/friedman1.h5" \
      --set validation_fraction=0 --set output= --set metrics_file= --set "$key" || fail "$key without validation rows"
done
"$here/expect_error.sh" 2 "^error: .*early_stopping_patience: .*early_stopping_rounds" \
    "$train" inputs/gbdt_binary.in --set early_stopping_patience=2 || fail "gbdt with early_stopping_patience"
echo "PASS"
