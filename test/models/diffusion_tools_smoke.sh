#!/bin/sh
# End-to-end smoke test of the diffusion tools: diffgen -> train (2 ranks) -> sample (2 ranks),
# checking exit codes, the log line format, the weights' normalisation datasets and the evaluation.
# usage: diffusion_tools_smoke.sh BUILD_DIR SOURCE_DIR MPIEXEC
set -eu
build=$1 src=$2 mpiexec=$3
dir=$build/test/scratch_diffusion_tools_smoke  # under the build tree, as every test writes
rm -rf "$dir" && mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT
run() { "$mpiexec" -n 2 --oversubscribe --bind-to none "$@"; }
"$build/apps/diffgen" "$dir/train.h5" --rows 400 --seed 1 >/dev/null
"$build/apps/diffgen" "$dir/test.h5" --rows 12 --seed 2 >/dev/null
run "$build/apps/train" "$src/inputs/diffusion_quickstart.in" --set data_file="$dir/train.h5" \
  --set diffusion_hidden=32 --set epochs=2 --set batch_size=16 --set warmup_steps=0 \
  --set output="$dir/w.h5" --set metrics_file="$dir/m.jsonl" >"$dir/train.log" 2>&1 || { cat "$dir/train.log"; exit 1; }
grep -q "^Epoch 2/2: avg loss = [0-9.]* ([0-9]* batches)" "$dir/train.log" || { echo "no epoch line"; cat "$dir/train.log"; exit 1; }
run "$build/apps/sample" "$dir/w.h5" "$dir/test.h5" "$dir/ens.h5" --members 3 --method ddim --steps 4 \
  >"$dir/sample.log" 2>&1 || { cat "$dir/sample.log"; exit 1; }
grep -q "wrote .*ensembles \[12, 3, 256\]" "$dir/sample.log" || { echo "no ensembles line"; cat "$dir/sample.log"; exit 1; }
grep -q "ensemble-mean RMSE [0-9.]* | baseline (coarse mean copied) RMSE [0-9.]*" "$dir/sample.log" || { cat "$dir/sample.log"; exit 1; }
# A bad option is an input error (exit code 2), reported once.
if run "$build/apps/sample" "$dir/w.h5" "$dir/test.h5" "$dir/x.h5" --members 0 >"$dir/bad.log" 2>&1; then
  echo "sample accepted --members 0"; exit 1
fi
grep -q "members must be" "$dir/bad.log" || { cat "$dir/bad.log"; exit 1; }
echo "diffusion tools smoke test passed"
