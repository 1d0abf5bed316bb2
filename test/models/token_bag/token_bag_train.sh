#!/usr/bin/env bash
# The token_bag test family through a build of `train` (train_token_bag: the driver plus one
# registry line) on 2 ranks, on a ragged HDF5 file written by h5py as users write theirs: the run
# ends below the baseline of predicting the mean, and the weights file names the family.
# usage: token_bag_train.sh TRAIN_TOKEN_BAG PYTHON MPIEXEC SCRATCH_DIR SOURCE_DIR
set -euo pipefail
train=$1 python=$2 mpiexec=$3 dir=$4 src=$5
"$python" -c "import h5py, numpy" 2>/dev/null || { echo "token_bag_train: no h5py in $python (scripts/setup --reference)"; exit 77; }
rm -rf "$dir" && mkdir -p "$dir"
baseline=$("$python" "$src/test/models/token_bag/make_token_bags.py" "$dir/bags.h5" 2000)
cat > "$dir/token_bag.in" <<DECK
model token_bag
data_file $dir/bags.h5
data_format auto
fields tokens, targets
token_bag_vocab 40
epochs 12
batch_size 16
lr 0.02
validation_fraction 0.2
output $dir/weights.h5
metrics_file $dir/metrics.jsonl
DECK
"$mpiexec" -np 2 --bind-to none "$train" "$dir/token_bag.in" > "$dir/log" 2>&1 || { cat "$dir/log"; exit 1; }
final=$(sed -n 's/.*final val loss \([0-9.e+-]*\).*/\1/p' "$dir/log" | tail -n 1)
[ -n "$final" ] || { cat "$dir/log"; echo "no final val loss in the log"; exit 1; }
echo "final val loss $final, baseline (predict the mean) $baseline"
"$python" - "$final" "$baseline" "$dir/weights.h5" <<'PY'
import sys, h5py
final, baseline, weights = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
assert final < 0.2 * baseline, f"val loss {final} not below 0.2 x baseline {baseline}"
with h5py.File(weights) as f:
    assert f.attrs["model"] in (b"token_bag", "token_bag"), f.attrs["model"]
    assert "embed/weight" in f and "head/weight" in f, list(f)
PY
