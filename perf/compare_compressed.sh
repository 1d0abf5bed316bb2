#!/usr/bin/env bash
# Compressed text tables against the plain file (docs/compressed-tables.md, "Cost"): a HIGGS-like
# table of ROWS rows (a 0/1 label and 28 float columns printed as HIGGS.csv prints them, %.18e, no
# header) as t.csv and the compressed copies FILES names, each made when missing by its name:
# t.csv.gz (gzip -6, UCI's), t.csv.zst (zstd -3, its default), t.csv.xz (xz -1 -T1: one block, xz
# 5.4's default), t.T2.csv.xz (xz -1 -T2: a block every 3 MiB, as xz -T2, pixz and xz >= 5.6 write).
# For each: `model gbdt`'s load ("loaded in": the scan and the read of the rows) with 1 tree, and an
# mlp's epoch read from the file (data_cache stream, no prefetch: the reads not hidden), RANKS ranks,
# one thread a rank (wall and each rank's CPU seconds); then pandas' read_csv of the same files
# (.deps/zarr3env; .zst only with its zstandard module).
# usage: perf/compare_compressed.sh WORKDIR
#   (environment: BUILD_DIR (build), RANKS (1), ROWS (1000000), FILES ("t.csv t.csv.gz t.csv.zst"))
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$1 build=${BUILD_DIR:-$repo/build} ranks=${RANKS:-1}
export ROWS=${ROWS:-1000000}
read -r -a files <<<"${FILES:-t.csv t.csv.gz t.csv.zst}"
py=$repo/.deps/zarr3env/bin/python
mkdir -p "$work" && cd "$work"
if [ ! -f t.csv ]; then
  "$py" - <<'PY'
import os
import numpy as np
rng = np.random.default_rng(1)
n = int(os.environ["ROWS"])
x = rng.normal(size=(n, 28)).astype(np.float32).astype(np.float64)
y = (x[:, 0] + x[:, 1] * x[:, 2] > 0).astype(np.float64)
with open("t.csv", "w") as f:
    for k in range(0, n, 100_000):
        np.savetxt(f, np.column_stack([y[k:k + 100_000], x[k:k + 100_000]]), fmt="%.18e", delimiter=",")
PY
fi
for f in "${files[@]}"; do
  [ -f "$f" ] && continue
  case $f in
    t.csv.gz) gzip -6 -k -f t.csv ;;
    t.csv.zst) zstd -q -3 -f t.csv -o t.csv.zst ;;
    t.csv.xz) xz -1 -T1 -c t.csv >t.csv.xz ;;
    t.T2.csv.xz) xz -1 -T2 -c t.csv >t.T2.csv.xz ;;
    *) echo "compare_compressed.sh: no recipe for $f" >&2 && exit 2 ;;
  esac
done
ls -l "${files[@]}"
printf 'model gbdt\nlabel_column 0\nobjective binary\nnum_trees 1\nmax_depth 6\n' >gbdt.in
printf 'model mlp\nlabel_column 0\nloss bce\nhidden_sizes 32\nbatch_size 1024\nepochs 1\nvalidation_fraction 0\ndata_cache stream\nprefetch_epoch false\nlog_every 100000\n' >mlp.in
export OMP_NUM_THREADS=1
# Each rank's CPU seconds (user+sys) beside the wall: steadier on a loaded machine (Open MPI's ranks
# wait for each other spinning, so each shows about the slowest rank's time).
train() {
  rm -f cpu.*
  # shellcheck disable=SC2016 # the rank's shell expands $OMPI_COMM_WORLD_RANK
  /usr/bin/time -f "%e s, %M KB" -o run.time mpirun --oversubscribe -np "$ranks" --bind-to none \
    bash -c '/usr/bin/time -f "%U+%S" -o cpu.$OMPI_COMM_WORLD_RANK "$0" "$@"' "$build/apps/train" "$@"
}
cpu() { for r in $(seq 0 $((ranks - 1))); do printf '%s ' "$(tail -1 "cpu.$r")"; done; }
for f in "${files[@]}"; do
  load=$(sed 's/.*average: //' <<<"$(uptime)")
  train gbdt.in --set data_file="$f" --set output="$f.json" >gbdt.log 2>&1
  echo "gbdt $f: $(grep -o 'loaded in [0-9.]* s' gbdt.log), wall $(cat run.time), cpu a rank $(cpu)s, load $load"
  load=$(sed 's/.*average: //' <<<"$(uptime)")
  train mlp.in --set data_file="$f" --set output="$f.h5" >mlp.log 2>&1
  echo "mlp $f: $(grep -o 'Epoch 1/1.*' mlp.log | grep -o '[0-9.]* s$'), $(grep -o 'data reads [0-9.]* s' mlp.log), wall $(cat run.time), cpu a rank $(cpu)s, load $load"
done
same=1
for f in "${files[@]}"; do cmp -s "${files[0]}.json" "$f.json" || same=0; done
[ $same = 1 ] && echo "gbdt: one model from all ${#files[@]} files" || echo "gbdt: models differ"
FILES="${files[*]}" "$py" - <<'PY'
import os, time
import pandas as pd
print("pandas", pd.__version__)
for f in os.environ["FILES"].split():
    how = {"gz": "gzip", "zst": "zstd", "xz": "xz"}.get(f.rsplit(".", 1)[1])
    load = os.getloadavg()
    t = time.perf_counter()
    try:
        pd.read_csv(f, header=None, compression=how)
    except ImportError as e:
        print(f"pandas {f}: not read ({e})")
        continue
    print(f"pandas read_csv {f}: {time.perf_counter() - t:.2f} s, load {load[0]:.2f}")
PY
