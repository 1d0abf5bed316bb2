#!/usr/bin/env bash
# gnn_recompute side by side: inputs/gnn_global.in on a global grid of POINTS points (a Fibonacci
# lattice; 2t with waves travelling east, 24 six-hourly times written by xarray) with the icosahedral
# mesh at REFINEMENTS, latent 32, 4 processor layers, batch 4, one epoch (5 steps) on 1 rank, with
# and without gnn_recompute: each run's peak resident memory (GNU time's maximum RSS) and samples/s
# (the metrics file's summary), then the ratios recompute / plain per repeat (median, min-max). The
# runs alternate (a shared machine drifts: compare runs taken side by side). A benchmark, never a test.
# usage: perf/gnn_recompute.sh [BUILD_DIR] [POINTS] [REFINEMENTS] [REPEATS]   (from the repository root;
#   PYTHON: a Python with numpy and xarray, default python3)
set -euo pipefail
build=${1:-build} points=${2:-50662} refinements=${3:-6} repeats=${4:-3} py=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$py" - "$work/global.nc" "$points" <<'PY'
import sys
import numpy as np
import xarray as xr

path, n = sys.argv[1], int(sys.argv[2])
i = np.arange(n)
lat = np.degrees(np.arcsin(1 - 2 * (i + 0.5) / n))
lon = (i * 137.50776405) % 360.0
t = np.arange(24)[:, None]
p, l = np.radians(lat)[None, :], np.radians(lon)[None, :]
t2m = 280 - 30 * np.sin(p) ** 2 + 8 * np.cos(p) ** 2 * np.cos(3 * (l - np.radians(15) * t)) + 3 * np.cos(p) * np.cos(2 * l + np.radians(10) * t)
xr.Dataset({"t2m": (("time", "values"), t2m.astype(np.float32))},
           coords={"time": np.datetime64("2024-01-01T00", "ns") + t[:, 0] * np.timedelta64(6, "h"),
                   "latitude": ("values", lat, {"units": "degrees_north"}),
                   "longitude": ("values", lon, {"units": "degrees_east"})}).to_netcdf(path)
PY
echo "setting repeat max_rss_mb samples_per_s" | tee "$work/runs"
for ((rep = 1; rep <= repeats; ++rep)); do
  for recompute in false true; do
    rm -f "$work/metrics.jsonl"
    /usr/bin/time -f "%M" -o "$work/rss" "$build/apps/train" inputs/gnn_global.in --set data_file="$work/global.nc" \
      --set state_variables=t2m --set gnn_mesh_refinements="$refinements" --set gnn_latent=32 --set gnn_layers=4 \
      --set batch_size=4 --set epochs=1 --set validation_fraction=0.1 --set gnn_recompute="$recompute" \
      --set output= --set metrics_file="$work/metrics.jsonl" >"$work/log" 2>&1 ||
      { echo "run failed: gnn_recompute $recompute"; tail -3 "$work/log"; exit 1; }
    python3 - "$work/metrics.jsonl" "$recompute" "$rep" "$(cat "$work/rss")" <<'PY' | tee -a "$work/runs"
import json, sys
path, setting, rep, rss_kb = sys.argv[1:]
summary = [json.loads(l) for l in open(path) if '"summary"' in l][-1]
print(f"recompute={setting} {rep} {int(rss_kb) // 1024} {summary['samples_per_s']:.2f}")
PY
  done
done
python3 - "$work/runs" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]).read().splitlines()[1:]]
by = {(s, r): (float(m), float(v)) for s, r, m, v in rows}
reps = sorted({r for s, r, m, v in rows})
mem = [by[("recompute=true", r)][0] / by[("recompute=false", r)][0] for r in reps]
tim = [by[("recompute=false", r)][1] / by[("recompute=true", r)][1] for r in reps]
for name, v in (("peak memory ratio (recompute / plain)", mem), ("time ratio (recompute / plain)", tim)):
    print(f"{name}: median {statistics.median(v):.3f}, min {min(v):.3f}, max {max(v):.3f}")
PY
