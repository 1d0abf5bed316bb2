#!/usr/bin/env bash
# inputs/smart_quickstart.in as its header documents, scaled down to seconds: trajgen writes 48
# training and 3 held-out scenes, `train` runs the deck on 2 ranks for 2 epochs with every path
# under the build tree (the loss must fall), and smart_eval rolls the held-out scenes out: the table
# names the constant-velocity baseline and the CSV has a row per agent type with finite numbers;
# scripts/plot-scene draws the scene smart_eval kept (--scene-out) as a PNG; full forwards and 2
# ranks score the same. A --batch whose rows the machine cannot hold is refused naming --batch.
# usage: smart_quickstart.sh TRAIN TRAJGEN SMART_EVAL MPIEXEC SCRATCH_DIR SOURCE_DIR
set -euo pipefail
train=$1 trajgen=$2 smart_eval=$3 mpiexec=$4 dir=$5 src=$6
rm -rf "$dir" && mkdir -p "$dir"
"$trajgen" "$dir/scenes.h5" --scenes 48 --seed 1 > /dev/null
"$trajgen" "$dir/scenes_test.h5" --scenes 3 --seed 2 > /dev/null
"$mpiexec" -np 2 --bind-to none "$train" "$src/inputs/smart_quickstart.in" --set data_file="$dir/scenes.h5" \
  --set epochs=2 --set output="$dir/weights.h5" --set metrics_file="$dir/metrics.jsonl" \
  --set log_every=1000 > "$dir/log" 2>&1 || { cat "$dir/log"; exit 1; }
grep -E "^Epoch|^Done" "$dir/log"
first=$(grep -m1 -oE "^Epoch 1/2: avg loss = [0-9.]+" "$dir/log" | awk '{print $NF}')
last=$(grep -m1 -oE "^Epoch 2/2: avg loss = [0-9.]+" "$dir/log" | awk '{print $NF}')
awk -v a="$first" -v b="$last" 'BEGIN { if (!(b < a)) { print "smart_quickstart: loss did not fall: " a " -> " b; exit 1 } }'
"$smart_eval" "$dir/weights.h5" "$dir/scenes_test.h5" --rollouts 2 --csv "$dir/eval.csv" \
  --scene-out "$dir/scene.h5" --scene 1 > "$dir/eval.log" 2>&1 ||
  { cat "$dir/eval.log"; exit 1; }
cat "$dir/eval.log"
grep -q "vs the constant-velocity baseline" "$dir/eval.log" || { echo "smart_quickstart: no baseline in the table"; exit 1; }
[ "$(head -1 "$dir/eval.csv")" = "type,agents,min_ade,min_fde,miss_rate,const_vel_ade,const_vel_fde,const_vel_miss_rate" ] ||
  { echo "smart_quickstart: unexpected CSV header"; exit 1; }
grep -qE "^vehicle,[1-9][0-9]*,[0-9]+\.[0-9]+," "$dir/eval.csv" || { echo "smart_quickstart: no vehicle scores"; exit 1; }
grep -q "^smart_eval: wrote scene 1 to" "$dir/eval.log" || { echo "smart_quickstart: no scene written"; exit 1; }
# The scores do not depend on how rollouts run: full forwards one scene at a time, and the scenes
# split over 2 ranks, give the CSV of the incremental batched run (Note [incremental rollouts]).
"$smart_eval" "$dir/weights.h5" "$dir/scenes_test.h5" --rollouts 2 --csv "$dir/eval_full.csv" --batch 1 \
  --incremental 0 > "$dir/eval_full.log" 2>&1 || { cat "$dir/eval_full.log"; exit 1; }
"$mpiexec" -np 2 --bind-to none "$smart_eval" "$dir/weights.h5" "$dir/scenes_test.h5" --rollouts 2 \
  --csv "$dir/eval_np2.csv" > "$dir/eval_np2.log" 2>&1 || { cat "$dir/eval_np2.log"; exit 1; }
cmp "$dir/eval.csv" "$dir/eval_full.csv" || { echo "smart_quickstart: incremental rollouts differ"; exit 1; }
cmp "$dir/eval.csv" "$dir/eval_np2.csv" || { echo "smart_quickstart: 2 ranks score otherwise"; exit 1; }
# --batch 2000 x --rollouts 2 under an address-space limit of 8 GB (ulimit -v, so the refusal does
# not depend on the machine's memory or its overcommit setting): one line, exit 1, naming the
# allocation, the rows and the option that lowers them; not a crash with a backtrace.
if (ulimit -v 8000000 && exec "$smart_eval" "$dir/weights.h5" "$dir/scenes_test.h5" --rollouts 2 --batch 2000) \
  > "$dir/eval_big.log" 2>&1; then
  echo "smart_quickstart: --batch 2000 evaluated within 8 GB of address space"; exit 1
else
  code=$?
fi
[ "$code" -eq 1 ] && [ "$(wc -l < "$dir/eval_big.log")" -eq 1 ] &&
  grep -q "^smart_eval: .*allocate.* for --batch 2000 x --rollouts 2 = 4000 rows per forward: lower --batch" \
    "$dir/eval_big.log" || { cat "$dir/eval_big.log"; echo "smart_quickstart: the refusal of --batch 2000 (exit $code)"; exit 1; }
"$src/scripts/plot-scene" "$dir/scene.h5" "$dir/scene.png"
[ -s "$dir/scene.png" ] || { echo "smart_quickstart: no scene.png"; exit 1; }
echo "smart_quickstart: loss $first -> $last; rollouts evaluated and drawn"
