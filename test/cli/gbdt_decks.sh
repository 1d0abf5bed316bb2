#!/usr/bin/env bash
# The GBDT decks run as their headers document, scaled down to 2 ranks and a few trees (run by ctest
# from the repository root): inputs/gbdt_cpu64.in on `datagen higgs` data, inputs/gbdt_binary.in on
# LightGBM's example files (examples/data/lightgbm). Each must exit 0, write its model, and reach a
# sane AUC; scripts/plot-metrics draws the binary run's metrics per round.
# usage: gbdt_decks.sh TRAIN_BINARY MPIEXEC WORKDIR
set -u
train=$1 mpiexec=$2 work=$3
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fresh_dir "$work"
export OMP_NUM_THREADS=1
run() { "$mpiexec" -np 2 --bind-to none "$train" "$@"; }
# The last AUC on the final line: "... valid-auc 0.71 ..." or "... test-auc 0.83 ...".
final_auc() { grep "trees in" "$1" | tail -1 | sed -E "s/.*$2-auc ([0-9.]+).*/\1/"; }
above() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > b) }'; }

"$(dirname "$train")/datagen" higgs "$work/higgs_like.h5" --rows 40000 >/dev/null || fail "datagen higgs"
run inputs/gbdt_cpu64.in --set ranks_per_node=2 --set data_file="$work/higgs_like.h5" --set num_trees=20 \
    --set output="$work/cpu64.json" --set metrics_file="$work/cpu64.jsonl" >"$work/cpu64.log" 2>&1 ||
  { cat "$work/cpu64.log"; fail "gbdt_cpu64.in"; }
[ -s "$work/cpu64.json" ] || fail "gbdt_cpu64.in wrote no model"
auc=$(final_auc "$work/cpu64.log" valid)
above "$auc" 0.68 || fail "gbdt_cpu64.in: valid AUC $auc, expected above 0.68"
echo "gbdt_cpu64.in: valid AUC $auc"

# Note [packed gradients]: quantized_gradients gives the same model on 2 ranks x 1 thread and on
# 1 rank x 2 threads, byte for byte (integer histograms; counts estimated from global sums).
q="--set data_file=$work/higgs_like.h5 --set num_trees=10 --set quantized_gradients=true"
run inputs/gbdt_cpu64.in --set ranks_per_node=2 $q --set output="$work/q2.json" --set metrics_file="$work/q2.jsonl" \
  >"$work/q2.log" 2>&1 ||
  { cat "$work/q2.log"; fail "quantized, 2 ranks"; }
OMP_NUM_THREADS=2 "$train" inputs/gbdt_cpu64.in --set ranks_per_node=1 $q --set output="$work/q1.json" \
  --set metrics_file="$work/q1.jsonl" >"$work/q1.log" 2>&1 || { cat "$work/q1.log"; fail "quantized, 1 rank 2 threads"; }
cmp "$work/q1.json" "$work/q2.json" || fail "quantized_gradients: 1 rank x 2 threads and 2 ranks x 1 thread differ"
echo "quantized_gradients: same model on 2 ranks x 1 thread and 1 rank x 2 threads"

run inputs/gbdt_binary.in --set num_trees=20 --set output="$work/binary.json" \
    --set metrics_file="$work/binary.jsonl" >"$work/binary.log" 2>&1 || { cat "$work/binary.log"; fail "gbdt_binary.in"; }
[ -s "$work/binary.json" ] || fail "gbdt_binary.in wrote no model"
auc=$(final_auc "$work/binary.log" test)
above "$auc" 0.78 || fail "gbdt_binary.in: test AUC $auc, expected above 0.78"
echo "gbdt_binary.in: test AUC $auc"
scripts/plot-metrics "$work/binary.jsonl" "$work/binary.png" || fail "plot-metrics on a GBDT metrics file"
[ "$(stat -c %s "$work/binary.png")" -gt 10000 ] || fail "plot-metrics: $work/binary.png holds no plot"
echo "plot-metrics: $(stat -c %s "$work/binary.png") bytes of PNG (AUC and log loss per round)"
echo "PASS"
