#!/usr/bin/env bash
# inputs/resnet_digits.in as its header documents: scripts/make-digits writes scikit-learn's digits
# as an HDF5 image set, then `train` runs the deck on 2 ranks with every path moved under the build
# tree (the default conv_algorithm library: oneDNN here); the final validation accuracy must reach
# 0.97 and a resnet weights file be written.
# Then synchronised batch norm's contract, 1 rank == 2 ranks: one epoch at 1 rank x batch 32 and at
# 2 ranks x batch 16 (the same global batches, conv_algorithm gemm) must give the same weights (relative difference of the
# flat parameter vector below 5e-4; the ranks only change the order of floating-point sums, and
# OpenBLAS's AVX-512 kernels order a GEMM's sums by its shape, so 1 x 32 and 2 x 16 round apart by
# about 1.5e-4 after an epoch where the SSE3 kernels stayed below 1e-4), and
# the same two runs with sync_batch_norm false must not (each rank normalises its own 16 images),
# which shows that the comparison can fail. The 2-rank run without sync also times its convolutions
# (conv_algorithm auto: its log must list the 20 choices); the 1-rank one takes auto's fixed rule
# (conv_deterministic: gemm), so its weights equal bitwise those of the plain gemm run without
# sync (on one rank the synchronised sums are the rank's own). Exit 77 (skipped) only when PYTHON lacks scikit-learn or h5py.
# usage: resnet_digits.sh TRAIN PYTHON MPIEXEC SCRATCH_DIR SOURCE_DIR
set -euo pipefail
train=$1 python=$2 mpiexec=$3 dir=$4 src=$5
"$python" -c "import sklearn, h5py" 2>/dev/null ||
  { echo "resnet_digits: no scikit-learn or h5py in $python (scripts/setup --reference)"; exit 77; }
rm -rf "$dir" && mkdir -p "$dir"
"$python" "$src/scripts/make-digits" "$dir"
paths=(--set data_file="$dir/digits_train.h5" --set validation_file="$dir/digits_test.h5")
run() {  # run NAME RANKS ARGS...: the deck with its outputs under $dir/NAME
  local name=$1 np=$2
  shift 2
  "$mpiexec" -np "$np" --bind-to none "$train" "$src/inputs/resnet_digits.in" "${paths[@]}" \
    --set output="$dir/$name.h5" --set metrics_file="$dir/$name.jsonl" "$@" > "$dir/$name.log" 2>&1 ||
    { cat "$dir/$name.log"; exit 1; }
}
run deck 2
grep -E "^Epoch|^Done" "$dir/deck.log" | tail -n 3
run sync1 1 --set batch_size=32 --set epochs=1 --set sync_batch_norm=true --set conv_algorithm=auto \
  --set conv_deterministic=true
run sync2 2 --set epochs=1 --set sync_batch_norm=true --set conv_algorithm=gemm
run local1 1 --set batch_size=32 --set epochs=1 --set conv_algorithm=gemm
run local2 2 --set epochs=1 --set conv_algorithm=auto
"$python" - "$dir" "$src" <<'PY'
import json, sys, h5py, numpy as np
d = sys.argv[1]
epochs = [r for r in map(json.loads, open(f"{d}/deck.jsonl")) if r.get("type") == "epoch"]
assert epochs, "no epoch records"
accuracy = epochs[-1]["val_accuracy"]
assert accuracy >= 0.97, f"final validation accuracy {accuracy} is below 0.97"
sys.path.insert(0, f"{sys.argv[2]}/test/python")
from tool_run import weights_flat  # noqa: E402
def flat(path):
    return weights_flat(path, "resnet")
def rel(a, b):
    return float(np.linalg.norm(flat(a) - flat(b)) / np.linalg.norm(flat(b)))
sync, local = rel(f"{d}/sync2.h5", f"{d}/sync1.h5"), rel(f"{d}/local2.h5", f"{d}/local1.h5")
print(f"resnet_digits: final validation accuracy {accuracy:.4f} (at least 0.97); one epoch at 2 ranks vs 1 rank: "
      f"weights differ by {sync:.2e} with synchronised batch norm (at most 5e-4), {local:.2e} without (more than 1e-3)")
assert sync <= 5e-4, f"synchronised batch norm: 2 ranks differ from 1 rank by {sync}"
assert np.array_equal(flat(f"{d}/sync1.h5"), flat(f"{d}/local1.h5")), "conv_deterministic auto is not gemm bitwise"
log = open(f"{d}/local2.log").read()
choices = [l for l in log.splitlines() if l.rstrip().endswith(("-> gemm", "-> direct", "-> onednn"))]
assert "conv_algorithm auto: 20 convolutions timed" in log and len(choices) == 20, "conv_algorithm auto: no choices logged"
print(f"resnet_digits: conv_algorithm auto chose {sum(c.endswith('direct') for c in choices)} direct of 20; "
      "auto with conv_deterministic equals gemm bitwise")
assert local > 1e-3, f"per-rank batch norm should differ from the 1-rank run, differs by only {local}"
PY
