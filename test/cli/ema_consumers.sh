#!/usr/bin/env bash
# The consumers of a weights file with an EMA of the weights (ema_decay, issue 39; run by ctest from
# the repository root): predict, sample and convert read the EMA by default and the trained weights
# with --weights raw. Proof that "the EMA" is the `ema/` tensors: h5py writes a copy of the file whose
# trained tensors are replaced by them (and no `ema/` group); its outputs equal the default ones
# bit for bit, while --weights raw gives others. convert's safetensors tensors equal the chosen set
# (safetensors' own reader). --weights ema on a file without EMA, and a bad value, are errors in
# every tool that takes the flag (predict, sample, convert, wxeval, smart_eval, cape_eval).
# usage: ema_consumers.sh BUILD_DIR MPIEXEC WORKDIR PYTHON   (exit 77: PYTHON lacks h5py/safetensors)
set -u
build=$1 mpiexec=$2 work=$3 python=$4
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fresh_dir "$work"
"$python" -c "import h5py, numpy, safetensors" 2>/dev/null || skip "needs h5py, safetensors"
command -v h5diff >/dev/null || fail "h5diff missing (hdf5-tools)"
export OMP_NUM_THREADS=1
apps=$build/apps
run() {  # log command...
  local log=$1
  shift
  "$mpiexec" -np 1 --bind-to none "$@" >"$log" 2>&1 || { cat "$log"; fail "$*"; }
}
# expect_error LOG MESSAGE command...: fails with MESSAGE in its output.
expect_error() {
  local log=$1 msg=$2
  shift 2
  "$mpiexec" -np 1 --bind-to none "$@" >"$log" 2>&1 && fail "$* succeeded"
  grep -qF -- "$msg" "$log" || { cat "$log"; fail "no '$msg' from $*"; }
}
# ema_as_raw IN OUT: IN's EMA tensors as OUT's trained tensors, without an `ema` group.
ema_as_raw() {
  "$python" - "$1" "$2" <<'EOF' || fail "ema_as_raw $1"
import shutil, sys, h5py
src, dst = sys.argv[1:]
shutil.copyfile(src, dst)
with h5py.File(dst, "r+") as f:
    names = []
    f["ema"].visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
    assert names, "no EMA tensors"
    for n in names:
        assert f[n].shape == f["ema/" + n].shape
        f[n][...] = f["ema/" + n][...]
    del f["ema"]
EOF
}

# mlp regression with an EMA; and one without.
"$apps/datagen" friedman1 "$work/reg.h5" --rows 400 >/dev/null || fail "datagen friedman1"
train_mlp() {  # out [more settings]
  local out=$1
  shift
  run "$out.log" "$apps/train" inputs/quickstart.in --set data_file="$work/reg.h5" --set epochs=2 \
    --set hidden_sizes=16,8 --set output="$out" --set metrics_file= "$@"
}
train_mlp "$work/mlp_ema.h5" --set ema_decay=0.9
train_mlp "$work/mlp_plain.h5"
ema_as_raw "$work/mlp_ema.h5" "$work/mlp_ema_as_raw.h5"
predict() {  # weights out [options]
  local w=$1 out=$2
  shift 2
  run "$out.log" "$apps/predict" "$w" "$work/reg.h5" "$out" "$@"
}
predict "$work/mlp_ema.h5" "$work/p_default.h5"
predict "$work/mlp_ema.h5" "$work/p_ema.h5" --weights ema
predict "$work/mlp_ema.h5" "$work/p_raw.h5" --weights raw
predict "$work/mlp_ema_as_raw.h5" "$work/p_reference.h5"
h5diff "$work/p_default.h5" "$work/p_reference.h5" /outputs /outputs || fail "predict's default is not the EMA"
h5diff "$work/p_ema.h5" "$work/p_reference.h5" /outputs /outputs || fail "predict --weights ema is not the EMA"
h5diff -q "$work/p_raw.h5" "$work/p_reference.h5" /outputs /outputs && fail "predict --weights raw gave the EMA"
h5dump -a /weight_set "$work/p_raw.h5" | grep -q '"raw"' || fail "no weight_set raw attribute"
h5dump -a /weight_set "$work/p_default.h5" | grep -q '"ema"' || fail "no weight_set ema attribute"
expect_error "$work/e_predict.log" "mlp_plain.h5: holds no EMA weights (the run had ema_decay 0); use --weights raw" \
  "$apps/predict" "$work/mlp_plain.h5" "$work/reg.h5" "$work/x.h5" --weights ema
expect_error "$work/e_predict2.log" "predict: --weights: 'best' is not ema or raw" \
  "$apps/predict" "$work/mlp_ema.h5" "$work/reg.h5" "$work/x.h5" --weights best

# convert: the safetensors tensors are the chosen set.
run "$work/c_default.log" "$apps/convert" --to safetensors "$work/mlp_ema.h5" "$work/default.safetensors"
run "$work/c_raw.log" "$apps/convert" --to safetensors --weights raw "$work/mlp_ema.h5" "$work/raw.safetensors"
"$python" - "$work/mlp_ema.h5" "$work/default.safetensors" "$work/raw.safetensors" <<'EOF' || fail "convert"
import sys, h5py, numpy as np
from safetensors import safe_open
h5, default, raw = sys.argv[1:]
with h5py.File(h5, "r") as f:
    for path, prefix, set_name in ((default, "ema/", "ema"), (raw, "", "raw")):
        with safe_open(path, framework="numpy") as s:
            assert s.metadata()["hpctrain.weights"] == set_name, s.metadata()
            for key in s.keys():
                want = f[prefix + key.replace(".", "/")][...]
                assert np.array_equal(s.get_tensor(key), want), (path, key)
    assert not np.array_equal(f["fc0/weight"][...], f["ema/fc0/weight"][...])
EOF
expect_error "$work/e_convert.log" "convert: --weights: 'best' is not ema or raw" \
  "$apps/convert" --to safetensors --weights best "$work/mlp_ema.h5" "$work/x.safetensors"

# diffusion: sample (and predict's ensembles) from the EMA.
"$apps/diffgen" "$work/diff_train.h5" --rows 120 --seed 1 >/dev/null || fail "diffgen"
"$apps/diffgen" "$work/diff_test.h5" --rows 4 --seed 2 >/dev/null || fail "diffgen"
run "$work/train_diff.log" "$apps/train" inputs/diffusion_quickstart.in --set data_file="$work/diff_train.h5" \
  --set diffusion_hidden=32 --set epochs=1 --set batch_size=16 --set warmup_steps=0 --set ema_decay=0.9 \
  --set output="$work/diff.h5" --set metrics_file=
ema_as_raw "$work/diff.h5" "$work/diff_as_raw.h5"
sampling=(--members 2 --method ddim --steps 3 --seed 5)
run "$work/s_default.log" "$apps/sample" "$work/diff.h5" "$work/diff_test.h5" "$work/s_default.h5" "${sampling[@]}"
run "$work/s_raw.log" "$apps/sample" "$work/diff.h5" "$work/diff_test.h5" "$work/s_raw.h5" "${sampling[@]}" \
  --weights raw
run "$work/s_ref.log" "$apps/sample" "$work/diff_as_raw.h5" "$work/diff_test.h5" "$work/s_ref.h5" "${sampling[@]}"
h5diff "$work/s_default.h5" "$work/s_ref.h5" /ensembles /ensembles || fail "sample's default is not the EMA"
h5diff -q "$work/s_raw.h5" "$work/s_ref.h5" /ensembles /ensembles && fail "sample --weights raw gave the EMA"
expect_error "$work/e_sample.log" "sample: --weights: 'best' is not ema or raw" \
  "$apps/sample" "$work/diff.h5" "$work/diff_test.h5" "$work/x.h5" --weights best

# The evaluation apps take the flag too (their model families are tested by their own decks).
expect_error "$work/e_wx.log" "wxeval: --weights: 'best' is not ema or raw" \
  "$apps/wxeval" "$work/diff.h5" "$work/diff_test.h5" --weights best
expect_error "$work/e_smart.log" "smart_eval: --weights: 'best' is not ema or raw" \
  "$apps/smart_eval" "$work/diff.h5" "$work/diff_test.h5" --weights best
expect_error "$work/e_cape.log" "cape_eval: --weights: 'best' is not ema or raw" \
  "$apps/cape_eval" "$work/diff.h5" "$work/diff_test.h5" --weights best
echo "ema consumers: OK"
