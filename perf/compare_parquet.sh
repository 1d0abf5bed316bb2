#!/usr/bin/env bash
# `model gbdt` from a Parquet file against the CSV of the same pandas DataFrame (docs/parquet.md,
# "Speed"): a 1M-row x 20-column table (17 float64 normals, a pandas category, a string column, a
# float64 label) written by pandas + pyarrow (.deps/zarr3env) as CSV, as Parquet in one row group
# (pandas' default) and in 10; then 50 trees of depth 6 at RANKS ranks from each, ROUNDS alternating
# rounds, one thread a rank. Prints each run's load time ("loaded in": open, read, categories), the
# trees' time, wall time and peak RSS, and whether every file gave the same model.
# usage: perf/compare_parquet.sh WORKDIR   (environment: BUILD_DIR (build), RANKS (2), ROUNDS (3))
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$1 build=${BUILD_DIR:-$repo/build} ranks=${RANKS:-2} rounds=${ROUNDS:-3}
mkdir -p "$work" && cd "$work"
"$repo/.deps/zarr3env/bin/python" - <<'PY'
import numpy as np, pandas as pd
rng = np.random.default_rng(1)
n = 1_000_000
cols = {f"x{k}": rng.normal(size=n) for k in range(17)}
cols["cat_a"] = pd.Categorical(rng.choice(["a", "b", "c", "d", "e"], n))
cols["cat_b"] = rng.choice(["u", "v", "w"], n).astype(object)
cols["y"] = cols["x0"] * 2 + cols["x1"] ** 2 + rng.normal(size=n) * 0.1
df = pd.DataFrame(cols)
df.to_csv("t.csv", index=False)
df.to_parquet("t.parquet", index=False)
df.to_parquet("t_rg.parquet", index=False, row_group_size=100_000)
PY
printf 'model gbdt\ntext_header true\nlabel_column y\nobjective regression\nnum_trees 50\nmax_depth 6\n' >gbdt.in
export OMP_NUM_THREADS=1
for _ in $(seq "$rounds"); do
  for f in t.csv t.parquet t_rg.parquet; do
    load=$(sed 's/.*average: //' <<<"$(uptime)")
    /usr/bin/time -f "%e s, %M KB" -o run.time mpirun --oversubscribe -np "$ranks" --bind-to none "$build/apps/train" \
      gbdt.in --set data_file="$f" --set output="$f.json" >run.log 2>&1
    echo "$f: $(grep -o 'loaded in [0-9.]* s' run.log), $(grep -o '50 trees in [0-9.]* s' run.log), wall $(cat run.time), load $load"
  done
done
for f in t.parquet t_rg.parquet; do
  cmp -s <(sed "s/$f/X/g" "$f.json") <(sed "s/t\.csv/X/g" t.csv.json) && echo "$f: the CSV's model" || echo "$f: another model"
done
