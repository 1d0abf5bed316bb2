#!/usr/bin/env bash
# inputs/cape_quickstart.in and inputs/cape_seed004.in as their headers document, scaled down to
# seconds: apps/posegen writes a tiny set (32x32, 8 categories, 3 of them for testing; twice: the
# same values), then
#  - the quickstart deck at 1 rank x batch 16 and at 2 ranks x batch 8 for one epoch (synchronised
#    batch norm, the same global batches and episodes) with SGD: weights within 1e-6 relative. (With
#    AdamW the first steps divide gradients by their own magnitude: a bias whose gradient is at the
#    rounding level moves by +-lr either way, so the ranks' different summation orders show as
#    ~1e-5 in the weights though the losses agree to 6 digits.) oneDNN convolutions, what the
#    deck's default (conv_algorithm library) runs on host builds, give the same weights at both
#    batch sizes (2.0e-8 measured); the checks name them (gemm in builds without oneDNN, e.g. CUDA
#    ones, where library would be cuDNN);
#  - the same 2-rank run for 2 epochs, and again as 1 epoch + checkpoint + resume: weights bitwise
#    equal; its loss is finite and cape_eval prints the PCK table and writes the CSV and episodes;
#    at --pck 0.05 both the model's and the copy's PCK are lower (a bad --pck is refused);
#  - the seed-004 deck (ResNet-50 bottlenecks, fp16 loss scaling, clipping) for one epoch (one step)
#    at width 4.
# (scripts/plot-cape is not run here: matplotlib's import alone costs seconds.)
# usage: cape_decks.sh POSEGEN TRAIN CAPE_EVAL PYTHON MPIEXEC SCRATCH_DIR SOURCE_DIR
set -euo pipefail
posegen=$1 train=$2 cape_eval=$3 python=$4 mpiexec=$5 dir=$6 src=$7
"$python" -c "import h5py, numpy" 2>/dev/null || { echo "cape_decks: no h5py/numpy in $python"; exit 77; }
rm -rf "$dir" && mkdir -p "$dir"
"$posegen" "$dir/train.h5" "$dir/test.h5" --categories 8 --test-categories 3 --rows 32 --test-rows 12 --size 32 \
  --views 3 --max-keypoints 6
# The same options write the same data (h5diff compares values, not the files' timestamps).
"$posegen" "$dir/again.h5" "$dir/again_test.h5" --categories 8 --test-categories 3 --rows 32 --test-rows 12 \
  --size 32 --views 3 --max-keypoints 6 > /dev/null
h5diff "$dir/train.h5" "$dir/again.h5" && h5diff "$dir/test.h5" "$dir/again_test.h5"
# The checks fix the algorithm: oneDNN (the host builds' library), or gemm in a build without it
# (its train not linked to libdnnl).
conv=onednn
ldd "$train" 2>/dev/null | grep -q libdnnl || conv=gemm
tiny=(--set data_file="$dir/train.h5" --set validation_file="$dir/test.h5" --set lr_schedule=constant
      --set warmup_steps=0 --set log_every=2 --set conv_algorithm=$conv)
run() {  # run NAME RANKS DECK ARGS...: the deck with its outputs under $dir/NAME
  local name=$1 np=$2 deck=$3
  shift 3
  "$mpiexec" -np "$np" --bind-to none "$train" "$src/inputs/$deck" "${tiny[@]}" \
    --set output="$dir/$name.h5" --set metrics_file="$dir/$name.jsonl" "$@" > "$dir/$name.log" 2>&1 ||
    { cat "$dir/$name.log"; exit 1; }
}
run one 1 cape_quickstart.in --set batch_size=16 --set epochs=1 --set optimizer=sgd --set lr=0.05
run two 2 cape_quickstart.in --set batch_size=8 --set epochs=1 --set optimizer=sgd --set lr=0.05
run first 2 cape_quickstart.in --set batch_size=8 --set epochs=1 --set checkpoint_dir="$dir/ckpt" \
  --set checkpoint_every_epochs=1
run straight 2 cape_quickstart.in --set batch_size=8 --set epochs=2
run resumed 2 cape_quickstart.in --set batch_size=8 --set epochs=2 --set checkpoint_dir="$dir/ckpt" --set resume=auto
grep -E "^Epoch" "$dir/straight.log"
run seed004 2 cape_seed004.in --set resnet_width=4 --set cape_stages=2 --set cape_dim=16 --set batch_size=16 \
  --set epochs=1 --set checkpoint_dir= --set checkpoint_every_epochs=0
grep -q "precision fp16 keeps the loss scaling" "$dir/seed004.log" || { cat "$dir/seed004.log"; exit 1; }
"$cape_eval" "$dir/straight.h5" "$dir/test.h5" --csv "$dir/pck.csv" --episodes "$dir/episodes.h5" --plot-episodes 3
"$cape_eval" "$dir/straight.h5" "$dir/test.h5" --csv "$dir/pck_strict.csv" --pck 0.05 >"$dir/strict.log"
grep -q "PCK@0.05" "$dir/strict.log" || { cat "$dir/strict.log"; exit 1; }
"$cape_eval" "$dir/straight.h5" "$dir/test.h5" --pck 0 >"$dir/bad_pck.log" 2>&1 && { echo "accepted --pck 0"; exit 1; }
grep -q "cape_eval: --pck 0: a threshold" "$dir/bad_pck.log" || { cat "$dir/bad_pck.log"; exit 1; }
# A NaN in the test rows: the message names the row and which rows cape_eval evaluates.
cp "$dir/test.h5" "$dir/nan_test.h5"
"$python" -c "import h5py, sys; f = h5py.File(sys.argv[1], 'r+'); k = f['keypoints']; k[5, 0, 0, 0] = float('nan')" \
  "$dir/nan_test.h5"
"$cape_eval" "$dir/straight.h5" "$dir/nan_test.h5" >"$dir/nan.log" 2>&1 && { echo "cape_eval accepted a NaN"; exit 1; }
grep -q "row 5 holds a NaN or Inf (first bad row of the test split: cape_eval's TEST)" "$dir/nan.log" ||
  { cat "$dir/nan.log"; exit 1; }
"$python" - "$dir" "$src" <<'PY'
import csv, json, sys, h5py, numpy as np
d = sys.argv[1]
sys.path.insert(0, f"{sys.argv[2]}/test/python")
from tool_run import weights_flat  # noqa: E402
def flat(path):
    return weights_flat(path, "cape")
ranks = float(np.linalg.norm(flat(f"{d}/two.h5") - flat(f"{d}/one.h5")) / np.linalg.norm(flat(f"{d}/one.h5")))
print(f"cape_decks: one epoch at 2 ranks x 8 vs 1 rank x 16 (synchronised batch norm, SGD): weights differ by {ranks:.2e}")
assert ranks <= 1e-6, f"2 ranks differ from 1 rank by {ranks}"
assert np.array_equal(flat(f"{d}/straight.h5"), flat(f"{d}/resumed.h5")), "resume is not bitwise"
print("cape_decks: 2 epochs straight == 1 epoch + checkpoint + resume, bitwise")
epochs = [r for r in map(json.loads, open(f"{d}/straight.jsonl")) if r.get("type") == "epoch"]
assert epochs and all(np.isfinite(r["val_loss"]) for r in epochs), epochs
rows = list(csv.DictReader(open(f"{d}/pck.csv")))
assert rows[-1]["category"] == "all" and len(rows) == 4, rows  # 3 test categories + all
assert abs(float(rows[-1]["pck"]) - epochs[-1]["val_pck"]) < 1e-6, (rows[-1], epochs[-1])
strict = list(csv.DictReader(open(f"{d}/pck_strict.csv")))
for a, b in zip(strict, rows):  # a smaller radius: never more keypoints within it, and some fewer
    assert a["category"] == b["category"] and float(a["pck"]) <= float(b["pck"]), (a, b)
    assert float(a["copy_pck"]) <= float(b["copy_pck"]), (a, b)
assert float(strict[-1]["pck"]) < float(rows[-1]["pck"]) and float(strict[-1]["copy_pck"]) < float(rows[-1]["copy_pck"]), (strict[-1], rows[-1])
print(f"cape_decks: --pck 0.05 {float(strict[-1]['pck']):.4f} (copy {float(strict[-1]['copy_pck']):.4f}) <= PCK@0.2 {float(rows[-1]['pck']):.4f}")
PY
