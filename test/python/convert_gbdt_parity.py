#!/usr/bin/env python3
"""GBDT models in XGBoost and LightGBM: trains small models with build/apps/train (regression,
binary, multiclass, with missing values), converts them with build/apps/convert, loads the results
with the real xgboost and lightgbm packages and compares their predictions on the test rows with
build/apps/predict's. Besides the test file, every case scores "boundary" rows that walk each tree
with feature values set exactly to the thresholds on their path (and to the next float above and
below), so that the rewritten split rules are checked where they differ from ours, and LightGBM
also rows with +-inf (XGBoost refuses infinite inputs).

Limits: LightGBM sums in double in our order, so its margins must equal ours exactly; XGBoost keeps
leaf values, base score and sums in float32, so margins must agree within 1e-6 relative (above 1 in
magnitude) or absolute, probabilities within 1e-6. The measured maxima are printed.

usage: convert_gbdt_parity.py BUILD_DIR MPIEXEC WORKDIR DATA_DIR
DATA_DIR is the repository's examples/data (XGBoost's agaricus, LightGBM's binary and multiclass
examples); the generated cases run besides. Exits 77 (ctest: skipped) when xgboost,
lightgbm or h5py cannot be imported."""
import json
import os
import shutil
import subprocess
import sys

from tool_run import import_or_skip, run_ok

h5py, lgb, np, xgb = import_or_skip("h5py", "lightgbm", "numpy", "xgboost")

TOL = 1e-6
build, mpiexec, work = sys.argv[1], sys.argv[2], sys.argv[3]
data = sys.argv[4]
tool = {name: os.path.join(build, "apps", name) for name in ("train", "predict", "convert", "datagen")}
failures = []


run = run_ok


def mpirun(*args):
    return run(mpiexec, "-np", "1", "--bind-to", "none", *args)


def write_tsv(path, y, x):
    """Label first, NaN as 'nan', values with 9 digits (float32 reads back exactly)."""
    with open(path, "w") as f:
        for yi, row in zip(y, x):
            f.write("\t".join([f"{yi:.9g}"] + ["nan" if np.isnan(v) else f"{v:.9g}" for v in row]) + "\n")


def read_tsv(path, nfeat):
    data = np.genfromtxt(path, delimiter="\t", dtype=np.float64, missing_values=["nan", ""],
                         filling_values=np.nan)
    data = np.atleast_2d(data)
    return data[:, 1:1 + nfeat].astype(np.float32)


def read_libsvm(path, nfeat, base):
    rows = []
    for line in open(path):
        parts = line.split()
        if not parts:
            continue
        row = np.full(nfeat, np.nan, dtype=np.float32)
        for item in parts[1:]:
            k, v = item.split(":")
            row[int(k) - base] = np.float32(v)
        rows.append(row)
    return np.array(rows, dtype=np.float32)


def with_missing(x, seed, fraction=0.1):
    x = x.copy()
    x[np.random.default_rng(seed).random(x.shape) < fraction] = np.nan
    return x


def boundary_rows(model, x, seed):
    """Rows that meet thresholds exactly: per tree, base rows walk the tree and set each feature they
    meet (once per row) to the node's threshold, or the float just above or below it."""
    rng = np.random.default_rng(seed)
    out = []
    for tree in model["trees"]:
        for rep in range(4):
            row = x[rng.integers(len(x))].copy()
            fixed = set()
            node = 0
            while tree["left"][node] >= 0:
                f, t = tree["feature"][node], np.float32(tree["threshold"][node])
                if f not in fixed:
                    mode = (rep + len(fixed)) % 3
                    v = t if mode == 0 else np.nextafter(t, np.float32(np.inf if mode == 1 else -np.inf))
                    row[f] = v if np.isfinite(v) else t  # above FLT_MAX: XGBoost takes no inf
                    fixed.add(f)
                v = row[f]
                left = bool(tree["default_left"][node]) if np.isnan(v) else (v <= t)
                node = tree["left"][node] if left else tree["right"][node]
            out.append(row)
    return np.array(out, dtype=np.float32)


def with_infinities(x, seed):
    x = x[:200].copy()
    rng = np.random.default_rng(seed)
    mask = rng.random(x.shape) < 0.1
    x[mask] = np.where(rng.random(x.shape) < 0.5, np.inf, -np.inf)[mask]
    return x


def ours(model_path, data_path, K, fmt_args, predictions):
    """apps/predict's margins and (predictions true) predictions, [n, K]; else None for the latter
    (a regression's predictions are its margins: only the margins are compared)."""
    res = [None, None]
    for i, extra in enumerate((["--margin"], []) if predictions else (["--margin"],)):
        # Outputs go to the work folder, never beside the data (examples/data is part of the source).
        out = os.path.join(work, os.path.basename(data_path) + (".margin" if extra else ".pred"))
        mpirun(tool["predict"], model_path, data_path, out, *fmt_args, *extra)
        res[i] = np.loadtxt(out, dtype=np.float64, ndmin=2).reshape(-1, K)
    return res


def compare(case, what, got, want, relative):
    got = np.asarray(got, dtype=np.float64).reshape(want.shape)
    diff = np.abs(got - want)
    scale = np.maximum(1.0, np.abs(want)) if relative else 1.0
    worst = float(np.max(diff / scale)) if diff.size else 0.0
    limit = 0.0 if what.startswith("lightgbm") else TOL
    ok = worst <= limit
    print(f"{case:28s} {what:28s} max |diff| {float(np.max(diff)) if diff.size else 0:.3e}"
          f"{' (relative ' + format(worst, '.3e') + ')' if relative else ''}  {'ok' if ok else 'FAIL'}")
    if not ok:
        failures.append(f"{case} {what}")


def check_case(case, deck_lines, nfeat, sets, fmt_args=(), cwd=None):
    """Trains (deck_lines), converts, and compares on each (name, data_file, x, xgboost_too) of sets."""
    model = os.path.join(work, case + ".json")
    deck = os.path.join(work, case + ".in")
    with open(deck, "w") as f:
        f.write("\n".join(deck_lines + [f"output {model}", f"metrics_file {model}.jsonl"]) + "\n")
    r = subprocess.run([mpiexec, "-np", "1", "--bind-to", "none", tool["train"], deck], capture_output=True,
                       text=True, cwd=cwd)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
        raise SystemExit(f"FAILED: training {case}")
    m = json.load(open(model))
    K = m["num_outputs"]
    xgb_path, lgb_path = model + ".xgb.json", model + ".lgb.txt"
    run(tool["convert"], "--to", "xgboost", model, xgb_path)
    run(tool["convert"], "--to", "lightgbm", model, lgb_path)
    bx = xgb.Booster(model_file=xgb_path)
    bx.set_param({"nthread": 1})
    bl = lgb.Booster(model_file=lgb_path)
    regression = m["objective"] == "regression"
    base_rows = sets[0][2]
    scored = [(name, x, xgb_too) + tuple(ours(model, path, K, list(fmt_args), not regression))
              for name, path, x, xgb_too in sets]
    # The generated rows go through apps/predict as one TSV with label 0 (valid for every objective),
    # cut back into their sets by row: 2 runs of predict instead of 4.
    generated = [("boundary", boundary_rows(m, base_rows, 7), True),
                 ("infinities", with_infinities(base_rows, 8), False)]
    gx = np.concatenate([x for _, x, _ in generated])
    path = os.path.join(work, f"{case}.generated.tsv")
    write_tsv(path, np.zeros(len(gx)), gx)
    margins, preds = ours(model, path, K, ["--format", "tsv"], not regression)
    first = 0
    for name, x, xgb_too in generated:
        rows = slice(first, first + len(x))
        scored.append((name, x, xgb_too, margins[rows], None if regression else preds[rows]))
        first += len(x)
    assert first == len(margins), (first, len(margins))
    for name, x, xgb_too, margin, pred in scored:
        label = f"{case}/{name} ({len(x)} rows)"
        compare(label, "lightgbm margin", bl.predict(x, raw_score=True), margin, False)
        if not regression:
            compare(label, "lightgbm probability", bl.predict(x), pred, False)
        if xgb_too:
            dm = xgb.DMatrix(x, missing=np.nan)
            compare(label, "xgboost margin", bx.predict(dm, output_margin=True), margin, True)
            if not regression:
                compare(label, "xgboost probability", bx.predict(dm), pred, False)


def main():
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    common = ["model gbdt", "seed 3", "log_every 10", "max_bin 63"]

    # Regression and multiclass from datagen's Friedman #1 (targets standardised; classes by
    # tertiles), binary from its HIGGS-like set; 10% of the feature values missing.
    fr = os.path.join(work, "friedman1.h5")
    run(tool["datagen"], "friedman1", fr, "--rows", "3000", "--features", "8", "--seed", "5")
    with h5py.File(fr, "r") as f:
        x = with_missing(np.array(f["inputs"], dtype=np.float32), 1)
        y = np.array(f["targets"], dtype=np.float64).reshape(-1)
    y = ((y - y.mean()) / y.std()).astype(np.float32)
    classes = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3])).astype(np.float32)
    hg = os.path.join(work, "higgs.h5")
    run(tool["datagen"], "higgs", hg, "--rows", "4000", "--seed", "6")
    with h5py.File(hg, "r") as f:
        xh = with_missing(np.array(f["inputs"], dtype=np.float32), 2)
        yh = np.array(f["targets"], dtype=np.float32).reshape(-1)
    generated = [("regression", y, x, ["objective regression", "num_trees 40", "eta 0.2", "max_depth 5"]),
                 ("binary", yh, xh, ["objective binary", "num_trees 40", "growth leafwise", "max_leaves 15",
                                     "max_depth 0", "subsample 0.8", "colsample 0.8"]),
                 ("multiclass", classes, x, ["objective multiclass", "num_class 3", "num_trees 15", "eta 0.3",
                                             "max_depth 4"])]
    for case, yy, xx, keys in generated:
        n = len(yy) * 4 // 5
        tr, te = os.path.join(work, case + ".train.tsv"), os.path.join(work, case + ".test.tsv")
        write_tsv(tr, yy[:n], xx[:n])
        write_tsv(te, yy[n:], xx[n:])
        check_case(case, common + keys + [f"data_file {tr}", "data_format tsv"], xx.shape[1],
                   [("test", te, read_tsv(te, xx.shape[1]), True)], ["--format", "tsv"])

    if not os.path.isdir(os.path.join(data, "lightgbm")):
        print(f"FAILED: the example data {data} is missing")
        sys.exit(1)
    ag = os.path.join(data, "xgboost", "agaricus.txt")
    check_case("agaricus", common + [f"data_file {ag}.train", "data_format libsvm", "libsvm_base 0",
                                     "libsvm_num_features 127", "objective binary", "num_trees 10",
                                     "max_depth 3"],
               127, [("test", ag + ".test", read_libsvm(ag + ".test", 127, 0), True)],
               ["--format", "libsvm", "--libsvm-base", "0"])
    lg = os.path.join(data, "lightgbm")
    check_case("lightgbm_binary", common + [f"data_file {lg}/binary.train", f"weight_file {lg}/binary.train.weight",
                                            "data_format tsv", "objective binary", "num_trees 30",
                                            "growth leafwise", "max_leaves 63", "max_depth 0",
                                            "min_child_weight 5", "subsample 0.8", "colsample 0.8"],
               28, [("test", f"{lg}/binary.test", read_tsv(f"{lg}/binary.test", 28), True)], ["--format", "tsv"])
    check_case("lightgbm_multiclass", common + [f"data_file {lg}/multiclass.train", "data_format tsv",
                                                "objective multiclass", "num_trees 10", "growth leafwise",
                                                "max_leaves 31", "max_depth 0", "eta 0.05"],
               28, [("test", f"{lg}/multiclass.test", read_tsv(f"{lg}/multiclass.test", 28), True)],
               ["--format", "tsv"])

    if failures:
        print(f"FAILED: {len(failures)} comparisons: {', '.join(failures)}")
        sys.exit(1)
    print(f"PASS: xgboost {xgb.__version__} and lightgbm {lgb.__version__} predict what apps/predict does")


if __name__ == "__main__":
    main()
