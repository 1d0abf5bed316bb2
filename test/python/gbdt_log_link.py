#!/usr/bin/env python3
"""The log-link GBDT objectives (poisson, gamma, tweedie; Note [log-link objectives]) end to end
against LightGBM and XGBoost: a CSV of counts / positive amounts / zero-inflated amounts written by
pandas is trained with build/apps/train on 1 and 2 ranks (the same model, byte for byte), and with
LightGBM at matched settings on the same rows. The features take few distinct values, so both tools
bin every value alone and grow the same trees: every tree gives every training row the same value
(within 1e-5; LightGBM sums float32 gradients). Test rows may still differ where a node's training
rows leave a gap between two cuts (LightGBM's threshold at the higher, ours at the lower:
docs/gbdt-parity.md), so test predictions are printed, not compared. Our model converted with
apps/convert gives our predictions in LightGBM (exactly) and in XGBoost (float32 leaves: 1e-5), and
XGBoost's own metric of the converted model equals the one apps/predict prints (poisson-nloglik,
gamma-deviance, tweedie-nloglik@r).
A regression ensemble takes a poisson member (2 ranks). Bad labels are exit code 2 naming file and
line, also a poisson member's in an ensemble.

usage: gbdt_log_link.py BUILD_DIR MPIEXEC SCRATCH. Exits 77 (skipped) without pandas, lightgbm or
xgboost."""
import json
import os
import re
import sys

from lightgbm_trees import same_trees
from tool_run import Checks, import_or_skip, tool_script

lgb, np, pd, xgb = import_or_skip("lightgbm", "numpy", "pandas", "xgboost")

apps, scratch, run = tool_script(sys.argv)
checks = Checks()
path = lambda name: os.path.join(scratch, name)  # noqa: E731


def check(cond, what, detail=""):
    if not cond and detail:
        print(detail)
    checks(cond, what)

TREES, LEAVES, ETA = 30, 15, 0.1
XGB_METRIC = {"poisson": "poisson-nloglik", "gamma": "gamma-deviance", "tweedie": "tweedie-nloglik@1.5"}


def tables(seed):
    """Integer features in 0..15; the log mean depends on three of them; labels per objective."""
    rng = np.random.default_rng(seed)
    n = 3000
    x = rng.integers(0, 16, size=(n, 5)).astype(np.float64)
    log_mu = 0.08 * x[:, 0] - 0.05 * x[:, 1] + 0.4 * (x[:, 2] > 7) - 0.3
    mu = np.exp(log_mu)
    counts = rng.poisson(mu).astype(np.float64)
    amounts = rng.gamma(2.0, mu / 2.0)
    # compound Poisson-gamma: many exact zeros, positive amounts otherwise (Tweedie, 1 < r < 2)
    claims = rng.poisson(mu * 0.6)
    zero_inflated = np.array([rng.gamma(2.0, 1.0, k).sum() if k else 0.0 for k in claims])
    cols = {f"x{j}": x[:, j] for j in range(5)}
    return {o: pd.DataFrame(dict(cols, y=y)) for o, y in
            (("poisson", counts), ("gamma", amounts), ("tweedie", zero_inflated))}


def train_ours(objective, csv, ranks, tag):
    model = path(f"{objective}_{tag}.json")
    deck = path(f"{objective}_{tag}.in")
    with open(deck, "w") as f:
        f.write("\n".join([
            "model gbdt", f"objective {objective}", f"data_file {csv}", "text_header true", "label_column y",
            f"num_trees {TREES}", "growth leafwise", f"max_leaves {LEAVES}", "max_depth 0", f"eta {ETA}",
            "lambda_l2 0", "min_child_weight 1", "min_data_in_leaf 0", f"output {model}",
            f"metrics_file {model}.jsonl"]) + "\n")
    r = run([apps("train"), deck], ranks)
    check(r.returncode == 0, f"{objective}: train on {ranks} rank(s)", r.stdout[-2000:] + r.stderr[-2000:])
    return model


def predict_ours(model, csv, extra=()):
    out = path(os.path.basename(model) + ".pred")
    r = run([apps("predict"), model, csv, out, "--header", "--label-column", "y", *extra])
    check(r.returncode == 0, f"predict {model}", r.stdout + r.stderr)
    return np.loadtxt(out, dtype=np.float64), r.stdout + r.stderr


def lightgbm_model(objective, df):
    params = {"objective": objective, "num_leaves": LEAVES, "learning_rate": ETA, "lambda_l2": 0.0,
              "min_sum_hessian_in_leaf": 1.0, "min_data_in_leaf": 0, "min_data_in_bin": 1, "max_bin": 255,
              "boost_from_average": True, "deterministic": True, "num_threads": 1, "verbose": -1,
              "feature_pre_filter": False}
    x, y = df.drop(columns="y").to_numpy(), df["y"].to_numpy()
    return lgb.train(params, lgb.Dataset(x, y), TREES)



def relative(a, b):
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-12)))


def main():
    frames = tables(7)
    for objective, df in frames.items():
        train_csv, test_csv = path(f"{objective}_train.csv"), path(f"{objective}_test.csv")
        df.iloc[:2400].to_csv(train_csv, index=False)
        df.iloc[2400:].to_csv(test_csv, index=False)
        one = train_ours(objective, train_csv, 1, "np1")
        two = train_ours(objective, train_csv, 2, "np2")
        if not (os.path.exists(one) and os.path.exists(two)):
            continue
        m1, m2 = json.load(open(one)), json.load(open(two))
        check(m1["trees"] == m2["trees"] and m1["base_margin"] == m2["base_margin"],
                     f"{objective}: 2 ranks grow the same trees as 1")
        ours, log = predict_ours(one, test_csv)
        x_test = df.iloc[2400:].drop(columns="y").to_numpy()
        y_test = df.iloc[2400:]["y"].to_numpy()
        booster = lightgbm_model(objective, df.iloc[:2400])
        err = relative(ours, booster.predict(x_test))
        same = same_trees(m1, booster, df.iloc[:2400].drop(columns="y").to_numpy())
        print(f"{objective}: mean label {df['y'].mean():.4f}, zeros {np.mean(df['y'] == 0):.2f}; LightGBM trained "
              f"alike grows the same first {same} of {TREES} trees; test predictions within {err:.2e} relative "
              "(rows in gaps between a node's training values go the other way)")
        check(same == TREES,
              f"{objective}: LightGBM at matched settings grows our trees (the first {same})")
        # Our model in the other tools.
        lgb_path, xgb_path = one + ".lgb.txt", one + ".xgb.json"
        for to, out in (("lightgbm", lgb_path), ("xgboost", xgb_path)):
            r = run([apps("convert"), "--to", to, one, out])
            check(r.returncode == 0, f"{objective}: convert --to {to}", r.stdout + r.stderr)
        err_l = relative(lgb.Booster(model_file=lgb_path).predict(x_test), ours)
        check(err_l < 1e-12, f"{objective}: converted for LightGBM, its predictions are ours ({err_l:.1e})")
        bx = xgb.Booster(model_file=xgb_path)
        dm = xgb.DMatrix(x_test, label=y_test, feature_names=[f"x{j}" for j in range(x_test.shape[1])])
        err_x = relative(bx.predict(dm).astype(np.float64), ours)
        check(err_x < 1e-5, f"{objective}: converted for XGBoost, its predictions are ours ({err_x:.1e})")
        xgb_metric = float(bx.eval(dm).split(":")[1])
        said = re.search(r"predict: \d+ rows, (\w+) (\S+)", log)  # "predict: 600 rows, poisson_nloglik 1.2"
        ours_metric = float(said.group(2)) if said else float("nan")
        print(f"{objective}: {XGB_METRIC[objective]} XGBoost {xgb_metric:.6f}, ours {ours_metric:.6f}")
        check(abs(xgb_metric - ours_metric) <= 1e-5 * max(1.0, abs(xgb_metric)),
                     f"{objective}: our metric is XGBoost's {XGB_METRIC[objective]}")
    # A regression ensemble with a poisson member (stacked with a squared-error one, K-fold inside the
    # run), on 2 ranks; and a poisson member refuses a negative label of the ensemble's data.
    counts = path("poisson_train.csv")
    for name, objective in (("member_poisson", "poisson"), ("member_squared", "regression")):
        with open(path(name + ".in"), "w") as f:
            f.write(f"model gbdt\nobjective {objective}\ndata_file {counts}\nnum_trees 20\ngrowth leafwise\nmax_leaves 15\n"
                    f"max_depth 0\noutput {path(name + '.json')}\n")
    ensemble = path("counts_ensemble.json")
    with open(path("counts_ensemble.in"), "w") as f:
        f.write(f"model ensemble\nobjective regression\ndata_file {counts}\ntext_header true\nlabel_column y\n"
                f"validation_fraction 0.2\nmembers {path('member_poisson.in')},{path('member_squared.in')}\n"
                f"combine average\nfolds 2\noutput {ensemble}\n")
    r = run([apps("train"), path("counts_ensemble.in")], 2)
    check(r.returncode == 0 and os.path.exists(ensemble), "a regression ensemble takes a poisson member (2 ranks)",
          r.stdout[-2000:] + r.stderr[-2000:])
    bad = frames["poisson"].iloc[:300].copy()
    bad.loc[5, "y"] = -2.0
    bad.to_csv(path("counts_bad.csv"), index=False)
    r = run([apps("train"), path("counts_ensemble.in"), "--set", f"data_file={path('counts_bad.csv')}",
             "--set", f"output={path('bad_ensemble.json')}"], 2)
    check(r.returncode == 2 and "counts_bad.csv:7" in r.stdout + r.stderr and not os.path.exists(
        path("bad_ensemble.json")), "the poisson member refuses a negative label of the ensemble's data: exit 2, "
          "counts_bad.csv:7", r.stdout[-1000:] + r.stderr[-1000:])
    # Bad labels: exit code 2 with file and line (header is line 1, the third row line 4).
    for objective, bad in (("poisson", -1.0), ("gamma", 0.0)):
        df = frames[objective].iloc[:50].copy()
        df.loc[2, "y"] = bad
        csv = path(f"{objective}_bad.csv")
        df.to_csv(csv, index=False)
        deck = path(f"{objective}_bad.in")
        with open(deck, "w") as f:
            f.write(f"model gbdt\nobjective {objective}\ndata_file {csv}\ntext_header true\nlabel_column y\n"
                    f"num_trees 2\noutput {path(objective + '_bad.json')}\n")
        r = run([apps("train"), deck], 2)
        check(r.returncode == 2 and f"{csv}:4" in r.stderr + r.stdout,
                     f"{objective}: label {bad} is exit 2 naming {os.path.basename(csv)}:4",
                     r.stdout[-1000:] + r.stderr[-1000:])
        check(not os.path.exists(path(objective + "_bad.json")), f"{objective}: no model file after the error")
    checks.finish()


if __name__ == "__main__":
    main()
