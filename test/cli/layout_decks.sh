#!/usr/bin/env bash
# The seven layout decks (inputs/n1_gpu1 .. n4_gpu1, cpu_n1) as their headers say: each trains the
# seed's SMART (model smart) at effective batch 64 (nodes x ranks_per_node x batch_size = 64), names
# its data file in a `trajgen` line, and its header's 2-rank line (`mpirun -np 2 ... --set ...`) runs
# here as written, on one shared tiny scene file with the widths, vocabulary and neighbour counts
# shrunk by --set (1 epoch = 1 step of 32 scenes per rank), every output under the build tree.
# usage: layout_decks.sh TRAIN TRAJGEN MPIEXEC SCRATCH_DIR SOURCE_DIR
set -euo pipefail
train=$1 trajgen=$2 mpiexec=$3 dir=$4 src=$5
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fresh_dir "$dir"
# 65 scenes: 64 training rows (validation_fraction 0.02 keeps 1), one step at 32 per rank x 2 ranks.
"$trajgen" "$dir/scenes.h5" --scenes 65 --seed 1 > /dev/null
tiny=(--set data_file="$dir/scenes.h5" --set epochs=1 --set smart_hidden=16 --set smart_heads=2
      --set smart_map_layers=1 --set smart_agent_layers=1 --set motion_vocab=64 --set smart_freqs=4
      --set smart_time_span=2 --set smart_map_neighbours=4 --set smart_agent_neighbours=4 --set warmup_steps=1)
for name in n1_gpu1 n1_gpu2 n1_gpu4 n2_gpu1 n2_gpu2 n4_gpu1 cpu_n1; do
  deck=$src/inputs/$name.in
  value() { awk -v k="$1" '$1 == k { print $2; exit }' "$deck"; }
  [ "$(value model)" = smart ] || fail "$name: model $(value model), not smart"
  effective=$(( $(value nodes) * $(value ranks_per_node) * $(value batch_size) * $(value accumulation_steps) ))
  [ "$effective" -eq 64 ] || fail "$name: effective batch $effective, not 64"
  grep -q "^#   .*trajgen $(value data_file) " "$deck" || fail "$name: no trajgen line for $(value data_file)"
  grep -q "^#   sbatch jobs/$name.sbatch" "$deck" && [ -f "$src/jobs/$name.sbatch" ] || fail "$name: no jobs/$name.sbatch"
  # The header's 2-rank command: from its `mpirun` line through its continuation lines.
  cmd=$(awk '/^#   OMP_NUM_THREADS=1 mpirun / { on = 1 } on { sub(/^# */, ""); line = line " " $0;
             if ($0 !~ /\\$/) exit } END { gsub(/\\/, "", line); print line }' "$deck")
  read -r -a words <<< "$cmd"
  np=0 sets=()
  for ((i = 0; i < ${#words[@]}; ++i)); do
    case "${words[i]}" in
      -np) np=${words[i + 1]} ;;
      --set) sets+=(--set "${words[i + 1]}") ;;
    esac
  done
  [ "$np" = 2 ] && [ "${#sets[@]}" -gt 0 ] || fail "$name: no 'mpirun -np 2 ... --set' line in the header"
  out=$dir/$name
  "$mpiexec" -np 2 --oversubscribe --bind-to none "$train" "$deck" "${sets[@]}" "${tiny[@]}" \
    --set checkpoint_dir="$out.ckpt" --set output="$out.weights.h5" --set metrics_file="$out.metrics.jsonl" \
    > "$out.log" 2>&1 || { cat "$out.log"; fail "$name: the header's 2-rank line failed"; }
  grep -q "^  effective global batch 64 = 32 per rank x 2 ranks" "$out.log" ||
    fail "$name: $(grep 'effective global batch' "$out.log")"
  grep -q "model smart: smart_hidden=16" "$out.log" && [ -s "$out.weights.h5" ] || fail "$name: no smart weights"
  echo "$name: $(grep -m1 '^Done' "$out.log")"
done
echo "layout_decks: the seven decks train model smart at effective batch 64, scaled to 2 ranks"
