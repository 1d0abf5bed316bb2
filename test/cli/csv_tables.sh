#!/usr/bin/env bash
# A CSV table with a header, as users hold one, through the data-source registry (csv source): an
# mlp trains from it (its loss falls; from the same rows as TSV and LibSVM it logs the same losses), the trees train from it with the label named, keep the
# header's names in the model, the feature importance and both exports, give the same model on 1
# and 2 ranks, and predict reads it back; a file whose header differs from the model's is refused
# naming the column.
# usage: csv_tables.sh BUILD_DIR MPIEXEC WORKDIR
set -u
build=$1 mpiexec=$2 work=$3
train=$build/apps/train predict=$build/apps/predict convert=$build/apps/convert
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fresh_dir "$work"
export OMP_NUM_THREADS=1

# price = 3 width + height^2 + a little noise; `noise` carries nothing. Values from a fixed LCG.
awk 'BEGIN { s = 12345; print "width,height,noise,price";
  for (i = 0; i < 1200; i++) {
    s = (s * 1103515245 + 12345) % 2147483648; w = s / 2147483648;
    s = (s * 1103515245 + 12345) % 2147483648; h = s / 2147483648;
    s = (s * 1103515245 + 12345) % 2147483648; n = s / 2147483648;
    printf "%.6f,%.6f,%.6f,%.6f\n", w, h, n, 3 * w + h * h + 0.05 * n } }' >"$work/table.csv"

# An mlp from the CSV (data_format auto: by extension).
cat >"$work/mlp.in" <<IN
model mlp
data_file $work/table.csv
text_header true
label_column price
validation_fraction 0.2
hidden_sizes 16
batch_size 32
epochs 6
lr 1e-2
log_every 1000
metrics_file $work/mlp.jsonl
output $work/mlp.weights.h5
IN
"$train" "$work/mlp.in" >"$work/mlp.log" 2>&1 || { cat "$work/mlp.log"; fail "mlp on a CSV"; }
first=$(grep -m1 -o 'avg loss = [0-9.e+-]*' "$work/mlp.log" | awk '{print $4}')
last=$(grep -o 'avg loss = [0-9.e+-]*' "$work/mlp.log" | tail -1 | awk '{print $4}')
awk -v a="$last" -v b="$first" 'BEGIN { exit !(a < b / 4) }' || fail "mlp loss $first -> $last did not fall 4x"
echo "mlp on table.csv: loss $first -> $last"

# The same rows as TSV (header, label named) and LibSVM (label first, 1-based ids): the tsv and libsvm
# sources give the mlp the same values, so it logs the same losses as from the CSV.
tr ',' '\t' <"$work/table.csv" >"$work/table.tsv"
awk -F, 'NR > 1 { printf "%s 1:%s 2:%s 3:%s\n", $4, $1, $2, $3 }' "$work/table.csv" >"$work/table.svm"
for f in table.tsv table.svm; do
  sed -e "s|$work/table.csv|$work/$f|" -e "s|mlp\.|mlp_$f.|g" "$work/mlp.in" >"$work/mlp_$f.in"
  [ $f = table.svm ] && sed -i -e '/^text_header/d' -e '/^label_column/d' "$work/mlp_$f.in"
  "$train" "$work/mlp_$f.in" >"$work/mlp_$f.log" 2>&1 || { cat "$work/mlp_$f.log"; fail "mlp on $f"; }
  [ "$(grep -o 'avg loss = [0-9.e+-]*' "$work/mlp_$f.log")" = "$(grep -o 'avg loss = [0-9.e+-]*' "$work/mlp.log")" ] ||
    fail "mlp on $f: losses differ from the CSV's"
done
echo "mlp on table.tsv and table.svm: the CSV's losses"

# Trees with the label named; 2 ranks and 1 rank write the same model.
cat >"$work/gbdt.in" <<IN
model gbdt
data_file $work/table.csv
text_header true
label_column price
objective regression
num_trees 20
max_depth 4
metrics_file $work/gbdt.jsonl
output $work/gbdt.json
importance_file $work/importance.tsv
IN
"$mpiexec" -np 2 --bind-to none "$train" "$work/gbdt.in" >"$work/gbdt2.log" 2>&1 ||
  { cat "$work/gbdt2.log"; fail "gbdt on a CSV, 2 ranks"; }
cp "$work/gbdt.json" "$work/gbdt2.json"
"$train" "$work/gbdt.in" >"$work/gbdt1.log" 2>&1 || { cat "$work/gbdt1.log"; fail "gbdt on a CSV, 1 rank"; }
cmp "$work/gbdt.json" "$work/gbdt2.json" || fail "1 and 2 ranks wrote different models"
grep -q '"feature_names": \["width","height","noise"\]' "$work/gbdt.json" || fail "model lacks the header's names"
grep -q "feature importance (gain, splits): width" "$work/gbdt1.log" ||
  grep -q "feature importance (gain, splits): height" "$work/gbdt1.log" || fail "importance not printed by name"
head -1 "$work/importance.tsv" | grep -q "^feature	splits	gain	cover$" || fail "importance file header"
[ "$(tail -n +2 "$work/importance.tsv" | cut -f1 | sort | tr '\n' ' ')" = "height noise width " ] ||
  fail "importance file names: $(cat "$work/importance.tsv")"
[ "$(tail -1 "$work/importance.tsv" | cut -f1)" = noise ] || fail "noise is not the least important feature"

# Exports carry the names.
"$convert" --to xgboost "$work/gbdt.json" "$work/xgb.json" || fail "convert --to xgboost"
grep -q '"feature_names":\["width","height","noise"\]' "$work/xgb.json" || fail "XGBoost export lacks the names"
"$convert" --to lightgbm "$work/gbdt.json" "$work/lgb.txt" || fail "convert --to lightgbm"
grep -q '^feature_names=width height noise$' "$work/lgb.txt" || fail "LightGBM export lacks the names"

# predict reads the CSV by its header; a renamed column is refused by name.
"$predict" "$work/gbdt.json" "$work/table.csv" "$work/pred.txt" --header --label-column price >"$work/pred.log" 2>&1 ||
  { cat "$work/pred.log"; fail "predict"; }
[ "$(wc -l <"$work/pred.txt")" = 1200 ] || fail "predict wrote $(wc -l <"$work/pred.txt") lines"
sed '1s/height/depth/' "$work/table.csv" >"$work/renamed.csv"
if "$predict" "$work/gbdt.json" "$work/renamed.csv" "$work/bad.txt" --header --label-column price >"$work/bad.log" 2>&1; then
  fail "predict accepted a renamed column"
fi
grep -q "column 'depth'.*'height'" "$work/bad.log" || { cat "$work/bad.log"; fail "the error does not name the column"; }
echo "PASS"
