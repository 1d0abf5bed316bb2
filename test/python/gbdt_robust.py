#!/usr/bin/env python3
"""The robust GBDT objectives (absolute_error, quantile, pseudo_huber; Note [robust objectives]) end to
end against LightGBM and XGBoost. A CSV with heavy-tailed labels (Student t noise, 3 degrees of
freedom) written by pandas is trained with build/apps/train on 1 and 2 ranks (the same model, byte for
byte, also with bagging and row weights: the renewed leaves are exact global quantiles, Note [leaf
renewal]), and with LightGBM at matched settings (l1; quantile at alpha 0.1 and 0.9): the features
take few distinct values, so both tools bin every value alone and grow the same trees, each leaf
renewed to the quantile of its rows' residuals by the same rule (Note [quantile rule]): every tree
gives every training row the same value (within 1e-5; the first tree also holds the base margin).
Leaves hold at least 20 rows: with sign-like gradients two splits of a small node often have the
same gain, a tie LightGBM's float32 gradients break by rounding (we take the lower feature).
Our model converted with apps/convert gives our predictions in LightGBM (exactly) and XGBoost (float32
leaves: 1e-5), and XGBoost's own metric of the converted model (mae, quantile, mphe) equals the one
apps/predict prints. pseudo_huber converts to XGBoost only (LightGBM's huber is another loss: convert
--to lightgbm is exit 2 saying so). A regression ensemble takes an absolute_error member. Bad keys
(quantile_alpha outside (0, 1), huber_slope <= 0) are exit 2 naming the key, with no model file.

usage: gbdt_robust.py BUILD_DIR MPIEXEC SCRATCH. Exits 77 (skipped) without pandas, lightgbm or xgboost."""
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

TREES, LEAVES, ETA, N_TRAIN = 30, 15, 0.1, 2400
MIN_ROWS = 20  # rows a leaf: small nodes tie in gain (sign-like gradients), broken by rounding in LightGBM
# (our objective, its keys, LightGBM's parameters or None, XGBoost's metric name)
CASES = [("absolute_error", [], {"objective": "l1"}, "mae"),
         ("quantile", ["quantile_alpha 0.1"], {"objective": "quantile", "alpha": 0.1}, "quantile"),
         ("quantile", ["quantile_alpha 0.9"], {"objective": "quantile", "alpha": 0.9}, "quantile"),
         ("pseudo_huber", ["huber_slope 2"], None, "mphe")]


def check(cond, what, detail=""):
    if not cond and detail:
        print(detail)
    checks(cond, what)


def table(seed):
    """Integer features in 0..15; the label a step function of three of them plus t(3) noise."""
    rng = np.random.default_rng(seed)
    n = 3000
    x = rng.integers(0, 16, size=(n, 5)).astype(np.float64)
    y = 0.3 * x[:, 0] - 0.2 * x[:, 1] + 2.0 * (x[:, 2] > 7) + rng.standard_t(3, size=n)
    # Labels unrounded: a residual within rounding of 0 (LightGBM's base margin is a float32, ours a
    # double) would take the other gradient sign; with 3-decimal labels the base margin is often a label.
    return pd.DataFrame(dict({f"x{j}": x[:, j] for j in range(5)}, y=y))


def train_ours(tag, objective, keys, csv, ranks, extra=()):
    model = path(f"{tag}_np{ranks}.json")
    with open(path(f"{tag}_np{ranks}.in"), "w") as f:
        f.write("\n".join([
            "model gbdt", f"objective {objective}", *keys, f"data_file {csv}", "text_header true",
            "label_column y", f"num_trees {TREES}", "growth leafwise", f"max_leaves {LEAVES}", "max_depth 0",
            f"eta {ETA}", "lambda_l2 0", "min_child_weight 1", f"min_data_in_leaf {MIN_ROWS}", *extra,
            f"output {model}"]) + "\n")
    r = run([apps("train"), path(f"{tag}_np{ranks}.in")], ranks)
    check(r.returncode == 0, f"{tag}: train on {ranks} rank(s)", r.stdout[-2000:] + r.stderr[-2000:])
    return model


def lightgbm_model(params, df):
    params = dict(params, num_leaves=LEAVES, learning_rate=ETA, lambda_l2=0.0, min_sum_hessian_in_leaf=1.0,
                  min_data_in_leaf=MIN_ROWS, min_data_in_bin=1, max_bin=255, boost_from_average=True, deterministic=True,
                  num_threads=1, verbose=-1, feature_pre_filter=False)
    return lgb.train(params, lgb.Dataset(df.drop(columns="y").to_numpy(), df["y"].to_numpy()), TREES)



def predict_ours(model, csv):
    out = model + ".pred"
    r = run([apps("predict"), model, csv, out, "--header", "--label-column", "y"])
    check(r.returncode == 0, f"predict {os.path.basename(model)}", r.stdout + r.stderr)
    return np.loadtxt(out, dtype=np.float64), r.stdout + r.stderr


def main():
    df = table(11)
    train_csv, test_csv = path("train.csv"), path("test.csv")
    df.iloc[:N_TRAIN].to_csv(train_csv, index=False)
    df.iloc[N_TRAIN:].to_csv(test_csv, index=False)
    x_train = df.iloc[:N_TRAIN].drop(columns="y").to_numpy()
    x_test, y_test = df.iloc[N_TRAIN:].drop(columns="y").to_numpy(), df.iloc[N_TRAIN:]["y"].to_numpy()
    for objective, keys, lgb_params, xgb_metric_name in CASES:
        tag = objective + "".join("_" + k.split()[1] for k in keys)
        one = train_ours(tag, objective, keys, train_csv, 1)
        two = train_ours(tag, objective, keys, train_csv, 2)
        if not (os.path.exists(one) and os.path.exists(two)):
            continue
        m1 = json.load(open(one))
        check(open(one).read() == open(two).read(), f"{tag}: 2 ranks write the model of 1, byte for byte")
        ours, log = predict_ours(one, test_csv)
        if lgb_params is not None:
            booster = lightgbm_model(lgb_params, df.iloc[:N_TRAIN])
            same = same_trees(m1, booster, x_train, atol=1e-6)
            print(f"{tag}: base margin ours {m1['base_margin'][0]:.6f}, LightGBM trained alike grows the same first "
                  f"{same} of {TREES} trees")
            check(same == TREES, f"{tag}: LightGBM ({lgb_params['objective']}) at matched settings grows our trees "
                  f"(the first {same})")
            lgb_path = one + ".lgb.txt"
            r = run([apps("convert"), "--to", "lightgbm", one, lgb_path])
            check(r.returncode == 0, f"{tag}: convert --to lightgbm", r.stdout + r.stderr)
            err_l = float(np.max(np.abs(lgb.Booster(model_file=lgb_path).predict(x_test) - ours)))
            check(err_l < 1e-9, f"{tag}: converted for LightGBM, its predictions are ours ({err_l:.1e})")
        else:
            r = run([apps("convert"), "--to", "lightgbm", one, path("huber.lgb.txt")])
            check(r.returncode == 2 and "--to xgboost" in r.stdout + r.stderr and not os.path.exists(
                path("huber.lgb.txt")), f"{tag}: convert --to lightgbm is exit 2 (LightGBM's huber is another loss)",
                r.stdout + r.stderr)
        xgb_path = one + ".xgb.json"
        r = run([apps("convert"), "--to", "xgboost", one, xgb_path])
        check(r.returncode == 0, f"{tag}: convert --to xgboost", r.stdout + r.stderr)
        bx = xgb.Booster(model_file=xgb_path)
        dm = xgb.DMatrix(x_test, label=y_test, feature_names=[f"x{j}" for j in range(x_test.shape[1])])
        err_x = float(np.max(np.abs(bx.predict(dm).astype(np.float64) - ours) / np.maximum(np.abs(ours), 1.0)))
        check(err_x < 1e-5, f"{tag}: converted for XGBoost, its predictions are ours ({err_x:.1e})")
        said = re.search(r"predict: \d+ rows, (\w+) (\S+)", log)  # "predict: 600 rows, quantile 0.41"
        ours_metric = float(said.group(2)) if said else float("nan")
        xgb_metric = float(bx.eval(dm).split(":")[1])
        print(f"{tag}: test {xgb_metric_name} XGBoost {xgb_metric:.6f}, ours {ours_metric:.6f}")
        check(said is not None and said.group(1) == xgb_metric_name and
              abs(xgb_metric - ours_metric) <= 1e-5 * max(1.0, abs(xgb_metric)),
              f"{tag}: our metric is XGBoost's {xgb_metric_name} of the converted model")
    # Bagging and row weights: the in-bag rows' weighted quantiles, the same on 2 ranks as on 1.
    with open(path("train.weight"), "w") as f:
        f.write("".join(f"{0.5 + (i % 4) * 0.5}\n" for i in range(N_TRAIN)))
    extra = ["subsample 0.7", f"weight_file {path('train.weight')}"]
    bag1 = train_ours("bagged", "quantile", ["quantile_alpha 0.8"], train_csv, 1, extra)
    bag2 = train_ours("bagged", "quantile", ["quantile_alpha 0.8"], train_csv, 2, extra)
    check(os.path.exists(bag1) and os.path.exists(bag2) and open(bag1).read() == open(bag2).read(),
          "quantile with subsample 0.7 and row weights: 2 ranks write the model of 1, byte for byte")
    # A regression ensemble with an absolute_error member (averaged with a squared-error one), 2 ranks.
    for name, objective in (("member_l1", "absolute_error"), ("member_l2", "regression")):
        with open(path(name + ".in"), "w") as f:
            f.write(f"model gbdt\nobjective {objective}\ndata_file {train_csv}\nnum_trees 20\ngrowth leafwise\n"
                    f"max_leaves 15\nmax_depth 0\noutput {path(name + '.json')}\n")
    with open(path("ensemble.in"), "w") as f:
        f.write(f"model ensemble\nobjective regression\ndata_file {train_csv}\ntext_header true\nlabel_column y\n"
                f"validation_fraction 0.2\nmembers {path('member_l1.in')},{path('member_l2.in')}\n"
                f"combine average\nfolds 2\noutput {path('ensemble.json')}\n")
    r = run([apps("train"), path("ensemble.in")], 2)
    check(r.returncode == 0 and os.path.exists(path("ensemble.json")),
          "a regression ensemble takes an absolute_error member (2 ranks)", r.stdout[-2000:] + r.stderr[-2000:])
    # Bad keys: exit 2 naming the key, no model file.
    for objective, key, value in (("quantile", "quantile_alpha", "0"), ("quantile", "quantile_alpha", "1.2"),
                                  ("pseudo_huber", "huber_slope", "0"), ("pseudo_huber", "huber_slope", "-1")):
        out = path(f"bad_{key}.json")
        with open(path("bad.in"), "w") as f:
            f.write(f"model gbdt\nobjective {objective}\n{key} {value}\ndata_file {train_csv}\ntext_header true\n"
                    f"label_column y\nnum_trees 2\noutput {out}\n")
        r = run([apps("train"), path("bad.in")], 2)
        check(r.returncode == 2 and key in r.stdout + r.stderr and not os.path.exists(out),
              f"{objective}: {key} {value} is exit 2 naming {key}, no model file", r.stdout[-1000:] + r.stderr[-1000:])
    checks.finish()


if __name__ == "__main__":
    main()
