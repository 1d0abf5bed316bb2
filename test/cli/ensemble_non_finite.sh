#!/usr/bin/env bash
# An ensemble's run and `predict ENSEMBLE` refuse the input rows its network members were trained
# refusing (Note [member non-finite inputs] in src/ensemble/refused_rows.cpp), on 2 ranks (exit 2,
# one error line naming file, row, split, member and count): ensembles of an mlp deck and a tree deck
# trained on a clean CSV table and on an HDF5 file (datagen friedman1).
# predict:
# - mlp with missing_numbers error: a NaN (line 5, rank 0's) and an Inf (line 40, rank 1's) refused,
#   the first named with its column and the count; the HDF5 twin by dataset and row;
# - mlp with missing_numbers mean (the default): a NaN reads as missing (predicted, finite outputs),
#   an Inf is refused;
# - trees only: both read as the trees read them (NaN missing, Inf a value), as `predict MODEL.json`.
# train:
# - an mlp file member (missing_numbers error) refuses a NaN of the training split it scores;
# - an mlp deck member (missing_numbers error) trained on a clean training split refuses a NaN of the
#   validation split it scores, and its training a NaN of the training split (named by file line and
#   column, not its index among the fold's rows);
# - an HDF5 Inf (which the trees' reading keeps as FLT_MAX) reaches an mlp deck member as an Inf,
#   which its training refuses, naming the dataset's row;
# - a CSV's inf reaches the members as in predict: trees-only trains, an mlp deck member refuses it,
#   text_allow_infinite false refuses it at load.
# usage: ensemble_non_finite.sh BUILD_DIR MPIEXEC WORKDIR
set -u
build=$1 mpiexec=$2 work=$3
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fresh_dir "$work"
command -v h5import >/dev/null || fail "h5import missing (hdf5-tools)"
export OMP_NUM_THREADS=1
apps=$build/apps
run() {  # log command...
  local log=$1
  shift
  "$mpiexec" -np 2 --oversubscribe --bind-to none "$@" >"$log" 2>&1 || { cat "$log"; fail "$*"; }
}
expect_error() {  # regex command...
  local regex=$1
  shift
  "$mpiexec" -np 2 --oversubscribe --bind-to none "$@" >"$work/err.log" 2>&1 && { cat "$work/err.log"; fail "accepted: $*"; }
  [ $? = 2 ] || { cat "$work/err.log"; fail "exit code not 2: $*"; }
  [ "$(grep -c 'error: ' "$work/err.log")" = 1 ] || { cat "$work/err.log"; fail "not one error line: $*"; }
  grep -Eq "$regex" "$work/err.log" || { cat "$work/err.log"; fail "no '$regex' for: $*"; }
}

# y = 2a - b + c/2 on 60 rows (header y,a,b,c); bad.csv: a NaN in b on line 5, an Inf in c on line 40.
table() {  # file bad
  awk -v bad="$2" 'BEGIN { print "y,a,b,c"; for (r = 0; r < 60; ++r) {
    a = (r * 7 % 13) / 13; b = (r * 5 % 11) / 11; c = (r * 3 % 7) / 7
    sb = (bad && r == 3) ? "" : sprintf("%.4f", b); sc = (bad && r == 38) ? "inf" : sprintf("%.4f", c)
    printf "%.4f,%.4f,%s,%s\n", 2 * a - b + c / 2, a, sb, sc } }' >"$1"
}
table "$work/train.csv" 0
table "$work/bad.csv" 1
grep -v ',inf$' "$work/bad.csv" >"$work/nan_only.csv"
for m in mean error; do
  printf 'model mlp\ndata_file not_read.csv\nloss mse\nhidden_sizes 4\nepochs 1\nbatch_size 16\nmissing_numbers %s\n' \
    "$m" >"$work/mlp_$m.in"
done
printf 'model gbdt\ndata_file not_read.csv\nobjective regression\nnum_trees 3\n' >"$work/trees.in"
ensemble() {  # name data members [--set ...]
  local name=$1 data=$2 members=$3
  shift 3
  printf 'model ensemble\ndata_file %s\nvalidation_fraction 0.2\nobjective regression\nmembers %s\ncombine average\nfolds 2\noutput %s\n' \
    "$data" "$members" "$work/ens_$name.json" >"$work/ens_$name.in"
  run "$work/train_$name.log" "$apps/train" "$work/ens_$name.in" "$@"
}
ensemble_refused() {  # regex name data members [--set ...]: the run is refused
  local regex=$1 name=$2 data=$3 members=$4
  shift 4
  printf 'model ensemble\ndata_file %s\nvalidation_fraction 0.2\nobjective regression\nmembers %s\ncombine average\nfolds 2\noutput %s\n' \
    "$data" "$members" "$work/ens_$name.json" >"$work/ens_$name.in"
  expect_error "$regex" "$apps/train" "$work/ens_$name.in" "$@"
  [ -e "$work/ens_$name.json" ] && fail "a refused run wrote ens_$name.json"
  return 0
}
ensemble strict "$work/train.csv" "$work/mlp_error.in,$work/trees.in" --set text_header=true --set label_column=y
ensemble lenient "$work/train.csv" "$work/mlp_mean.in,$work/trees.in" --set text_header=true --set label_column=y
ensemble trees "$work/train.csv" "$work/trees.in" --set text_header=true --set label_column=y

csv=(--header --label-column y)
expect_error "error: (rank [0-9]+: )?[^ ]*bad.csv:5: column 'b' holds a NaN or Inf \(the first of 2 rows with one\): member [^ ]*ens_strict.mlp_error.h5 \(mlp\) of the ensemble was trained refusing them" \
  "$apps/predict" "$work/ens_strict.json" "$work/bad.csv" "$work/x.txt" "${csv[@]}"
expect_error "error: (rank [0-9]+: )?[^ ]*bad.csv:40: column 'c' holds an Inf \(the only row with one\): member [^ ]*ens_lenient.mlp_mean.h5 \(mlp\)" \
  "$apps/predict" "$work/ens_lenient.json" "$work/bad.csv" "$work/x.txt" "${csv[@]}"
[ -e "$work/x.txt" ] && fail "a refused predict left its output"
run "$work/p_nan.log" "$apps/predict" "$work/ens_lenient.json" "$work/nan_only.csv" "$work/nan_only.txt" "${csv[@]}"
[ "$(wc -l <"$work/nan_only.txt")" = 59 ] || fail "nan_only.txt: not 59 lines"
grep -Eiq 'nan|inf' "$work/nan_only.txt" && fail "the lenient ensemble wrote NaN/Inf for a missing number"
run "$work/p_trees.log" "$apps/predict" "$work/ens_trees.json" "$work/bad.csv" "$work/trees.txt" "${csv[@]}"
grep -Eiq 'nan|inf' "$work/trees.txt" && fail "the trees' ensemble wrote NaN/Inf"

# HDF5: friedman1's inputs [N, 10] and targets [N, 1]; bad.h5's 40 rows hold a NaN in row 3 (rank 0's) and an Inf in row 30 (rank 1's).
"$apps/datagen" friedman1 "$work/f1.h5" --rows 200 >/dev/null || fail "datagen friedman1"
awk 'BEGIN { for (r = 0; r < 40; ++r) for (c = 0; c < 10; ++c)
  printf "%s%s", (r == 3 && c == 2) ? "nan" : (r == 30 && c == 5) ? "inf" : "0.5", c == 9 ? "\n" : " " }' >"$work/bad.txt"
printf 'PATH inputs\nINPUT-CLASS TEXTFP\nINPUT-SIZE 32\nRANK 2\nDIMENSION-SIZES 40 10\nOUTPUT-CLASS FP\nOUTPUT-SIZE 32\n' \
  >"$work/bad.conf"
awk 'BEGIN { for (r = 0; r < 40; ++r) print "1.5" }' >"$work/bad_y.txt"
printf 'PATH targets\nINPUT-CLASS TEXTFP\nINPUT-SIZE 32\nRANK 2\nDIMENSION-SIZES 40 1\nOUTPUT-CLASS FP\nOUTPUT-SIZE 32\n' \
  >"$work/bad_y.conf"
h5import "$work/bad.txt" -c "$work/bad.conf" "$work/bad_y.txt" -c "$work/bad_y.conf" -o "$work/bad.h5" || fail "h5import"
ensemble strict_h5 "$work/f1.h5" "$work/mlp_error.in,$work/trees.in"
expect_error "error: (rank [0-9]+: )?[^ ]*bad.h5: dataset 'inputs' row 3 holds a NaN or Inf \(the first of 2 rows with one\): member [^ ]*ens_strict_h5.mlp_error.h5 \(mlp\)" \
  "$apps/predict" "$work/ens_strict_h5.json" "$work/bad.h5" "$work/x.txt"

# Training refuses what its members refuse. valtail.csv: a NaN in b on line 57, of the validation split.
awk -F, -v OFS=, 'NR == 57 { $3 = "" } { print }' "$work/train.csv" >"$work/valtail.csv"
header=(--set text_header=true --set label_column=y)
run "$work/train_file.log" "$apps/train" "$work/mlp_error.in" --set data_file="$work/train.csv" "${header[@]}" \
  --set validation_fraction=0 --set output="$work/mlp_file.h5"
ensemble_refused "error: (rank [0-9]+: )?[^ ]*nan_only.csv:5: column 'b' holds a NaN or Inf \(the only row with one, in the training split: the first [0-9]+ rows of data_file\): member [^ ]*mlp_file.h5 \(mlp\) of the ensemble was trained refusing them" \
  file_member "$work/nan_only.csv" "$work/mlp_file.h5,$work/trees.in" "${header[@]}"
ensemble_refused "error: (rank [0-9]+: )?[^ ]*valtail.csv:57: column 'b' holds a NaN or Inf \(the only row with one, in the validation split: the last [0-9]+ rows of data_file, validation_fraction 0.2\): member [^ ]*ens_valtail.mlp_error.h5 \(mlp\)" \
  valtail "$work/valtail.csv" "$work/mlp_error.in,$work/trees.in" "${header[@]}"
ensemble_refused "error: (rank [0-9]+: )?[^ ]*nan_only.csv:5: column 'b' \(a row member mlp_error trains on\) holds a NaN or Inf" \
  deck_member "$work/nan_only.csv" "$work/mlp_error.in,$work/trees.in" "${header[@]}"
ensemble_refused "error: (rank [0-9]+: )?[^ ]*bad.h5: dataset 'inputs' row 30 \(a row member mlp_mean trains on\) holds a NaN or Inf" \
  inf_h5 "$work/bad.h5" "$work/mlp_mean.in,$work/trees.in"

# Note [ensemble infinite numbers] (src/data/text_table.cpp): a CSV's `inf` reaches the members, as in
# predict: an ensemble of trees trains on bad.csv (NaN missing, Inf a value) and predicts it as a
# single run would; a network member refuses the Inf of its training rows by its rule (bad.csv's
# line 40 is in the training split), and `text_allow_infinite false` refuses it at load.
ensemble trees_inf "$work/bad.csv" "$work/trees.in" "${header[@]}"
run "$work/p_trees_inf.log" "$apps/predict" "$work/ens_trees_inf.json" "$work/bad.csv" "$work/trees_inf.txt" "${csv[@]}"
grep -Eiq 'nan|inf' "$work/trees_inf.txt" && fail "the trees' ensemble trained on bad.csv wrote NaN/Inf"
ensemble_refused "error: (rank [0-9]+: )?[^ ]*bad.csv:40: column 'c' \(a row member mlp_mean trains on\) holds a NaN or Inf" \
  inf_csv "$work/bad.csv" "$work/mlp_mean.in,$work/trees.in" "${header[@]}"
ensemble_refused "error: (rank [0-9]+: )?[^ ]*bad.csv:40: field 4 \(column 'c'\) 'inf' is infinite" \
  inf_refused "$work/bad.csv" "$work/trees.in" "${header[@]}" --set text_allow_infinite=false
echo "PASS"
