#!/usr/bin/env bash
# Compressed text tables against the plain file (docs/compressed-tables.md, "Cost"): a HIGGS-like
# 1M-row table (a 0/1 label and 28 float columns printed as HIGGS.csv prints them, %.18e, no header)
# as t.csv, t.csv.gz (gzip -6, UCI's) and t.csv.zst (zstd -3, its default). For each: `model gbdt`'s
# load ("loaded in": the scan and the read of the rows) with 1 tree, and an mlp's epoch read from the
# file (data_cache stream, no prefetch: the reads not hidden), RANKS ranks, one thread a rank; then
# pandas' read_csv of the same files (.deps/zarr3env; .zst only with its zstandard module).
# usage: perf/compare_compressed.sh WORKDIR   (environment: BUILD_DIR (build), RANKS (1))
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$1 build=${BUILD_DIR:-$repo/build} ranks=${RANKS:-1}
py=$repo/.deps/zarr3env/bin/python
mkdir -p "$work" && cd "$work"
if [ ! -f t.csv.zst ]; then
  "$py" - <<'PY'
import numpy as np
rng = np.random.default_rng(1)
n = 1_000_000
x = rng.normal(size=(n, 28)).astype(np.float32).astype(np.float64)
y = (x[:, 0] + x[:, 1] * x[:, 2] > 0).astype(np.float64)
with open("t.csv", "w") as f:
    for k in range(0, n, 100_000):
        np.savetxt(f, np.column_stack([y[k:k + 100_000], x[k:k + 100_000]]), fmt="%.18e", delimiter=",")
PY
  gzip -6 -k -f t.csv
  zstd -q -3 -f t.csv -o t.csv.zst
fi
ls -l t.csv t.csv.gz t.csv.zst
printf 'model gbdt\nlabel_column 0\nobjective binary\nnum_trees 1\nmax_depth 6\n' >gbdt.in
printf 'model mlp\nlabel_column 0\nloss bce\nhidden_sizes 32\nbatch_size 1024\nepochs 1\nvalidation_fraction 0\ndata_cache stream\nprefetch_epoch false\nlog_every 100000\n' >mlp.in
export OMP_NUM_THREADS=1
for f in t.csv t.csv.gz t.csv.zst; do
  load=$(sed 's/.*average: //' <<<"$(uptime)")
  /usr/bin/time -f "%e s, %M KB" -o run.time mpirun --oversubscribe -np "$ranks" --bind-to none "$build/apps/train" \
    gbdt.in --set data_file="$f" --set output="$f.json" >gbdt.log 2>&1
  echo "gbdt $f: $(grep -o 'loaded in [0-9.]* s' gbdt.log), wall $(cat run.time), load $load"
  load=$(sed 's/.*average: //' <<<"$(uptime)")
  /usr/bin/time -f "%e s, %M KB" -o run.time mpirun --oversubscribe -np "$ranks" --bind-to none "$build/apps/train" \
    mlp.in --set data_file="$f" --set output="$f.h5" >mlp.log 2>&1
  echo "mlp $f: $(grep -o 'Epoch 1/1.*' mlp.log | grep -o '[0-9.]* s$'), $(grep -o 'data reads [0-9.]* s' mlp.log), wall $(cat run.time), load $load"
done
cmp -s t.csv.json t.csv.gz.json && cmp -s t.csv.json t.csv.zst.json && echo "gbdt: one model from all three" ||
  echo "gbdt: models differ"
"$py" - <<'PY'
import os, time
import pandas as pd
print("pandas", pd.__version__)
for f, how in (("t.csv", None), ("t.csv.gz", "gzip"), ("t.csv.zst", "zstd")):
    load = os.getloadavg()
    t = time.perf_counter()
    try:
        pd.read_csv(f, header=None, compression=how)
    except ImportError as e:
        print(f"pandas {f}: not read ({e})")
        continue
    print(f"pandas read_csv {f}: {time.perf_counter() - t:.2f} s, load {load[0]:.2f}")
PY
