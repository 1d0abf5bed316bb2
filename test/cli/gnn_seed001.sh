#!/usr/bin/env bash
# inputs/gnn_seed001.in as its header says, scaled down: the seed's model (latent 256, 12 layers,
# batch 8, streaming with prefetch, checkpoints) for 1 epoch on a 12 x 9 region of 60 hours on 2
# ranks, every path under the build tree. It must finish with a finite validation loss, report the
# seed's model, write a checkpoint and a weights file that wxeval reads.
# usage: gnn_seed001.sh WXGEN TRAIN WXEVAL MPIEXEC SCRATCH_DIR SOURCE_DIR
set -euo pipefail
wxgen=$1 train=$2 wxeval=$3 mpiexec=$4 dir=$5 src=$6
rm -rf "$dir" && mkdir -p "$dir"
"$wxgen" "$dir/wx.nc" --nx 12 --ny 9 --margin 6 --hours 60 --spinup 24 > /dev/null
"$mpiexec" -np 2 --bind-to none "$train" "$src/inputs/gnn_seed001.in" --set data_file="$dir/wx.nc" \
  --set output="$dir/gnn.h5" --set metrics_file="$dir/metrics.jsonl" --set checkpoint_dir="$dir/ckpt" \
  --set checkpoint_every_steps=2 --set epochs=1 > "$dir/log" 2>&1 || { cat "$dir/log"; exit 1; }
grep -E "model gnn|^Done" "$dir/log"
grep -q "gnn_latent=256 gnn_layers=12" "$dir/log" || { echo "not the seed's model"; exit 1; }
grep -qE "final val loss [0-9]" "$dir/log" || { cat "$dir/log"; echo "no finite final val loss"; exit 1; }
ls "$dir/ckpt"/ckpt-*.h5 > /dev/null || { echo "no checkpoint"; exit 1; }
"$mpiexec" -np 1 --bind-to none "$wxeval" "$dir/gnn.h5" "$dir/wx.nc" --lead-steps 2 --from 0.5 | tail -n 1
