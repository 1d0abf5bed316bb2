#!/usr/bin/env bash
# inputs/mlp_digits.in as its header documents: scripts/make-digits writes scikit-learn's digits as
# an HDF5 image set, then `train` runs the deck on 2 ranks with every path moved under the build
# tree. The run must reach a final validation accuracy of at least 0.95 (it reaches about 0.97) and
# write an mlp weights file. Exit 77 (skipped) only when PYTHON lacks scikit-learn or h5py.
# usage: mlp_digits.sh TRAIN PYTHON MPIEXEC SCRATCH_DIR SOURCE_DIR
set -euo pipefail
train=$1 python=$2 mpiexec=$3 dir=$4 src=$5
"$python" -c "import sklearn, h5py" 2>/dev/null ||
  { echo "mlp_digits: no scikit-learn or h5py in $python (scripts/setup --reference)"; exit 77; }
rm -rf "$dir" && mkdir -p "$dir"
"$python" "$src/scripts/make-digits" "$dir"
"$mpiexec" -np 2 --bind-to none "$train" "$src/inputs/mlp_digits.in" --set data_file="$dir/digits_train.h5" \
  --set validation_file="$dir/digits_test.h5" --set output="$dir/weights.h5" \
  --set metrics_file="$dir/metrics.jsonl" > "$dir/log" 2>&1 || { cat "$dir/log"; exit 1; }
grep -E "^Epoch|^Done" "$dir/log" | tail -n 3
"$python" - "$dir/metrics.jsonl" "$dir/weights.h5" <<'PY'
import json, sys, h5py
metrics, weights = sys.argv[1], sys.argv[2]
epochs = [r for r in map(json.loads, open(metrics)) if r.get("type") == "epoch"]
assert epochs, f"no epoch records in {metrics}"
last = epochs[-1]
accuracy = last["val_accuracy"]
assert accuracy >= 0.95, f"final validation accuracy {accuracy} is below 0.95"
with h5py.File(weights) as f:
    assert f.attrs["model"] in (b"mlp", "mlp"), f.attrs["model"]
print(f"mlp_digits: final validation accuracy {accuracy:.4f} (at least 0.95)")
PY
