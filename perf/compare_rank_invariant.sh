#!/usr/bin/env bash
# Side-by-side timing of `rank_invariant true` against the default path on 2 ranks x 1 thread: the
# seed-000 denoiser (inputs/diffusion_seed000.in, global batch 16) and SMART (inputs/smart_quickstart.in
# on a small trajgen set, global batch 16), each with chunks of 8 (one per rank per step) and of 4
# (the default, global batch / 4), both summed in the float tree, and at global batch 24 with chunks
# of 4 (6 a step: the fixed-point sum), interleaved over repeats (the machine may be shared: compare runs
# taken side by side). Prints one line per run (model, setting, repeat, samples/s from the metrics
# file's summary), then per model and setting the ratio of its samples/s to the default's in the
# same repeat: median, min-max. A benchmark, never a test.
# usage: perf/compare_rank_invariant.sh [BUILD_DIR] [REPEATS]   (from the repository root)
set -euo pipefail
build=${1:-build} repeats=${2:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=1
"$build/apps/diffgen" "$work/diff.h5" --rows 1600 --seed 3 >/dev/null
"$build/apps/trajgen" "$work/scenes.h5" --scenes 96 --seed 1 >/dev/null
declare -A deck=([diffusion]="inputs/diffusion_seed000.in --set data_file=$work/diff.h5"
                 [smart]="inputs/smart_quickstart.in --set data_file=$work/scenes.h5 --set epochs=3")
echo "model setting repeat samples_per_s" | tee "$work/runs"
for ((rep = 1; rep <= repeats; ++rep)); do
  for model in diffusion smart; do
    for setting in rank_invariant=false "rank_invariant=true --set rank_invariant_chunk=8" \
                   "rank_invariant=true --set rank_invariant_chunk=4" "batch_size=12 --set rank_invariant=false" \
                   "batch_size=12 --set rank_invariant=true --set rank_invariant_chunk=4"; do
      metrics=$work/metrics.jsonl
      rm -f "$metrics"
      # shellcheck disable=SC2086
      mpirun -np 2 --bind-to none -x OMP_NUM_THREADS "$build/apps/train" ${deck[$model]} --set batch_size=8 \
        --set output= --set log_every=1000000 --set metrics_file="$metrics" --set $setting >"$work/log" 2>&1 ||
        { echo "run failed: $model $setting"; tail -3 "$work/log"; exit 1; }
      python3 - "$metrics" "$model" "${setting// --set /,}" "$rep" <<'PY' | tee -a "$work/runs"
import json, sys
path, model, setting, rep = sys.argv[1:]
summary = [json.loads(l) for l in open(path) if '"summary"' in l][-1]
print(f"{model} {setting} {rep} {summary['samples_per_s']:.1f}")
PY
    done
  done
done
python3 - "$work/runs" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]).read().splitlines()[1:]]
base = {(m, s.startswith("batch_size=12"), r): float(v) for m, s, r, v in rows if s.endswith("rank_invariant=false")}
print("model setting time_ratio_median time_ratio_min time_ratio_max (rank_invariant time / default time, same batch)")
for key in sorted({(m, s) for m, s, r, v in rows if not s.endswith("rank_invariant=false")}):
    ratios = [base[(m, s.startswith("batch_size=12"), r)] / float(v) for m, s, r, v in rows if (m, s) == key]
    print(key[0], key[1], f"{statistics.median(ratios):.3f} {min(ratios):.3f} {max(ratios):.3f}")
PY
