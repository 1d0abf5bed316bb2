#!/usr/bin/env bash
# inputs/smart_seed002.in, scaled down to seconds as its header allows: 24 trajgen scenes, 2 ranks, the
# widths and vocabulary shrunk by --set, 1 epoch, every path under the build tree. The deck must
# parse and train (a weights file of model smart); its full run needs a cluster.
# usage: smart_seed002.sh TRAIN TRAJGEN MPIEXEC SCRATCH_DIR SOURCE_DIR
set -euo pipefail
train=$1 trajgen=$2 mpiexec=$3 dir=$4 src=$5
rm -rf "$dir" && mkdir -p "$dir"
"$trajgen" "$dir/scenes.h5" --scenes 24 --seed 1 > /dev/null
"$mpiexec" -np 2 --bind-to none "$train" "$src/inputs/smart_seed002.in" --set data_file="$dir/scenes.h5" \
  --set batch_size=4 --set epochs=1 --set smart_hidden=16 --set smart_heads=2 --set smart_map_layers=1 \
  --set smart_agent_layers=1 --set motion_vocab=64 --set smart_freqs=4 --set warmup_steps=1 \
  --set validation_fraction=0.1 --set checkpoint_dir="$dir/ckpt" --set output="$dir/weights.h5" \
  --set metrics_file="$dir/metrics.jsonl" > "$dir/log" 2>&1 || { cat "$dir/log"; exit 1; }
grep -E "^Epoch|^Done" "$dir/log"
[ -s "$dir/weights.h5" ] || { echo "smart_seed002: no weights file"; exit 1; }
grep -q "model smart: smart_hidden=16" "$dir/log" || { echo "smart_seed002: not the smart model"; exit 1; }
echo "smart_seed002: the deck trains (scaled down)"
