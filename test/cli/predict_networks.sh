#!/usr/bin/env bash
# apps/predict serves every family (run by ctest from the repository root): weights files of an mlp
# regressor, an mlp classifier and a diffusion model, each trained by a tiny `train` run, and a GBDT
# model. Checks: one dataset per named output with the right shape, finite values, the same values
# on 1 and 2 ranks, diffusion ensembles deterministic for a seed (and different for another seed)
# and equal to apps/sample's, the GBDT path's text output, and input errors. The mlp outputs against
# a PyTorch forward pass: test/python/predict_outputs.py (test predict_mlp_torch) on the files
# left in WORKDIR.
# usage: predict_networks.sh BUILD_DIR MPIEXEC WORKDIR
set -u
build=$1 mpiexec=$2 work=$3
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fresh_dir "$work"
command -v h5diff >/dev/null && command -v h5dump >/dev/null && command -v h5import >/dev/null ||
  fail "h5diff/h5dump/h5import missing (hdf5-tools)"
export OMP_NUM_THREADS=1
apps=$build/apps
run() {  # ranks log command...
  local np=$1 log=$2
  shift 2
  "$mpiexec" -np "$np" --oversubscribe --bind-to none "$@" >"$log" 2>&1 || { cat "$log"; fail "$*"; }
}
# shape FILE DATASET "(a, b)": the dataset's dataspace and no NaN/Inf among its values.
shape() {
  h5dump -H -d "$2" "$1" | grep -q "DATASPACE  SIMPLE { $3 /" || { h5dump -H "$1"; fail "$1: $2 is not $3"; }
  h5dump -d "$2" "$1" | sed '1,/DATA {/d' | grep -Eiq 'nan|inf' && fail "$1: $2 has NaN/Inf"
  return 0
}

# mlp regression (Friedman #1: inputs [600, 10], targets [600, 1]).
"$apps/datagen" friedman1 "$work/reg.h5" --rows 600 >/dev/null || fail "datagen friedman1"
run 1 "$work/train_reg.log" "$apps/train" inputs/quickstart.in --set data_file="$work/reg.h5" --set epochs=2 \
  --set hidden_sizes=16,8 --set output="$work/mlp_reg.h5" --set best_output="$work/mlp_reg_best.h5" \
  --set metrics_file=
run 1 "$work/p_reg1.log" "$apps/predict" "$work/mlp_reg.h5" "$work/reg.h5" "$work/p_reg1.h5"
run 2 "$work/p_reg2.log" "$apps/predict" "$work/mlp_reg.h5" "$work/reg.h5" "$work/p_reg2.h5" --chunk 50
shape "$work/p_reg1.h5" /outputs "( 600, 1 )"
h5dump -H "$work/p_reg1.h5" | grep -q probabilities && fail "a regressor wrote probabilities"
h5diff -d 1e-5 "$work/p_reg1.h5" "$work/p_reg2.h5" /outputs /outputs || fail "mlp outputs differ between 1 and 2 ranks"
grep -q "wrote .*p_reg1.h5 (outputs \[600, 1\])" "$work/p_reg1.log" || { cat "$work/p_reg1.log"; fail "no wrote line"; }
# best_output is a weights file like output (the lower validation loss of the two epochs).
run 1 "$work/p_best.log" "$apps/predict" "$work/mlp_reg_best.h5" "$work/reg.h5" "$work/p_best.h5"
shape "$work/p_best.h5" /outputs "( 600, 1 )"

# mlp classifier (HIGGS-like: inputs [800, 28], labels 0/1): logits and probabilities.
"$apps/datagen" higgs "$work/cls.h5" --rows 800 >/dev/null || fail "datagen higgs"
run 1 "$work/train_cls.log" "$apps/train" inputs/quickstart.in --set data_file="$work/cls.h5" --set epochs=1 \
  --set hidden_sizes=16 --set loss=cross_entropy --set num_classes=2 --set output="$work/mlp_cls.h5" \
  --set metrics_file=
run 2 "$work/p_cls.log" "$apps/predict" "$work/mlp_cls.h5" "$work/cls.h5" "$work/p_cls.h5" --rows 301
shape "$work/p_cls.h5" /outputs "( 301, 2 )"
shape "$work/p_cls.h5" /probabilities "( 301, 2 )"
run 1 "$work/p_cls_only.log" "$apps/predict" "$work/mlp_cls.h5" "$work/cls.h5" "$work/p_cls_only.h5" \
  --outputs probabilities
h5dump -H "$work/p_cls_only.h5" | grep -q 'DATASET "outputs"' && fail "--outputs probabilities wrote outputs"
shape "$work/p_cls_only.h5" /probabilities "( 800, 2 )"

# diffusion: ensembles [N, members, 256] of the contexts.
"$apps/diffgen" "$work/diff_train.h5" --rows 200 --seed 1 >/dev/null || fail "diffgen"
"$apps/diffgen" "$work/diff_test.h5" --rows 9 --seed 2 >/dev/null || fail "diffgen"
run 1 "$work/train_diff.log" "$apps/train" inputs/diffusion_quickstart.in --set data_file="$work/diff_train.h5" \
  --set diffusion_hidden=32 --set epochs=1 --set batch_size=16 --set warmup_steps=0 \
  --set output="$work/diff.h5" --set metrics_file=
sampling=(--members 3 --method ddim --steps 4 --chunk 3)
predict_diff() {  # ranks out [more options]
  local np=$1 out=$2
  shift 2
  run "$np" "$out.log" "$apps/predict" "$work/diff.h5" "$work/diff_test.h5" "$out" --inputs-dataset context \
    "${sampling[@]}" "$@"
}
predict_diff 1 "$work/e1.h5" --seed 5
predict_diff 1 "$work/e1_again.h5" --seed 5
predict_diff 2 "$work/e2.h5" --seed 5
predict_diff 1 "$work/e_seed6.h5" --seed 6
shape "$work/e1.h5" /ensembles "( 9, 3, 256 )"
h5diff "$work/e1.h5" "$work/e1_again.h5" /ensembles /ensembles || fail "ensembles differ for the same seed"
# --chunk = --members: every network batch is one context, so the ranks' split cannot change a value.
h5diff "$work/e1.h5" "$work/e2.h5" /ensembles /ensembles || fail "ensembles differ between 1 and 2 ranks"
h5diff -q "$work/e1.h5" "$work/e_seed6.h5" /ensembles /ensembles && fail "ensembles equal for seeds 5 and 6"
run 1 "$work/s1.log" "$apps/sample" "$work/diff.h5" "$work/diff_test.h5" "$work/s1.h5" "${sampling[@]}" --seed 5
h5diff "$work/e1.h5" "$work/s1.h5" /ensembles /ensembles || fail "predict and sample differ"
h5dump -a /network_evaluations "$work/e1.h5" | grep -q "(0): 4" || fail "no network_evaluations attribute"

# GBDT: a JSON model keeps its text output, one line per row.
"$mpiexec" -np 1 --bind-to none "$apps/train" inputs/gbdt_cpu64.in --set ranks_per_node=0 --set data_file="$work/cls.h5" \
  --set num_trees=3 --set output="$work/gbdt.json" --set metrics_file= >"$work/train_gbdt.log" 2>&1 ||
  { cat "$work/train_gbdt.log"; fail "train gbdt"; }
run 2 "$work/p_gbdt.log" "$apps/predict" "$work/gbdt.json" "$work/cls.h5" "$work/p_gbdt.txt"
[ "$(wc -l <"$work/p_gbdt.txt")" = 800 ] || fail "GBDT predictions: $(wc -l <"$work/p_gbdt.txt") lines, expected 800"

# Input errors: exit code 2 and one message.
expect_error() {  # regex command...
  local regex=$1
  shift
  "$mpiexec" -np 2 --oversubscribe --bind-to none "$@" >"$work/err.log" 2>&1 && fail "accepted: $*"
  [ $? = 2 ] || { cat "$work/err.log"; fail "exit code not 2: $*"; }
  grep -Eq "$regex" "$work/err.log" || { cat "$work/err.log"; fail "no '$regex' for: $*"; }
}
expect_error "has no output 'logits' \(it has outputs, probabilities\)" \
  "$apps/predict" "$work/mlp_cls.h5" "$work/cls.h5" "$work/x.h5" --outputs logits
expect_error "no dataset 'inputs' \\(the diffusion model's input; --inputs-dataset NAME reads another\\)" \
  "$apps/predict" "$work/diff.h5" "$work/diff_test.h5" "$work/x.h5"
expect_error "dataset 'inputs' is \\[800, 28\\]; the mlp model's input is rows of \\[10\\] \\(10 values\\)" \
  "$apps/predict" "$work/mlp_reg.h5" "$work/cls.h5" "$work/x.h5"
# Note [predict non-finite inputs]: a NaN or Inf among the inputs is refused as training refuses it
# (12 rows of 10: a NaN in row 3, rank 0's, an Inf in row 9, rank 1's; h5import reads nan and inf).
awk 'BEGIN { for (r = 0; r < 12; ++r) for (c = 0; c < 10; ++c)
  printf "%s%s", (r == 3 && c == 2) ? "nan" : (r == 9 && c == 5) ? "inf" : "0.5", c == 9 ? "\n" : " " }' >"$work/nan.txt"
printf 'PATH inputs\nINPUT-CLASS TEXTFP\nINPUT-SIZE 32\nRANK 2\nDIMENSION-SIZES 12 10\nOUTPUT-CLASS FP\nOUTPUT-SIZE 32\n' \
  >"$work/nan.conf"
h5import "$work/nan.txt" -c "$work/nan.conf" -o "$work/nan.h5" || fail "h5import"
expect_error "nan.h5: dataset 'inputs' row 3 holds a NaN or Inf \(the first of 2 rows with one\): the mlp model" \
  "$apps/predict" "$work/mlp_reg.h5" "$work/nan.h5" "$work/x.h5"
expect_error "unknown sampling method 'euler'" \
  "$apps/predict" "$work/diff.h5" "$work/diff_test.h5" "$work/x.h5" --inputs-dataset context --method euler
expect_error "does not generate ensembles|do not generate ensembles" \
  "$apps/sample" "$work/mlp_reg.h5" "$work/diff_test.h5" "$work/x.h5"
[ -e "$work/x.h5" ] && fail "a failed run left its output"
echo "PASS"
