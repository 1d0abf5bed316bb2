#!/usr/bin/env bash
# Output paths are made ready before any work (run by ctest from the repository root, on 2 ranks):
# a place that cannot be written stops every model family within seconds, before data loading and
# training, with exit code 1 (the code of every failed output write) and one error line naming the
# key and its deck line; missing directories are created; no probe file is left behind and an
# existing output file is not touched by the check.
# usage: output_paths.sh TRAIN_BINARY MPIEXEC WORKDIR
set -u
train=$1 mpiexec=$2 work=$3
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fresh_dir "$work"
export OMP_NUM_THREADS=1
run() { "$mpiexec" -np 2 --bind-to none "$train" "$@"; }
printf 'not a directory\n' >"$work/afile"

# expect_refused NAME FIXED_TEXT ARGS...: exit 1, one error line that contains FIXED_TEXT, and no
# sign of data loading or training on stdout.
expect_refused() {
  local name=$1 text=$2
  shift 2
  run "$@" >"$work/$name.out" 2>"$work/$name.err"
  local rc=$?
  echo "--- $name: exit $rc"; cat "$work/$name.err"
  [ "$rc" -eq 1 ] || fail "$name: exit code $rc, expected 1"
  [ "$(grep -c '^error: ' "$work/$name.err")" -eq 1 ] || fail "$name: expected exactly one 'error:' line"
  grep '^error: ' "$work/$name.err" | grep -qF -- "$text" || fail "$name: the error does not contain: $text"
  if grep -Eiq 'epoch|training rows|trees in' "$work/$name.out"; then
    cat "$work/$name.out"; fail "$name: it loaded data or trained before refusing"
  fi
}

# Every family; the key's place is the --set argument or the deck line. (Outputs the test does not
# aim at are emptied, so that nothing is created in the source tree.)
expect_refused mlp_output "error: --set:1: output: cannot create directory '$work/afile'" \
  inputs/quickstart.in --set output="$work/afile/w.h5"
cat >"$work/gbdt.in" <<DECK
model gbdt
data_file $work/no_data_needed_yet.h5
output $work/afile/sub/model.json
DECK
expect_refused gbdt_output "error: $work/gbdt.in:3: output: cannot create directory '$work/afile" "$work/gbdt.in"
expect_refused gbdt_metrics "error: --set:2: metrics_file: cannot create directory '$work/afile'" \
  inputs/gbdt_binary.in --set output= --set metrics_file="$work/afile/m.jsonl"
expect_refused diffusion_checkpoints "error: --set:3: checkpoint_dir: cannot create directory '$work/afile/ckpt'" \
  inputs/diffusion_quickstart.in --set output= --set metrics_file= --set checkpoint_dir="$work/afile/ckpt"
expect_refused output_is_a_directory "error: --set:1: output: '$work' is a directory; a file name is expected" \
  inputs/quickstart.in --set output="$work"

# The check leaves an existing output file as it was (no truncation) when a later key fails.
printf 'previous model\n' >"$work/existing.h5"
expect_refused existing_output "metrics_file: cannot create directory" \
  inputs/quickstart.in --set output="$work/existing.h5" --set metrics_file="$work/afile/m.jsonl"
[ "$(cat "$work/existing.h5")" = "previous model" ] || fail "the existing output file was changed"

# Missing directories are created, for networks and trees alike, and the runs write there.
"$(dirname "$train")/datagen" friedman1 "$work/f1.h5" --rows 600 >/dev/null || fail "datagen friedman1"
run inputs/quickstart.in --set data_file="$work/f1.h5" --set epochs=1 --set output="$work/new/sub/dir/w.h5" \
    --set metrics_file="$work/m/sub/q.jsonl" --set checkpoint_dir="$work/ck/sub" >"$work/mlp.log" 2>&1 ||
  { cat "$work/mlp.log"; fail "mlp run into new directories"; }
[ -s "$work/new/sub/dir/w.h5" ] || fail "no weights in the new directory"
[ -s "$work/m/sub/q.jsonl" ] || fail "no metrics in the new directory"
[ -d "$work/ck/sub" ] || fail "no checkpoint directory"
"$(dirname "$train")/datagen" higgs "$work/higgs.h5" --rows 2000 >/dev/null || fail "datagen higgs"
run inputs/gbdt_cpu64.in --set ranks_per_node=2 --set data_file="$work/higgs.h5" --set num_trees=2 \
    --set output="$work/g/new/model.json" --set metrics_file="$work/g/other/m.jsonl" >"$work/gbdt.log" 2>&1 ||
  { cat "$work/gbdt.log"; fail "gbdt run into new directories"; }
[ -s "$work/g/new/model.json" ] || fail "no GBDT model in the new directory"
[ -s "$work/g/other/m.jsonl" ] || fail "no GBDT metrics in the new directory"

# A file-size limit on the ranks (`ulimit -f`; mpirun itself keeps none): the write that passes it
# fails with one error line naming the file and exit code 1, instead of SIGXFSZ killing the rank
# (Note [file-size limit] in core/runtime.cpp), and no partial file is left.
"$mpiexec" -np 2 --bind-to none bash -c 'ulimit -f 16 && exec "$0" "$@"' "$train" inputs/quickstart.in \
    --set data_file="$work/f1.h5" --set epochs=1 --set output= --set metrics_file= \
    --set checkpoint_dir="$work/fsize" >"$work/fsize.out" 2>"$work/fsize.err"
rc=$?
echo "--- file-size limit: exit $rc"; grep '^error: ' "$work/fsize.err"
[ "$rc" -eq 1 ] || { cat "$work/fsize.err"; fail "file-size limit: exit code $rc, expected 1"; }
[ "$(grep -c '^error: ' "$work/fsize.err")" -eq 1 ] || fail "file-size limit: expected exactly one 'error:' line"
grep -q "^error: checkpoint write failed: $work/fsize/ckpt-.*File too large" "$work/fsize.err" ||
  fail "file-size limit: the error does not name the checkpoint file and the cause"
[ -z "$(find "$work/fsize" -name '*.tmp*')" ] || fail "file-size limit: a partial checkpoint was left"

probes=$(find "$work" -name '.hpctrain-probe*')
[ -z "$probes" ] || fail "probe files left behind: $probes"
echo "PASS"
