#!/usr/bin/env bash
# inputs/gnn_quickstart.in as its header says, scaled down (300 hours, 6 epochs, leads to 6 steps):
# wxgen writes the region, `train` runs the deck on 2 ranks with its paths under the build tree,
# wxeval rolls the model out on 2 ranks and on 1. The validation loss must fall (last epoch below
# 0.85 x the first), the model's 1-hour RMSE must be below 0.9 x persistence's on average over the
# variables, every variable's RMSE must be below persistence's at every lead up to 4 h (this short
# run reaches 5 h; the full deck and its rollout fine-tuning reach 24 h: docs/gnn-results.md), the table's
# header must name persistence, the CSV must hold every (lead, variable) row, 1 and 2 ranks must
# print the same table, and scripts/plot-forecast must draw the first held-out forecast that
# wxeval --fields wrote.
# usage: gnn_quickstart.sh WXGEN TRAIN WXEVAL MPIEXEC SCRATCH_DIR SOURCE_DIR
set -euo pipefail
wxgen=$1 train=$2 wxeval=$3 mpiexec=$4 dir=$5 src=$6
rm -rf "$dir" && mkdir -p "$dir"
"$wxgen" "$dir/wx.nc" --nx 18 --ny 15 --margin 9 --hours 300 > /dev/null
"$mpiexec" -np 2 --bind-to none "$train" "$src/inputs/gnn_quickstart.in" --set data_file="$dir/wx.nc" \
  --set output="$dir/gnn.h5" --set metrics_file="$dir/metrics.jsonl" --set epochs=6 > "$dir/log" 2>&1 ||
  { cat "$dir/log"; exit 1; }
grep -E "^Epoch|^Done" "$dir/log"
first=$(sed -n 's/^Epoch 1\/.*val loss = \([0-9.e+-]*\).*/\1/p' "$dir/log")
last=$(sed -n 's/.*final val loss \([0-9.e+-]*\).*/\1/p' "$dir/log")
awk -v a="$first" -v b="$last" 'BEGIN { if (!(b < 0.85 * a)) { print "val loss " b " not below 0.85 x " a; exit 1 } }'
"$mpiexec" -np 2 --bind-to none "$wxeval" "$dir/gnn.h5" "$dir/wx.nc" --lead-steps 6 --csv "$dir/eval.csv" --fields "$dir/fields.h5" \
  > "$dir/eval2.log" 2>&1 || { cat "$dir/eval2.log"; exit 1; }
"$mpiexec" -np 1 --bind-to none "$wxeval" "$dir/gnn.h5" "$dir/wx.nc" --lead-steps 6 > "$dir/eval1.log" 2>&1 ||
  { cat "$dir/eval1.log"; exit 1; }
cat "$dir/eval2.log"
# An option's number is read whole or refused naming the option ("6x" is not 6).
rc=0
"$mpiexec" -np 1 --bind-to none "$wxeval" "$dir/gnn.h5" "$dir/wx.nc" --lead-steps 6x > "$dir/bad.log" 2>&1 || rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--lead-steps expects an integer, got '6x'" "$dir/bad.log" ||
  { echo "wxeval --lead-steps 6x: exit $rc"; cat "$dir/bad.log"; exit 1; }
grep -q "persistence_rmse" "$dir/eval2.log" || { echo "no table header naming persistence"; exit 1; }
awk '$1 == 1 && NF == 7 { r += $6; n++ }
     END { if (n != 4 || !(r / n < 0.9)) { print "1-hour RMSE / persistence " r / n " over " n " variables"; exit 1 } }' \
  "$dir/eval2.log"
awk '$1 ~ /^[0-9]+$/ && $1 <= 4 && NF == 7 { n++; if (!($6 < 1)) { print "lead " $1 " h, " $2 ": RMSE " $6 " x persistence"; bad = 1 } }
     END { if (n != 16) { print n " rows to 4 h"; bad = 1 } exit bad }' "$dir/eval2.log"
[ "$(wc -l < "$dir/eval.csv")" -eq 25 ] || { echo "eval.csv should hold a header and 24 rows"; exit 1; }
cmp <(grep -v "^wxeval: .* held-out" "$dir/eval1.log") <(grep -v "^wxeval: .* held-out" "$dir/eval2.log") ||
  { echo "1 and 2 ranks print different tables"; exit 1; }
"$src/scripts/plot-forecast" "$dir/fields.h5" "$dir/forecast.png" --variable u --leads 1,3,6
[ -s "$dir/forecast.png" ] || { echo "no forecast.png"; exit 1; }
