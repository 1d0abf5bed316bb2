#!/usr/bin/env bash
# An ensemble run on the run loop (docs/ensembles.md, "Checkpoints and resume"): an mlp and a GBDT
# member, 2 folds, so 6 passes (each member's 2 fold fits and its final fit). A stop signal seen by
# one rank only (HPCTRAIN_TEST_STOP_AT, raised at a position of the loop: Note [pass position] in
# src/train/pass_loop.cpp) stops every rank with exit code 3 and a checkpoint:
#  1. between members (after the mlp's first fold fit), on 1 and 2 ranks;
#  2. inside a tree member's boosting rounds (the GBDT's first fold fit, after its round 4), on 1
#     and 2 ranks: the checkpoint keeps the booster and the resumed run continues it mid-way;
# `resume auto` then skips the finished passes (their model files read back) and writes the same
# ensemble file, byte for byte, as the uninterrupted run on as many ranks; a member deck changed
# since the checkpoint is refused.
# usage: ensemble_resume.sh TRAIN_BINARY MPIEXEC WORKDIR
set -u
train=$1 mpiexec=$2 work=$3
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fresh_dir "$work"
export OMP_NUM_THREADS=1
"$(dirname "$train")/datagen" higgs "$work/higgs.h5" --rows 3000 >/dev/null || fail "datagen"
cat >"$work/mlp.in" <<DECK
model mlp
data_file $work/higgs.h5
loss bce
hidden_sizes 16
batch_size 64
epochs 2
lr 3e-3
log_every 1000000
DECK
cat >"$work/gbm.in" <<DECK
model gbdt
data_file $work/higgs.h5
objective binary
num_trees 12
max_depth 3
max_bin 31
subsample 0.8
colsample 0.8
DECK
cat >"$work/ens.in" <<DECK
model ensemble
seed 3
data_file $work/higgs.h5
validation_fraction 0.2
objective binary
members $work/mlp.in,$work/gbm.in
folds 2
DECK
run() {  # ranks name [--set ...]: the ensemble into $work/<name>/ens.json
  local np=$1 name=$2
  shift 2
  "$mpiexec" -np "$np" --bind-to none "$train" "$work/ens.in" --set output="$work/$name/ens.json" "$@" \
    >>"$work/$name.log" 2>&1
}

for np in 1 2; do
  run $np ref$np || fail "reference run on $np rank(s): $(tail -3 "$work/ref$np.log")"
  [ -s "$work/ref$np/ens.json" ] || fail "reference run on $np rank(s) wrote no ensemble file"
  # Positions: the mlp's passes take 2 each (its training, its end); the GBDT's first fold fit
  # starts at 6, so its round 4 ends at 10.
  last=$((np - 1))  # the rank that sees the signal
  for stop in between:2 inside:10; do
    name=${stop%%:*}$np
    HPCTRAIN_TEST_STOP_AT=$last:${stop##*:} run $np "$name" --set checkpoint_dir="$work/$name/ckpt"
    rc=$?
    [ $rc -eq 3 ] || fail "$name: exit code $rc, expected 3: $(tail -3 "$work/$name.log")"
    grep -q "Stopped by signal 10 .*: checkpoint $work/$name/ckpt/ckpt-" "$work/$name.log" ||
      fail "$name: no stop line naming the checkpoint: $(tail -2 "$work/$name.log")"
    [ -e "$work/$name/ens.json" ] && fail "$name: a stopped run wrote the ensemble file"
    run $np "$name" --set checkpoint_dir="$work/$name/ckpt" --set resume=auto ||
      fail "$name: resume failed: $(tail -3 "$work/$name.log")"
    grep -q "resume: from $work/$name/ckpt/ckpt-" "$work/$name.log" || fail "$name: the run did not resume"
    cmp "$work/ref$np/ens.json" "$work/$name/ens.json" ||
      fail "$name: ensemble file after the stop and resume differs from the uninterrupted run's"
    echo "$np rank(s): $(grep -o 'Stopped by signal 10 [^:]*' "$work/$name.log"); $(grep -o 'resume: from [^ ]* (.*)' "$work/$name.log"), same ensemble file"
  done
done
grep -q "1 of 6 passes done)" "$work/between1.log" || fail "between1: not resumed after the first pass"
for np in 1 2; do
  grep -q "3 of 6 passes done; member gbm, fold 1/2 continues after round 4)" "$work/inside$np.log" &&
    grep -q "ensemble: member gbm, fold 1/2 continues from round 4" "$work/inside$np.log" ||
    fail "inside$np: the GBDT member did not continue from its checkpointed booster"
done

# A member deck changed since the checkpoint: refused before any training.
sed -i 's/^max_depth 3$/max_depth 4/' "$work/gbm.in"
run 2 changed --set checkpoint_dir="$work/inside2/ckpt" --set resume=auto
rc=$?
[ $rc -eq 2 ] && grep -q "the member decks changed since this checkpoint" "$work/changed.log" ||
  fail "changed member deck: exit $rc, $(grep error "$work/changed.log")"
echo "PASS"
