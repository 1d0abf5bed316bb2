#!/bin/sh
# scripts/gpu-proof-report's checks (Note [proof tolerances]) on planted metrics files: a GPU curve
# that rounds differently passes, one that drifts 10% by the end fails, a bf16 run 3% off its fp32
# run passes and one 8% off fails; validation within 3e-2 (accuracy 0.02 apart) passes, a val_loss
# 10% off, an accuracy 0.05 apart and a null val_rmse fail; a GBDT curve of a metric not named
# logloss/l2/rmse (quantile) is compared, and fails when it drifts; a run without a reference (finite)
# passes when finite and fails when its loss grows past twice the first; a dry run's `read` of a file
# without validation fails. The report then says fail and names exactly the failing ones.
# usage: gpu_proof_report.sh SOURCE_DIR SCRATCH_DIR
src=$1
dir=$2
rm -rf "$dir" && mkdir -p "$dir" || exit 1
# curve FILE LAST_LOSS [EPOCH_RECORD_FIELDS]: three step records (the last one's loss given) and,
# with fields, an epoch record holding them.
curve() {
  printf '{"type": "step", "step": 1, "loss": 2.0}\n{"type": "step", "step": 2, "loss": 1.5}\n' >"$1"
  printf '{"type": "step", "step": 3, "loss": %s}\n' "$2" >>"$1"
  [ -z "${3:-}" ] || printf '{"type": "epoch", "epoch": 1, "step": 3, %s}\n' "$3" >>"$1"
}
val='"val_loss": 0.9, "val_accuracy": 0.5, "val_rmse": 2.0'
curve "$dir/host.jsonl" 1.0 "$val"
curve "$dir/gpu_close.jsonl" 1.0001 '"val_loss": 0.9009, "val_accuracy": 0.52, "val_rmse": 2.01'
curve "$dir/gpu_drift.jsonl" 1.1 "$val"
curve "$dir/bf16_close.jsonl" 1.03 '"val_loss": 0.93, "val_accuracy": 0.4, "val_rmse": 2.5'
curve "$dir/bf16_far.jsonl" 1.08 "$val"
curve "$dir/val_loss_off.jsonl" 1.0 '"val_loss": 0.99, "val_accuracy": 0.5, "val_rmse": 2.0'
curve "$dir/accuracy_off.jsonl" 1.0 '"val_loss": 0.9, "val_accuracy": 0.55, "val_rmse": 2.0'
curve "$dir/val_null.jsonl" 1.0 '"val_loss": 0.9, "val_accuracy": 0.5, "val_rmse": null'
curve "$dir/diverged.jsonl" 4.5 "$val"
curve "$dir/no_validation.jsonl" 1.0
# rounds FILE LAST: GBDT rounds of one quantile metric, the last one given.
rounds() {
  printf '{"type": "round", "round": 1, "test-quantile": 0.2}\n{"type": "round", "round": 2, "test-quantile": %s}\n' \
    "$2" >"$1"
}
rounds "$dir/gbdt_host.jsonl" 0.15
rounds "$dir/gbdt_close.jsonl" 0.1500001
rounds "$dir/gbdt_drift.jsonl" 0.17
printf 'bundle\tpass\t1\t10\texit 0\n' >"$dir/stages.tsv"
{
  for run in close drift val_loss_off accuracy_off val_null; do
    case $run in close | drift) f=gpu_$run ;; *) f=$run ;; esac
    printf '%s\tfp32\t%s\t%s\n' "$run" "$dir/host.jsonl" "$dir/$f.jsonl"
  done
  printf 'half_close\thalf\t%s\t%s\n' "$dir/host.jsonl" "$dir/bf16_close.jsonl"
  printf 'half_far\thalf\t%s\t%s\n' "$dir/host.jsonl" "$dir/bf16_far.jsonl"
  printf 'gbdt_close\tfp32\t%s\t%s\n' "$dir/gbdt_host.jsonl" "$dir/gbdt_close.jsonl"
  printf 'gbdt_drift\tfp32\t%s\t%s\n' "$dir/gbdt_host.jsonl" "$dir/gbdt_drift.jsonl"
  printf 'finite_ok\tfinite\t-\t%s\n' "$dir/gpu_close.jsonl"
  printf 'finite_diverged\tfinite\t-\t%s\n' "$dir/diverged.jsonl"
  printf 'read_ok\tread\t%s\t%s\n' "$dir/host.jsonl" "$dir/host.jsonl"
  printf 'read_no_validation\tread\t%s\t%s\n' "$dir/no_validation.jsonl" "$dir/no_validation.jsonl"
} >"$dir/pairs.tsv"
python3 "$src/scripts/gpu-proof-report" "$dir" --mode dry-run >"$dir/out" 2>&1
code=$?
[ "$code" -eq 1 ] || { echo "FAIL: exit $code, expected 1"; cat "$dir/out"; exit 1; }
python3 - "$dir/report.json" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
assert r["result"] == "fail", r["result"]
want = ["drift", "val_loss_off", "accuracy_off", "val_null", "half_far", "gbdt_drift", "finite_diverged",
        "read_no_validation"]
assert r["failed"] == [f"curve {n}" for n in want], r["failed"]
print("ok: close curves and validation pass; drifts, off validation, null values, a diverged loss and a run "
      "without validation fail; report.md and report.json written")
PY
[ -s "$dir/report.md" ] || { echo "FAIL: no report.md"; exit 1; }
