#!/bin/sh
# scripts/gpu-proof-report's loss-curve checks (Note [proof tolerances]) on planted metrics files: a
# GPU curve that rounds differently passes, one that drifts 10% by the end fails, a bf16 run 3% off
# its fp32 run passes and one 8% off fails; the report then says fail and names exactly those two.
# usage: gpu_proof_report.sh SOURCE_DIR SCRATCH_DIR
src=$1
dir=$2
rm -rf "$dir" && mkdir -p "$dir" || exit 1
# curve FILE SCALE_OF_THE_LAST_POINT: three step records, the last one's loss scaled.
curve() {
  printf '{"type": "step", "step": 1, "loss": 2.0}\n{"type": "step", "step": 2, "loss": 1.5}\n' >"$1"
  printf '{"type": "step", "step": 3, "loss": %s}\n' "$2" >>"$1"
}
curve "$dir/host.jsonl" 1.0
curve "$dir/gpu_close.jsonl" 1.0001
curve "$dir/gpu_drift.jsonl" 1.1
curve "$dir/bf16_close.jsonl" 1.03
curve "$dir/bf16_far.jsonl" 1.08
printf 'bundle\tpass\t1\t10\texit 0\n' >"$dir/stages.tsv"
{
  printf 'close\tfp32\t%s\t%s\n' "$dir/host.jsonl" "$dir/gpu_close.jsonl"
  printf 'drift\tfp32\t%s\t%s\n' "$dir/host.jsonl" "$dir/gpu_drift.jsonl"
  printf 'half_close\thalf\t%s\t%s\n' "$dir/host.jsonl" "$dir/bf16_close.jsonl"
  printf 'half_far\thalf\t%s\t%s\n' "$dir/host.jsonl" "$dir/bf16_far.jsonl"
} >"$dir/pairs.tsv"
python3 "$src/scripts/gpu-proof-report" "$dir" --mode dry-run >"$dir/out" 2>&1
code=$?
[ "$code" -eq 1 ] || { echo "FAIL: exit $code, expected 1"; cat "$dir/out"; exit 1; }
python3 - "$dir/report.json" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
assert r["result"] == "fail", r["result"]
assert r["failed"] == ["curve drift", "curve half_far"], r["failed"]
print("ok: close curves pass, a 10% drift and an 8% bf16 gap fail; report.md and report.json written")
PY
[ -s "$dir/report.md" ] || { echo "FAIL: no report.md"; exit 1; }
