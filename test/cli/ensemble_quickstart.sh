#!/usr/bin/env bash
# inputs/ensemble_quickstart.in as its header documents (2 ranks, every path moved under the build
# tree), plus a test set of its own (`datagen higgs --seed 2`). Checks:
# - the run writes the ensemble file, its members and the table (CSV);
# - the stacked ensemble is ahead of its best member on the held-out part and on the test set, in
#   AUC and logloss;
# - `predict ENSEMBLE` equals the meta-model applied to the members' own `predict` outputs, and is
#   the same on 1 and 2 ranks up to the network's float32 rounding (its GEMMs see other row blocks);
# - a member file changed after fitting makes `predict ENSEMBLE` fail naming the member's key.
# Exit 77 (skipped) only when PYTHON lacks h5py or numpy.
# usage: ensemble_quickstart.sh TRAIN PYTHON MPIEXEC SCRATCH_DIR SOURCE_DIR
set -euo pipefail
train=$1 python=$2 mpiexec=$3 dir=$4 src=$5
bin=$(dirname "$train")
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
"$python" -c "import h5py, numpy" 2>/dev/null || skip "ensemble_quickstart: no h5py/numpy in $python"
fresh_dir "$dir" && mkdir -p "$dir/runs"
export OMP_NUM_THREADS=1
"$bin/datagen" higgs "$dir/higgs_like.h5" --rows 20000 >/dev/null
"$bin/datagen" higgs "$dir/higgs_test.h5" --rows 10000 --seed 2 >/dev/null
cd "$src"  # the deck names its member decks relative to the repository root
"$mpiexec" -np 2 --bind-to none "$train" inputs/ensemble_quickstart.in --set data_file="$dir/higgs_like.h5" \
  --set test_file="$dir/higgs_test.h5" --set output="$dir/runs/ensemble.json" > "$dir/train.log" 2>&1 ||
  { cat "$dir/train.log"; fail "train inputs/ensemble_quickstart.in"; }
sed -n '/^ensemble: evaluation/,$p' "$dir/train.log"
for f in ensemble.json ensemble.table.csv ensemble.ensemble_mlp.h5 ensemble.ensemble_gbdt.json; do
  [ -s "$dir/runs/$f" ] || fail "the run wrote no runs/$f"
done

predict() { "$mpiexec" -np "$1" --bind-to none "$bin/predict" "${@:2}" >> "$dir/predict.log" 2>&1; }
predict 2 "$dir/runs/ensemble.json" "$dir/higgs_test.h5" "$dir/ens.txt" || { cat "$dir/predict.log"; fail "predict ensemble"; }
predict 1 "$dir/runs/ensemble.json" "$dir/higgs_test.h5" "$dir/ens1.txt" || { cat "$dir/predict.log"; fail "predict ensemble, 1 rank"; }
predict 2 "$dir/runs/ensemble.ensemble_mlp.h5" "$dir/higgs_test.h5" "$dir/mlp.h5" || { cat "$dir/predict.log"; fail "predict mlp"; }
predict 2 "$dir/runs/ensemble.ensemble_gbdt.json" "$dir/higgs_test.h5" "$dir/gbdt.txt" || { cat "$dir/predict.log"; fail "predict gbdt"; }

"$python" - "$dir" <<'PY'
import csv, json, sys
import h5py, numpy as np
d = sys.argv[1]
rows = {r["model"]: r for r in csv.DictReader(open(f"{d}/runs/ensemble.table.csv"))}
members = [m for m in rows if m != "ensemble"]
assert len(members) == 2, rows.keys()
for s in ("valid", "test"):
    ens_auc, ens_ll = float(rows["ensemble"][f"{s}_auc"]), float(rows["ensemble"][f"{s}_logloss"])
    best_auc = max(float(rows[m][f"{s}_auc"]) for m in members)
    best_ll = min(float(rows[m][f"{s}_logloss"]) for m in members)
    assert ens_auc > best_auc, f"{s}: ensemble AUC {ens_auc} is not above its best member's {best_auc}"
    assert ens_ll < best_ll, f"{s}: ensemble logloss {ens_ll} is not below its best member's {best_ll}"
    print(f"{s}: ensemble AUC {ens_auc:.4f} > best member {best_auc:.4f}; logloss {ens_ll:.4f} < {best_ll:.4f}")

# The ensemble's predictions from the members' own predict outputs and the file's meta-model.
e = json.load(open(f"{d}/runs/ensemble.json"))
assert e["combine"] == "stacking" and e["meta"]["model"] == "logistic" and e["meta"]["features"] == "logit", e
with h5py.File(f"{d}/mlp.h5") as f:
    p_mlp = f["probabilities"][:, 0].astype(np.float64)
p_gbdt = np.loadtxt(f"{d}/gbdt.txt")
by_path = {m["path"]: m for m in e["members"]}
order = [m["path"] for m in e["members"]]
assert order == ["ensemble.ensemble_mlp.h5", "ensemble.ensemble_gbdt.json"], order
def logit(p):
    q = np.clip(p, 1e-15, 1 - 1e-15)
    return np.log(q / (1 - q))
z = e["meta"]["intercept"] + e["meta"]["coef"][0] * logit(p_mlp) + e["meta"]["coef"][1] * logit(p_gbdt)
expected = 1 / (1 + np.exp(-z))
got = np.loadtxt(f"{d}/ens.txt")
assert got.shape == expected.shape == (10000,), (got.shape, expected.shape)
err = np.max(np.abs(got - expected))
assert err < 1e-12, f"ensemble predictions differ from the combined member predictions by {err}"
print(f"predict ensemble == sigmoid(b + sum c_i logit(p_i)) of the members' predict outputs (max diff {err:.1e})")
one_rank = np.loadtxt(f"{d}/ens1.txt")
err = np.max(np.abs(one_rank - got))
assert err < 1e-6, f"predict ensemble on 1 and 2 ranks differs by {err}"
print(f"predict ensemble on 1 and 2 ranks: max diff {err:.1e}")
PY

# The same members as files, averaged with weights fitted on data they have not seen (the test set's
# first 70%; its ensemble file in a directory of its own, members by relative path); `predict` on it
# equals the weighted average of the members' predict outputs.
"$mpiexec" -np 2 --bind-to none "$train" inputs/ensemble_quickstart.in --set data_file="$dir/higgs_test.h5" \
  --set validation_fraction=0.3 --set combine=average --set output="$dir/avg/avg.json" \
  --set members="$dir/runs/ensemble.ensemble_mlp.h5,$dir/runs/ensemble.ensemble_gbdt.json" > "$dir/avg.log" 2>&1 ||
  { cat "$dir/avg.log"; fail "train the averaged ensemble"; }
predict 2 "$dir/avg/avg.json" "$dir/higgs_test.h5" "$dir/avg.txt" || { cat "$dir/predict.log"; fail "predict average"; }
"$python" - "$dir" <<'PY'
import json, sys
import h5py, numpy as np
d = sys.argv[1]
e = json.load(open(f"{d}/avg/avg.json"))
assert e["combine"] == "average" and [m["path"] for m in e["members"]] == [
    "../runs/ensemble.ensemble_mlp.h5", "../runs/ensemble.ensemble_gbdt.json"], e
w = e["weights"]
assert abs(sum(w) - 1) < 1e-12 and min(w) > 0.1, w
with h5py.File(f"{d}/mlp.h5") as f:
    p_mlp = f["probabilities"][:, 0].astype(np.float64)
expected = w[0] * p_mlp + w[1] * np.loadtxt(f"{d}/gbdt.txt")
err = np.max(np.abs(np.loadtxt(f"{d}/avg.txt") - expected))
assert err < 1e-12, f"averaged ensemble predictions differ from the weighted member predictions by {err}"
print(f"predict average ensemble == {w[0]:.4f} p_mlp + {w[1]:.4f} p_gbdt (max diff {err:.1e})")
PY

# A member changed after fitting: refused, naming the key.
echo " " >> "$dir/runs/ensemble.ensemble_gbdt.json"
if predict 2 "$dir/runs/ensemble.json" "$dir/higgs_test.h5" "$dir/stale.txt"; then fail "a changed member was accepted"; fi
grep -q "members\[1\].fnv1a64" "$dir/predict.log" || { cat "$dir/predict.log"; fail "the error does not name members[1].fnv1a64"; }
echo "PASS"
