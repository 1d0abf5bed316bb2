#!/usr/bin/env bash
# inputs/lm_quickstart.in as its header documents, scaled down: scripts/make-tokens writes 300 rows of
# the docs' bytes, `train` runs the deck on 2 ranks for 2 epochs with every path under the build tree;
# the loss must fall below the uniform guess (log 256 = 5.55). Exit 77 only without numpy/h5py.
# usage: lm_quickstart.sh TRAIN PYTHON MPIEXEC SCRATCH_DIR SOURCE_DIR
set -euo pipefail
train=$1 python=$2 mpiexec=$3 dir=$4 src=$5
"$python" -c "import numpy, h5py" 2>/dev/null || { echo "lm_quickstart: no numpy/h5py in $python"; exit 77; }
rm -rf "$dir" && mkdir -p "$dir"
"$python" "$src/scripts/make-tokens" "$dir/tokens.h5" --max-rows 300
"$mpiexec" -np 2 --bind-to none "$train" "$src/inputs/lm_quickstart.in" --set data_file="$dir/tokens.h5" \
  --set epochs=2 --set output="$dir/weights.h5" --set metrics_file="$dir/metrics.jsonl" \
  --set log_every=1000 > "$dir/log" 2>&1 || { cat "$dir/log"; exit 1; }
grep -E "^Epoch|^Done" "$dir/log"
last=$(grep -oE "^Epoch 2/2: avg loss = [0-9.]+" "$dir/log" | awk '{print $NF}')
awk -v b="$last" 'BEGIN { if (!(b < 5.0)) { print "lm_quickstart: loss " b " not below 5.0"; exit 1 } }'
echo "lm_quickstart: epoch-2 loss $last (uniform: 5.55)"
