#!/usr/bin/env bash
# scripts/scaling on the quickstart deck at 1 and 2 ranks, one short epoch each, weak then strong:
# both finish, print the table and write a CSV with one row per rank count (run from the repo root).
# usage: scaling_smoke.sh TRAIN_BINARY PYTHON WORKDIR
set -u
train=$1 python=$2 work=$3
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fresh_dir "$work"
"$(dirname "$train")/datagen" friedman1 "$work/friedman1.h5" --rows 2000 >/dev/null || fail "datagen friedman1"
for mode in weak strong; do
  "$python" scripts/scaling inputs/quickstart.in --ranks 1,2 --$mode --train "$train" --out "$work/$mode" \
      --set data_file="$work/friedman1.h5" --set epochs=1 --set output= --set log_every=1000 \
      >"$work/$mode.log" 2>&1 || { cat "$work/$mode.log"; fail "scripts/scaling --$mode"; }
  cat "$work/$mode.log"
  grep -q '^| ranks | time (s) | speedup | efficiency | samples/s | rank-hours |$' "$work/$mode.log" || fail "no table"
  [ "$(wc -l <"$work/$mode/scaling.csv")" = 3 ] || fail "$mode: scaling.csv should hold a header and 2 rows"
done
# Strong scaling halves the per-rank batch at 2 ranks: quickstart's 32 becomes 16.
grep -q '^2,16,32,' "$work/strong/scaling.csv" || fail "strong: expected ranks 2 with batch_size 16"
grep -q '^2,32,64,' "$work/weak/scaling.csv" || fail "weak: expected ranks 2 with batch_size 32"
echo "PASS"
