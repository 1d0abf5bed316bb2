#!/usr/bin/env python3
"""Learning to rank on LightGBM's lambdarank example (examples/lambdarank of a LightGBM checkout: rank.train,
rank.train.query, rank.test, rank.test.query; MIT licence, not copied here): test NDCG@1/3/5/10 of
build/apps/train (objective lambdarank), LightGBM's lambdarank and XGBoost's rank:ndcg at the same
settings (LightGBM's example train.conf without bagging: 100 trees, 31 leaves, eta 0.1, min 50 rows
and hessian 5 per leaf, 255 bins), each tool's NDCG computed by LightGBM's metric on its scores, and
the training times (one thread each; ours: the train process's "gbdt: N trees in S s").

Every tool reads the same matrix: the LibSVM files with absent entries 0, as LightGBM reads its own
example (ours: libsvm_absent zero, its model file keeps it for predict). Our default reading takes
absent entries as missing, XGBoost's (docs/gbdt.md): that run is shown apart, as "hpctrain, absent
missing". Unweighted: one run for the NDCGs (deterministic), --repeats for the times.
Weighted: --seeds draws of row weights uniform in [0.5, 2] (seed s: numpy default_rng(s)); ours gets
weight_file, LightGBM the row weights, XGBoost each query's mean weight (rank:ndcg takes one weight
per query); test NDCG is unweighted. A single draw on 50 test queries is no figure (one query's top row
moves NDCG@1 by up to 0.02): the weighted rows give the mean and min-max over the draws, and the last
table ours minus LightGBM, draw by draw.

--min-rows (min_data_in_leaf, default 50 as train.conf) 1 takes away the one deliberate difference in
how the tools grow a tree from the same gradients: LightGBM checks min_data_in_leaf against a row
count estimated from the hessians (docs/ranking.md); what is left between ours and LightGBM is its
float32 sigmoid table, growing apart over the rounds. --trees-from-our-scores: for the first weight
draw, how many of our trees LightGBM grows from our scores before each (its init_score; its bins made
ours: min_data_in_bin 1), as the test gbdt_rank_weights checks on synthetic queries.

usage: compare_ranking.py BUILD_DIR LAMBDARANK_DIR SCRATCH [--seeds 10] [--repeats 3] [--min-rows 50]
       [--trees-from-our-scores]   (run with .deps/refenv/bin/python)"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

import lightgbm as lgb
import numpy as np
import xgboost as xgb
from sklearn.datasets import load_svmlight_file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "python"))
from lightgbm_trees import trees_from_our_scores  # noqa: E402

ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
ap.add_argument("build")
ap.add_argument("src")
ap.add_argument("scratch")
ap.add_argument("--seeds", type=int, default=10)
ap.add_argument("--repeats", type=int, default=3)
ap.add_argument("--min-rows", type=int, default=50)
ap.add_argument("--trees-from-our-scores", action="store_true")
args = ap.parse_args()
build, src, scratch = args.build, args.src, args.scratch
SEEDS, REPEATS, MIN_ROWS = args.seeds, args.repeats, args.min_rows
os.makedirs(scratch, exist_ok=True)
TREES, LEAVES, ETA, MIN_HESS = 100, 31, 0.1, 5.0
KS = (1, 3, 5, 10)
TOOLS = ("hpctrain lambdarank", "hpctrain, absent missing", "LightGBM lambdarank", "XGBoost rank:ndcg")
ENV = dict(os.environ, OMP_NUM_THREADS="1")


def load(name):
    x, y = load_svmlight_file(os.path.join(src, name), zero_based=True)
    sizes = np.loadtxt(os.path.join(src, name + ".query"), dtype=np.int64)
    return x.toarray(), y, sizes


def ndcg(x, y, sizes, scores):
    ds = lgb.Dataset(x, y, group=sizes, init_score=scores, free_raw_data=False)
    b = lgb.Booster({"objective": "lambdarank", "metric": "ndcg", "eval_at": list(KS), "verbose": -1}, ds)
    return {int(name.split("@")[1]): value for _, name, value, _ in b.eval_train()}


def ours(absent, width, weight_file, test_set):
    """build/apps/train then predict on the example's LibSVM files, absent entries `absent` (zero or
    missing; predict reads as the model file says): test NDCG and train seconds."""
    model, deck, pred = (os.path.join(scratch, f) for f in ("rank.json", "rank.in", "rank.pred"))
    train, test = os.path.join(src, "rank.train"), os.path.join(src, "rank.test")
    fmt = ["data_format libsvm", "libsvm_base 0", f"libsvm_num_features {width}", f"libsvm_absent {absent}"]
    with open(deck, "w") as f:
        f.write("\n".join([
            "model gbdt", "objective lambdarank", f"data_file {train}", *fmt, f"num_trees {TREES}",
            "growth leafwise", f"max_leaves {LEAVES}", "max_depth 0", f"eta {ETA}", "lambda_l2 0",
            f"min_child_weight {MIN_HESS}", f"min_data_in_leaf {MIN_ROWS}", "max_bin 255", f"output {model}"] +
            ([f"weight_file {weight_file}"] if weight_file else [])) + "\n")
    r = subprocess.run([os.path.join(build, "apps", "train"), deck], capture_output=True, text=True, env=ENV)
    if r.returncode:
        sys.exit(r.stdout + r.stderr)
    seconds = float(re.search(r"gbdt: \d+ trees in ([0-9.]+) s", r.stdout + r.stderr).group(1))
    opts = ["--format", "libsvm", "--libsvm-base", "0"]
    subprocess.run([os.path.join(build, "apps", "predict"), model, test, pred, *opts], check=True,
                   capture_output=True, env=ENV)
    return ndcg(*test_set, np.loadtxt(pred)), seconds


def run_all(data, w, weight_file):
    """{tool: (test NDCG by k, train seconds)} for one weighting (w: row weights or None)."""
    xtr, ytr, qtr, xte, yte, qte, width = data
    test_set = (xte, yte, qte)
    out = {TOOLS[1]: ours("missing", width, weight_file, test_set),
           TOOLS[0]: ours("zero", width, weight_file, test_set)}  # last: its model stays for tree_check
    params = {"objective": "lambdarank", "num_leaves": LEAVES, "learning_rate": ETA, "lambda_l2": 0.0,
              "min_sum_hessian_in_leaf": MIN_HESS, "min_data_in_leaf": MIN_ROWS, "max_bin": 255,
              "num_threads": 1, "verbose": -1, "deterministic": True}
    dtr = lgb.Dataset(xtr, ytr, group=qtr, weight=w)
    t = time.perf_counter()
    lb = lgb.train(params, dtr, TREES)
    out[TOOLS[2]] = ndcg(*test_set, lb.predict(xte)), time.perf_counter() - t
    xp = {"objective": "rank:ndcg", "tree_method": "hist", "grow_policy": "lossguide", "max_leaves": LEAVES,
          "max_depth": 0, "eta": ETA, "lambda": 0.0, "min_child_weight": MIN_HESS, "max_bin": 255, "nthread": 1,
          "lambdarank_pair_method": "topk", "lambdarank_num_pair_per_sample": 30, "base_score": 0.0}
    group_w = None if w is None else np.add.reduceat(w, np.r_[0, np.cumsum(qtr)[:-1]]) / qtr
    dx = xgb.DMatrix(xtr, ytr, qid=np.repeat(np.arange(len(qtr)), qtr), weight=group_w)
    t = time.perf_counter()
    xb = xgb.train(xp, dx, TREES)
    xgb_s = time.perf_counter() - t
    out[TOOLS[3]] = ndcg(*test_set, xb.predict(xgb.DMatrix(xte, qid=np.repeat(np.arange(len(qte)), qte)))), xgb_s
    return out


def tree_check(data, w):
    """How many of our trees (our last run: absent 0, weights w) LightGBM grows from our scores before each."""
    xtr, ytr, qtr = data[:3]
    params = {"objective": "lambdarank", "num_leaves": LEAVES, "learning_rate": ETA, "lambda_l2": 0.0,
              "min_sum_hessian_in_leaf": MIN_HESS, "min_data_in_leaf": MIN_ROWS, "max_bin": 255,
              "min_data_in_bin": 1, "feature_pre_filter": False, "num_threads": 1, "verbose": -1,
              "deterministic": True}
    ends = np.cumsum(qtr)
    varied = np.repeat([ytr[e - n:e].min() < ytr[e - n:e].max() for n, e in zip(qtr, ends)], qtr)
    grow = lambda s: lgb.train(params, lgb.Dataset(xtr, ytr, group=qtr, weight=w, init_score=s), 1)  # noqa: E731
    agree = trees_from_our_scores(json.load(open(os.path.join(scratch, "rank.json"))), grow, xtr, varied)
    first = next((k for k in range(TREES) if k not in agree), None)
    print(f"\nfrom our scores before it, LightGBM grows {len(agree)} of our {TREES} trees (weights: draw 0, "
          f"min_data_in_leaf {MIN_ROWS}); the first other: {first}")


def seconds(ts):
    return f"{np.median(ts):.2f} ({min(ts):.2f}-{max(ts):.2f})"


def main():
    xtr, ytr, qtr = load("rank.train")
    xte, yte, qte = load("rank.test")
    width = max(xtr.shape[1], xte.shape[1])
    xtr = np.pad(xtr, ((0, 0), (0, width - xtr.shape[1])))
    xte = np.pad(xte, ((0, 0), (0, width - xte.shape[1])))
    data = (xtr, ytr, qtr, xte, yte, qte, width)
    print(f"rank.train {len(ytr)} rows / {len(qtr)} queries, rank.test {len(yte)} rows / {len(qte)} queries, "
          f"{width} features; lightgbm {lgb.__version__}, xgboost {xgb.__version__}; {SEEDS} weight draws, "
          f"min_data_in_leaf {MIN_ROWS}")

    plain = [run_all(data, None, None) for _ in range(REPEATS)]
    print(f"\nunweighted (NDCG deterministic; train s: median of {REPEATS}, range)")
    print("| tool | " + " | ".join(f"NDCG@{k}" for k in KS) + " | train s |")
    print("|---|" + "---|" * (len(KS) + 1))
    for tool in TOOLS:
        m = plain[0][tool][0]
        print(f"| {tool} | " + " | ".join(f"{m[k]:.4f}" for k in KS) + f" | {seconds([p[tool][1] for p in plain])} |")

    draws = []
    weight_file = os.path.join(scratch, "rank.train.weight")
    for seed in range(SEEDS):
        np.savetxt(weight_file, np.random.default_rng(seed).uniform(0.5, 2.0, size=len(ytr)), fmt="%.3f")
        draws.append(run_all(data, np.loadtxt(weight_file), weight_file))
        if seed == 0 and args.trees_from_our_scores:
            tree_check(data, np.loadtxt(weight_file))
    print(f"\nweighted rows, {SEEDS} draws: mean (min-max) over the draws; train s: median (range)")
    print("| tool | " + " | ".join(f"NDCG@{k}" for k in KS) + " | train s |")
    print("|---|" + "---|" * (len(KS) + 1))
    for tool in TOOLS:
        v = np.array([[d[tool][0][k] for k in KS] for d in draws])
        print(f"| {tool} | " + " | ".join(f"{c.mean():.4f} ({c.min():.3f}-{c.max():.3f})" for c in v.T) +
              f" | {seconds([d[tool][1] for d in draws])} |")
    print("\nhpctrain minus LightGBM, same data: unweighted; weighted mean (min-max) over the draws, and the "
          "draws where ours is higher")
    print("| | " + " | ".join(f"NDCG@{k}" for k in KS) + " |")
    print("|---|" + "---|" * len(KS))
    print("| unweighted | " + " | ".join(f"{plain[0][TOOLS[0]][0][k] - plain[0][TOOLS[2]][0][k]:+.4f}" for k in KS)
          + " |")
    gap = np.array([[d[TOOLS[0]][0][k] - d[TOOLS[2]][0][k] for k in KS] for d in draws])
    print("| weighted | " + " | ".join(f"{c.mean():+.4f} ({c.min():+.3f} to {c.max():+.3f}), {int((c > 0).sum())} "
                                      f"of {SEEDS} higher" for c in gap.T) + " |")


main()
