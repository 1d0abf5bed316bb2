#!/bin/sh
# scripts/gpu-proof-report's checks (Note [proof tolerances]) on planted metrics files: a GPU curve
# that rounds differently passes, one that drifts 10% by the end fails, a bf16 run 3% off its fp32
# run passes and one 8% off fails; validation within 3e-2 (accuracy 0.02 apart) passes, a val_loss
# 10% off, an accuracy 0.05 apart and a null val_rmse fail; a GBDT curve of a metric not named
# logloss/l2/rmse (quantile) is compared, and fails when it drifts; a run without a reference (finite)
# passes when finite and fails when its loss grows past twice the first; a dry run's `read` of a file
# without validation fails. The evaluations (Note [proof evaluations]): smart_eval CSVs whose ADE
# differs by 1e-3 and whose miss rate moves by one agent pass, an ADE 5% off, a miss rate two agents
# off and another agent count fail; sampler logs 1e-3 apart pass, a CRPS 5% off and a log without
# the scores fail. The report then says fail and names exactly the failing ones.
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
# rollouts FILE VEHICLE_ADE VEHICLE_MISS PEDESTRIANS: a smart_eval CSV (10 vehicles).
rollouts() {
  printf 'type,agents,min_ade,min_fde,miss_rate,const_vel_ade,const_vel_fde,const_vel_miss_rate\n' >"$1"
  printf 'vehicle,10,%s,30.5,%s,7.9,18.6,0.9\npedestrian,%s,2.6,5.1,1.0,0.1,0.15,0.0\n' "$2" "$3" "$4" >>"$1"
}
rollouts "$dir/eval_host.csv" 16.4 0.5 11
rollouts "$dir/eval_close.csv" 16.41 0.6 11
rollouts "$dir/eval_ade_off.csv" 17.3 0.5 11
rollouts "$dir/eval_miss_off.csv" 16.4 0.7 11
rollouts "$dir/eval_agents_off.csv" 16.4 0.5 12
# scores FILE CRPS: the diffusion sampler's evaluation lines in a log.
scores() {
  printf 'sample: wrote x.h5\nevaluation on d.h5 (72 contexts):\n' >"$1"
  printf 'ensemble-mean RMSE 0.8559 | baseline (coarse mean copied) RMSE 2.6684 | RMSE ratio 0.321\n' >>"$1"
  printf 'CRPS %s | baseline CRPS (MAE) 2.1078 | spread/skill 2.007 (M = 8; x sqrt((M+1)/M) = 2.129)\n' "$2" >>"$1"
}
scores "$dir/sample_host.log" 0.5701
scores "$dir/sample_close.log" 0.5707
scores "$dir/sample_off.log" 0.6
printf 'sample: 72 ensembles\n' >"$dir/sample_none.log"
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
  for run in close ade_off miss_off agents_off; do
    printf 'rollouts_%s\trollouts\t%s\t%s\n' "$run" "$dir/eval_host.csv" "$dir/eval_$run.csv"
  done
  for run in close off none; do
    printf 'scores_%s\tscores\t%s\t%s\n' "$run" "$dir/sample_host.log" "$dir/sample_$run.log"
  done
} >"$dir/pairs.tsv"
python3 "$src/scripts/gpu-proof-report" "$dir" --mode dry-run >"$dir/out" 2>&1
code=$?
[ "$code" -eq 1 ] || { echo "FAIL: exit $code, expected 1"; cat "$dir/out"; exit 1; }
python3 - "$dir/report.json" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
assert r["result"] == "fail", r["result"]
want = ["drift", "val_loss_off", "accuracy_off", "val_null", "half_far", "gbdt_drift", "finite_diverged",
        "read_no_validation", "rollouts_ade_off", "rollouts_miss_off", "rollouts_agents_off", "scores_off", "scores_none"]
assert r["failed"] == [f"curve {n}" for n in want], r["failed"]
print("ok: close curves and validation pass; drifts, off validation, null values, a diverged loss and a run "
      "without validation fail; close evaluations pass, off ones and a log without scores fail; report.md and "
      "report.json written")
PY
[ -s "$dir/report.md" ] || { echo "FAIL: no report.md"; exit 1; }
