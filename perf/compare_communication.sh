#!/usr/bin/env bash
# Side-by-side timing of the gradient communication settings on 2 ranks x 1 thread: the single
# all-reduce after backward (bucket_mb 0), the default buckets, small buckets, and the sharded
# optimizer, at two batch sizes per rank, interleaved over repeats (the machine may be shared:
# compare runs taken side by side). Prints one line per run: batch, setting, repeat, samples/s and
# the comm share of the time split, from the metrics file's summary. A benchmark, never a test.
# usage: perf/compare_communication.sh [BUILD_DIR] [REPEATS]   (from the repository root)
set -euo pipefail
build=${1:-build} repeats=${2:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=1
"$build/apps/diffgen" "$work/data.h5" --rows 20000 --seed 3 >/dev/null
echo "batch_per_rank setting repeat samples_per_s comm_percent"
for ((rep = 1; rep <= repeats; ++rep)); do
  for batch in 16 256; do
    epochs=1
    [ "$batch" -ge 256 ] && epochs=3  # a few seconds per run at either size
    for setting in bucket_mb=0 bucket_mb=25 bucket_mb=0.2 optimizer_sharding=true; do
      metrics=$work/metrics.jsonl
      rm -f "$metrics"
      mpirun -np 2 --bind-to core -x OMP_NUM_THREADS "$build/apps/train" inputs/diffusion_seed000.in \
        --set data_file="$work/data.h5" --set batch_size=$batch --set epochs=$epochs --set output= \
        --set log_every=1000000 --set metrics_file="$metrics" --set "$setting" >"$work/log" 2>&1 ||
        { echo "run failed: batch $batch $setting"; tail -3 "$work/log"; exit 1; }
      python3 - "$metrics" "$batch" "$setting" "$rep" <<'EOF'
import json, sys
path, batch, setting, rep = sys.argv[1:]
summary = [json.loads(l) for l in open(path) if '"summary"' in l][-1]
total = summary["compute_s"] + summary["comm_s"] + summary["io_s"]
print(f"{batch} {setting} {rep} {summary['samples_per_s']:.0f} {100 * summary['comm_s'] / total:.1f}")
EOF
    done
  done
done
