#!/usr/bin/env bash
# Side-by-side timing of `rank_invariant true` against the default path on 2 ranks x 1 thread: the
# seed-000 denoiser (inputs/diffusion_seed000.in as it stands: batch 16 a rank, so a global batch of
# 32 and the default chunk 8, two chunks a rank; 3840 rows, EPOCHS epochs) and SMART
# (inputs/smart_quickstart.in on a trajgen set, batch 8 a rank, default chunk 4). Settings per model:
# default, rank_invariant (the default chunk: the float tree; the denoiser's chunks fused, Note
# [fused chunks]), and for the denoiser also rank_invariant_fuse false (one micro-batch per chunk),
# rank_invariant_chunk 16 (one chunk a rank) and a global batch of 24 in chunks of 4 (6 a step: the
# fixed-point sum) against its own default.
# The runs are interleaved over repeats (a shared machine drifts: compare runs taken side by side).
# Prints one line per run (model, setting, repeat, samples/s from the metrics file's summary), then
# per model and setting the time ratio to the default of the same batch in the same repeat: median,
# min-max. A benchmark, never a test.
# usage: perf/compare_rank_invariant.sh [BUILD_DIR] [REPEATS] [EPOCHS]   (from the repository root)
set -euo pipefail
build=${1:-build} repeats=${2:-5} epochs=${3:-10}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=1
"$build/apps/diffgen" "$work/diff.h5" --rows 3840 --seed 3 >/dev/null
"$build/apps/trajgen" "$work/scenes.h5" --scenes 96 --seed 1 >/dev/null
declare -A deck=([diffusion]="inputs/diffusion_seed000.in --set data_file=$work/diff.h5 --set epochs=$epochs"
                 [smart]="inputs/smart_quickstart.in --set data_file=$work/scenes.h5 --set epochs=1 --set batch_size=8")
declare -A settings=([diffusion]="rank_invariant=false rank_invariant=true rank_invariant=true,rank_invariant_fuse=false
                                  rank_invariant=true,rank_invariant_chunk=16
                                  batch_size=12,rank_invariant=false batch_size=12,rank_invariant=true,rank_invariant_chunk=4"
                     [smart]="rank_invariant=false rank_invariant=true")
echo "model setting repeat samples_per_s" | tee "$work/runs"
for ((rep = 1; rep <= repeats; ++rep)); do
  for model in diffusion smart; do
    for setting in ${settings[$model]}; do
      metrics=$work/metrics.jsonl
      rm -f "$metrics"
      # shellcheck disable=SC2086
      mpirun -np 2 --bind-to none -x OMP_NUM_THREADS "$build/apps/train" ${deck[$model]} --set output= \
        --set log_every=1000000 --set metrics_file="$metrics" --set ${setting//,/ --set } >"$work/log" 2>&1 ||
        { echo "run failed: $model $setting"; tail -3 "$work/log"; exit 1; }
      python3 - "$metrics" "$model" "$setting" "$rep" <<'PY' | tee -a "$work/runs"
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
batch = lambda s: s.split(",")[0] if s.startswith("batch_size=") else ""
base = {(m, batch(s), r): float(v) for m, s, r, v in rows if s.endswith("rank_invariant=false")}
print("model setting time_ratio_median time_ratio_min time_ratio_max (rank_invariant time / default time, same batch)")
for key in sorted({(m, s) for m, s, r, v in rows if not s.endswith("rank_invariant=false")}):
    ratios = [base[(m, batch(s), r)] / float(v) for m, s, r, v in rows if (m, s) == key]
    print(key[0], key[1], f"{statistics.median(ratios):.3f} {min(ratios):.3f} {max(ratios):.3f}")
PY
