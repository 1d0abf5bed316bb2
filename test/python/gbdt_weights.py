#!/usr/bin/env python3
"""Row weights as users hold them (docs/gbdt.md, docs/tables.md) against LightGBM 4.7 and XGBoost 3.2,
on binary tables that pandas writes here: a header, a text column (city), integer features (every
value its own bin in both tools) and the weight as a named column `w` (0.1 to 3, skewed towards the
rows whose city is "b", so weighting changes the trees and every metric).
- weight_column on data_file and validation_file gives the model and the per-round validation metrics
  that weight_file and validation_weight_file give on the same tables without the column, and 2 ranks
  give the 1-rank model and metrics;
- LightGBM with the weights grows our first trees (the converted model's trees against LightGBM's,
  row by row within 1e-5), LightGBM without them does not;
- every round's valid-logloss and valid-auc in metrics_file equal LightGBM's weighted binary_logloss
  and auc of the converted model's margins after that round (1e-6), and XGBoost's weighted logloss and
  auc of the converted XGBoost model (float32 leaves: 2e-6); the unweighted ones differ;
- early stopping keeps the round LightGBM's rule (first metric only) picks on that metric path;
- predict --weight-column prints the weighted logloss; predict --weight-file (2 ranks) prints the
  weighted logloss train's test_file / test_weight_file gave, the unweighted one differs; a
  `<file>.weight` beside validation_file is logged as not used and changes nothing (Note [weight files]);
- a missing weight column, a weight that is not a number, missing, negative, or a weight column
  with weight_file too: exit 2 naming file:line and the key, no model file; predict with
  --weight-column and --weight-file, or a weight file of another row count (naming it and both
  counts): exit 2, no OUTPUT.

usage: gbdt_weights.py BUILD_DIR MPIEXEC SCRATCH. Exits 77 (skipped) without pandas, lightgbm, xgboost."""
import json
import os
import re
import sys

from tool_run import Checks, import_or_skip, tool_script

lgb, np, pd, xgb = import_or_skip("lightgbm", "numpy", "pandas", "xgboost")

apps, scratch, run = tool_script(sys.argv)
checks = Checks()
path = lambda name: os.path.join(scratch, name)  # noqa: E731
TREES, LEAVES, ETA, STOP = 40, 15, 0.3, 4
FEATURES = ["x1", "city", "x2", "x3"]


def check(cond, what, detail=""):
    if not cond and detail:
        print(detail)
    checks(cond, what)


def table(rng, n):
    city = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    x = rng.integers(0, 16, size=(n, 3))
    s = 0.3 * (x[:, 0] - 7.5) - 0.25 * (x[:, 1] - 7.5) * (city == "b") + np.where(city == "c", 1.0, 0.0)
    y = (rng.random(n) < 1 / (1 + np.exp(-s + rng.normal(0, 1.5, n)))).astype(int)
    w = np.round(np.where(city == "b", rng.uniform(1.0, 3.0, n), rng.uniform(0.1, 1.0, n)), 3)
    return pd.DataFrame({"x1": x[:, 0], "city": city, "target": y, "x2": x[:, 1], "w": w, "x3": x[:, 2]})


def deck(name, lines):
    model = path(name + ".json")
    with open(path(name + ".in"), "w") as f:
        f.write("\n".join(["model gbdt", "seed 3", "log_every 1", "data_format csv", "text_header true",
                           "label_column target", "objective binary", f"num_trees {TREES}", "growth leafwise",
                           f"max_leaves {LEAVES}", "max_depth 0", f"eta {ETA}", "lambda_l2 0",
                           "min_child_weight 0.001", "min_data_in_leaf 20", "eval_metric logloss,auc",
                           f"output {model}", f"metrics_file {model}l"] + lines) + "\n")
    return path(name + ".in"), model


def train(name, lines, ranks=1):
    d, model = deck(name, lines)
    r = run([apps("train"), d], ranks)
    check(r.returncode == 0, f"{name}: train exits 0 on {ranks} rank(s)", r.stdout[-3000:] + r.stderr[-3000:])
    return model, r.stdout + r.stderr


def rounds(model):
    """Per-round (valid-logloss, valid-auc) from the metrics file."""
    recs = [r for r in map(json.loads, open(model + "l")) if r["type"] == "round"]
    return np.array([[r["valid-logloss"], r["valid-auc"]] for r in recs])


def codes(df, cats):
    """The feature columns as the model's codes (the city by the model file's categories)."""
    x = df[FEATURES].copy()
    x["city"] = [cats.index(c) for c in df["city"]]
    return x.to_numpy(dtype=float)


def lightgbm_metrics(margins, y, w):
    """LightGBM's own binary_logloss and auc of given margins (a booster before any tree)."""
    ds = lgb.Dataset(np.zeros((len(y), 1)), y, weight=w, init_score=margins, free_raw_data=False)
    b = lgb.Booster({"objective": "binary", "metric": ["binary_logloss", "auc"], "verbose": -1, "num_threads": 1}, ds)
    out = {name: value for _, name, value, _ in b.eval_train()}
    return out["binary_logloss"], out["auc"]


def stop_round(path_):
    """LightGBM's early stopping on the first metric (lower is better): the 1-based round kept."""
    best, best_i = float("inf"), 0
    for i, v in enumerate(path_):
        if v < best:
            best, best_i = v, i
        elif i - best_i >= STOP:
            break
    return best_i + 1


def main():
    rng = np.random.default_rng(11)
    tr, va = table(rng, 3000), table(rng, 1500)
    tr_csv, va_csv = path("train.csv"), path("valid.csv")
    tr.to_csv(tr_csv, index=False)
    va.to_csv(va_csv, index=False)
    # The same tables without the column, their weights in files (LightGBM's <file>.weight names).
    tr_plain, va_plain = path("train_plain.csv"), path("valid_plain.csv")
    tr.drop(columns="w").to_csv(tr_plain, index=False)
    va.drop(columns="w").to_csv(va_plain, index=False)
    np.savetxt(tr_plain + ".weight", tr["w"], fmt="%.3f")
    np.savetxt(va_plain + ".weight", va["w"], fmt="%.3f")

    cols = [f"data_file {tr_csv}", f"validation_file {va_csv}", "weight_column w"]
    m1, _ = train("column1", cols)
    m2, _ = train("column2", cols, 2)
    files = [f"data_file {tr_plain}", f"validation_file {va_plain}", f"weight_file {tr_plain}.weight",
             f"validation_weight_file {va_plain}.weight"]
    # The same rows as test_file with test_weight_file: the weighted test metric predict --weight-file repeats.
    mf, _ = train("files", files + [f"test_file {va_plain}", f"test_weight_file {va_plain}.weight"])
    mu, log_u = train("unweighted_valid", files[:3])
    if not all(os.path.exists(m) for m in (m1, m2, mf, mu)):
        return
    j1, j2, jf, ju = (json.load(open(m)) for m in (m1, m2, mf, mu))
    r1, r2, rf, ru = (rounds(m) for m in (m1, m2, mf, mu))
    check(j1["feature_names"] == FEATURES, f"the weight and label columns are not features ({j1['feature_names']})")
    check(j1 == j2 and np.array_equal(r1, r2), "2 ranks give the 1-rank model and validation metrics")
    check(j1["trees"] == jf["trees"] and j1["base_margin"] == jf["base_margin"] and np.array_equal(r1, rf),
          "weight_column gives weight_file's model and validation_weight_file's metrics")
    check(".weight is not used: name it in validation_weight_file" in log_u and ju["trees"] == j1["trees"],
          "a valid_plain.csv.weight beside validation_file is logged as not used; the trees are the same",
          log_u[-2000:])
    gap = np.max(np.abs(ru - r1))
    check(gap > 1e-3, f"the validation weights change the per-round metrics (up to {gap:.4f})")

    # LightGBM grows our first trees with the weights (and not without).
    cats = j1["categories"][1]
    lgb_path = path("column1.lgb.txt")
    r = run([apps("convert"), "--to", "lightgbm", m1, lgb_path])
    check(r.returncode == 0, "convert --to lightgbm", r.stdout + r.stderr)
    ours = lgb.Booster(model_file=lgb_path)
    xtr, xva = codes(tr, cats), codes(va, cats)
    df = tr[FEATURES].copy()
    df["city"] = pd.Categorical(df["city"], categories=sorted(cats))
    params = {"objective": "binary", "num_leaves": LEAVES, "learning_rate": ETA, "lambda_l2": 0.0,
              "min_sum_hessian_in_leaf": 1e-3, "min_data_in_leaf": 20, "min_data_in_bin": 1, "max_bin": 255,
              "max_cat_to_onehot": 4, "boost_from_average": True, "deterministic": True, "num_threads": 1,
              "verbose": -1, "feature_pre_filter": False}

    def same_trees(booster):
        for k in range(TREES):
            a = ours.predict(xtr, start_iteration=k, num_iteration=1, raw_score=True)
            b = booster.predict(df, start_iteration=k, num_iteration=1, raw_score=True)
            if not np.allclose(a, b, rtol=1e-5, atol=1e-7):
                return k
        return TREES

    weighted = lgb.train(params, lgb.Dataset(df, tr["target"], weight=tr["w"], categorical_feature=["city"]), 3)
    same = same_trees(weighted)
    print(f"LightGBM grows the same first {same} weighted trees")
    check(same >= 1, f"LightGBM with the weights grows our first tree ({same} trees agree)")
    plain = lgb.train(params, lgb.Dataset(df, tr["target"], categorical_feature=["city"]), 1)
    check(same_trees(plain) == 0, "LightGBM without the weights does not")

    # Every round's weighted validation metrics, as LightGBM and XGBoost compute them.
    yv, wv = va["target"].to_numpy(), va["w"].to_numpy()
    theirs = np.array([lightgbm_metrics(ours.predict(xva, num_iteration=k, raw_score=True), yv, wv)
                       for k in range(1, TREES + 1)])
    diff = np.max(np.abs(theirs - r1))
    check(diff < 1e-6, f"LightGBM's weighted binary_logloss and auc of every round equal ours ({diff:.1e})")
    unw = np.array(lightgbm_metrics(ours.predict(xva, raw_score=True), yv, None))
    check(np.max(np.abs(unw - r1[-1])) > 1e-3, f"LightGBM's unweighted ones do not ({unw} vs {r1[-1]})")
    xgb_path = path("column1.xgb.json")
    r = run([apps("convert"), "--to", "xgboost", m1, xgb_path])
    check(r.returncode == 0, "convert --to xgboost", r.stdout + r.stderr)
    bx = xgb.Booster(model_file=xgb_path)
    dv = xgb.DMatrix(xva, label=yv, weight=wv, feature_names=FEATURES, feature_types=["q", "c", "q", "q"],
                     enable_categorical=True)
    worst = 0.0
    for k in (1, TREES // 2, TREES):
        first = bx[:k]
        first.set_param([("eval_metric", "logloss"), ("eval_metric", "auc")])
        said = dict(re.findall(r"valid-(\w+):(-?[0-9.]+)", first.eval(dv, "valid")))
        worst = max(worst, abs(float(said["logloss"]) - r1[k - 1, 0]), abs(float(said["auc"]) - r1[k - 1, 1]))
    check(worst < 2e-6, f"XGBoost {xgb.__version__}'s weighted logloss and auc of rounds 1, {TREES // 2}, "
          f"{TREES} equal ours ({worst:.1e})")

    # Early stopping on the weighted path: the round LightGBM's rule keeps.
    me, log_e = train("stopping", cols + [f"early_stopping_rounds {STOP}"])
    kept = re.search(r"early stopping kept (\d+) rounds", log_e)
    want, unweighted_want = stop_round(theirs[:, 0]), stop_round(ru[:, 0])
    print(f"early stopping keeps {kept.group(1) if kept else None} rounds; LightGBM's rule on the weighted "
          f"path: {want}, on the unweighted path: {unweighted_want}")
    check(kept is not None and int(kept.group(1)) == want < TREES and want != unweighted_want and
          json.load(open(me))["trees"] == j1["trees"][:want],
          f"early stopping keeps the round LightGBM's rule picks on the weighted logloss ({want}, unweighted "
          f"{unweighted_want})", log_e[-2000:])

    # predict's weighted metric.
    pred = path("valid.pred")
    r = run([apps("predict"), m1, va_csv, pred, "--header", "--label-column", "target", "--weight-column", "w"])
    said = re.search(r"weighted logloss (-?[0-9.]+)", r.stdout + r.stderr)
    check(r.returncode == 0 and said is not None and abs(float(said.group(1)) - r1[-1, 0]) < 1e-6,
          "predict --weight-column prints the weighted logloss train logged", r.stdout[-1500:] + r.stderr[-1500:])
    test_logloss = [rec["test-logloss"] for rec in map(json.loads, open(mf + "l")) if "test-logloss" in rec][-1]
    r = run([apps("predict"), mf, va_plain, pred, "--header", "--label-column", "target", "--weight-file",
             va_plain + ".weight"], 2)
    said = re.search(r"weighted logloss (-?[0-9.]+)", r.stdout + r.stderr)
    check(r.returncode == 0 and said is not None and abs(float(said.group(1)) - test_logloss) < 1e-6,
          f"predict --weight-file on 2 ranks prints train's weighted test logloss ({test_logloss:.6f})",
          r.stdout[-1500:] + r.stderr[-1500:])
    r = run([apps("predict"), mf, va_plain, pred, "--header", "--label-column", "target"])
    plain = re.search(r"rows, logloss (-?[0-9.]+)", r.stdout + r.stderr)
    check(r.returncode == 0 and plain is not None and abs(float(plain.group(1)) - test_logloss) > 1e-3,
          f"without --weight-file the logloss differs ({plain.group(1) if plain else None})",
          r.stdout[-1500:] + r.stderr[-1500:])

    # Refusals: exit 2 naming file:line and the key, no model file.
    def refused(name, lines, expect, what, ranks=1):
        d, model = deck(name, lines)
        r = run([apps("train"), d], ranks)
        msg = r.stdout + r.stderr
        check(r.returncode == 2 and expect in msg and not os.path.exists(model), what + f": exit {r.returncode}",
              msg[-1500:])

    refused("missing", [f"data_file {tr_csv}", "weight_column wt"], "train.csv:1: weight_column",
            "a weight column the header lacks names train.csv:1")
    for name, value, line in (("text", "heavy", 7), ("empty", "", 1500), ("negative", "-0.5", 2900)):
        bad = tr.copy()
        bad["w"] = bad["w"].astype(object)
        bad.loc[line - 2, "w"] = value  # the header is line 1
        bad.to_csv(path(f"{name}.csv"), index=False)
        refused(name, [f"data_file {path(name + '.csv')}", "weight_column w"], f"{name}.csv:{line}: weight_column",
                f"a weight '{value}' names {name}.csv:{line}", 2 if name == "negative" else 1)
    bad = va.copy()
    bad.loc[0, "w"] = float("nan")
    bad.to_csv(path("nan.csv"), index=False)
    refused("nan", cols[:1] + [f"validation_file {path('nan.csv')}", "weight_column w"],
            "nan.csv:2: weight_column", "a NaN weight in validation_file names nan.csv:2")
    refused("both", cols + [f"weight_file {tr_plain}.weight"], "weight_file", "weight_column and weight_file")
    # Note [zero total weight]: rows that all weigh 0 (a set, or validation_fraction's held-out tail) are
    # refused naming the weights; a negative weight_file value names its line.
    va.assign(w=0.0).to_csv(path("zero.csv"), index=False)
    refused("zero", cols[:1] + [f"validation_file {path('zero.csv')}", "weight_column w"],
            "zero.csv: weight_column 'w': the weights of its 1500 rows are all 0", "a validation set weighing 0", 2)
    tail = tr["w"].to_numpy().copy()
    tail[2700:] = 0
    np.savetxt(path("tail0.weight"), tail, fmt="%.3f")
    refused("tail0", [f"data_file {tr_plain}", f"weight_file {path('tail0.weight')}", "validation_fraction 0.1"],
            "tail0.weight: weight_file: the weights of the 300 held-out rows (validation_fraction) are all 0",
            "validation_fraction's held-out rows weighing 0")
    tail[5] = -1
    np.savetxt(path("neg.weight"), tail, fmt="%.3f")
    refused("neg_file", [f"data_file {tr_plain}", f"weight_file {path('neg.weight')}"],
            "neg.weight:6: weight_file: weight -1.000 of row 6 is negative", "a negative weight_file value", 2)
    np.savetxt(path("va0.weight"), np.zeros(len(va)), fmt="%g")
    r = run([apps("predict"), m1, va_plain, path("zero.pred"), "--header", "--label-column", "target",
             "--weight-file", path("va0.weight")], 2)
    check(r.returncode == 2 and "va0.weight: weight_file: the weights of its 1500 rows are all 0" in r.stdout + r.stderr
          and not os.path.exists(path("zero.pred")), "predict --weight-file of zeros is exit 2 naming it",
          r.stdout[-1500:] + r.stderr[-1500:])
    r = run([apps("predict"), m1, path("negative.csv"), path("neg.pred"), "--header", "--label-column", "target",
             "--weight-column", "w"])
    check(r.returncode == 2 and "negative.csv:2900: weight_column" in r.stdout + r.stderr and
          not os.path.exists(path("neg.pred")), "predict: a negative weight is exit 2 naming negative.csv:2900",
          r.stdout[-1500:] + r.stderr[-1500:])
    # Its weight column not named, the table has a feature too many: the error lists the columns.
    r = run([apps("predict"), m1, va_csv, path("unnamed.pred"), "--header", "--label-column", "target"])
    check(r.returncode == 2 and ", w" in r.stdout + r.stderr and "(its feature columns: " in r.stdout + r.stderr and
          "a row weight or query id column is not a feature: --weight-column" in r.stdout + r.stderr and
          not os.path.exists(path("unnamed.pred")), "predict on a table with its weight column not named lists the "
          "columns", r.stdout[-1500:] + r.stderr[-1500:])
    for args, expect, what in (
            ([va_csv, "--weight-column", "w", "--weight-file", va_plain + ".weight"],
             "--weight-column and --weight-file both give the rows' weights", "--weight-column with --weight-file"),
            ([va_plain, "--weight-file", tr_plain + ".weight"],
             tr_plain + ".weight:3000: has 3000 values, the data has 1500 rows", "a weight file of 3000 rows")):
        r = run([apps("predict"), m1, args[0], path("refused.pred"), "--header", "--label-column", "target",
                 *args[1:]])
        check(r.returncode == 2 and expect in r.stdout + r.stderr and not os.path.exists(path("refused.pred")),
              f"predict: {what} is exit 2 naming it", r.stdout[-1500:] + r.stderr[-1500:])


main()
checks.finish()
