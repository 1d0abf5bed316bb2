#!/usr/bin/env python3
"""Learning to rank on LightGBM's lambdarank example (examples/lambdarank of a LightGBM checkout: rank.train,
rank.train.query, rank.test, rank.test.query; MIT licence, not copied here): test NDCG@1/3/5/10 of
build/apps/train (objective lambdarank), LightGBM's lambdarank and XGBoost's rank:ndcg at the same
settings (LightGBM's example train.conf without bagging: 100 trees, 31 leaves, eta 0.1, min 50 rows
and hessian 5 per leaf, 255 bins), each tool's NDCG computed by LightGBM's metric on its scores, and
the training times (one thread each; ours: the train process's "gbdt: N trees in S s"). A second,
weighted run gives every training row a weight drawn uniformly from [0.5, 2] (seed 0, written to
SCRATCH/rank.train.weight; ours: weight_file, LightGBM: the row weights, XGBoost: each query the mean of
its rows' weights, as rank:ndcg takes one weight per query); test NDCG is unweighted.

usage: compare_ranking.py BUILD_DIR LAMBDARANK_DIR SCRATCH   (run with .deps/refenv/bin/python)"""
import os
import re
import shutil
import subprocess
import sys
import time

import lightgbm as lgb
import numpy as np
import xgboost as xgb
from sklearn.datasets import load_svmlight_file

build, src, scratch = sys.argv[1:4]
os.makedirs(scratch, exist_ok=True)
TREES, LEAVES, ETA, MIN_ROWS, MIN_HESS = 100, 31, 0.1, 50, 5.0
KS = (1, 3, 5, 10)


def load(name):
    x, y = load_svmlight_file(os.path.join(src, name), zero_based=True)
    sizes = np.loadtxt(os.path.join(src, name + ".query"), dtype=np.int64)
    return x.toarray(), y, sizes


def ndcg(x, y, sizes, scores):
    ds = lgb.Dataset(x, y, group=sizes, init_score=scores, free_raw_data=False)
    b = lgb.Booster({"objective": "lambdarank", "metric": "ndcg", "eval_at": list(KS), "verbose": -1}, ds)
    return {name: value for _, name, value, _ in b.eval_train()}


def main():
    xtr, ytr, qtr = load("rank.train")
    xte, yte, qte = load("rank.test")
    width = max(xtr.shape[1], xte.shape[1])
    xtr = np.pad(xtr, ((0, 0), (0, width - xtr.shape[1])))
    xte = np.pad(xte, ((0, 0), (0, width - xte.shape[1])))
    for f in ("rank.train", "rank.train.query", "rank.test", "rank.test.query"):
        shutil.copy(os.path.join(src, f), os.path.join(scratch, f))
    weight_file = os.path.join(scratch, "rank.train.weight")
    np.savetxt(weight_file, np.random.default_rng(0).uniform(0.5, 2.0, size=len(ytr)), fmt="%.3f")
    qid_tr, qid_te = np.repeat(np.arange(len(qtr)), qtr), np.repeat(np.arange(len(qte)), qte)
    print(f"rank.train {len(ytr)} rows / {len(qtr)} queries, rank.test {len(yte)} rows / {len(qte)} queries, "
          f"{width} features; lightgbm {lgb.__version__}, xgboost {xgb.__version__}")
    for weighted in (False, True):
        w = np.loadtxt(weight_file) if weighted else None
        model = os.path.join(scratch, "rank.json")
        deck = os.path.join(scratch, "rank.in")
        with open(deck, "w") as f:
            f.write("\n".join([
                "model gbdt", "objective lambdarank", f"data_file {scratch}/rank.train", "data_format libsvm",
                "libsvm_base 0", f"libsvm_num_features {width}", f"test_file {scratch}/rank.test",
                f"num_trees {TREES}", "growth leafwise", f"max_leaves {LEAVES}", "max_depth 0", f"eta {ETA}",
                "lambda_l2 0", f"min_child_weight {MIN_HESS}", f"min_data_in_leaf {MIN_ROWS}", "max_bin 255",
                "eval_metric " + ",".join(f"ndcg@{k}" for k in KS), f"output {model}"] +
                ([f"weight_file {weight_file}"] if weighted else [])) + "\n")
        env = dict(os.environ, OMP_NUM_THREADS="1")
        r = subprocess.run([os.path.join(build, "apps", "train"), deck], capture_output=True, text=True, env=env)
        if r.returncode:
            sys.exit(r.stdout + r.stderr)
        ours_s = float(re.search(r"gbdt: \d+ trees in ([0-9.]+) s", r.stdout + r.stderr).group(1))
        pred = os.path.join(scratch, "rank.pred")
        subprocess.run([os.path.join(build, "apps", "predict"), model, f"{scratch}/rank.test", pred, "--format",
                        "libsvm", "--libsvm-base", "0"], check=True, capture_output=True, env=env)
        ours = ndcg(xte, yte, qte, np.loadtxt(pred))

        params = {"objective": "lambdarank", "num_leaves": LEAVES, "learning_rate": ETA, "lambda_l2": 0.0,
                  "min_sum_hessian_in_leaf": MIN_HESS, "min_data_in_leaf": MIN_ROWS, "max_bin": 255,
                  "num_threads": 1, "verbose": -1, "deterministic": True}
        dtr = lgb.Dataset(xtr, ytr, group=qtr, weight=w)
        t = time.perf_counter()
        lb = lgb.train(params, dtr, TREES)
        lgb_s = time.perf_counter() - t
        theirs = ndcg(xte, yte, qte, lb.predict(xte))

        xp = {"objective": "rank:ndcg", "tree_method": "hist", "grow_policy": "lossguide", "max_leaves": LEAVES,
              "max_depth": 0, "eta": ETA, "lambda": 0.0, "min_child_weight": MIN_HESS, "max_bin": 255, "nthread": 1,
              "lambdarank_pair_method": "topk", "lambdarank_num_pair_per_sample": 30, "base_score": 0.0}
        group_w = None if w is None else np.add.reduceat(w, np.r_[0, np.cumsum(qtr)[:-1]]) / qtr
        dx = xgb.DMatrix(xtr, ytr, qid=qid_tr, weight=group_w)
        t = time.perf_counter()
        xb = xgb.train(xp, dx, TREES)
        xgb_s = time.perf_counter() - t
        xgbm = ndcg(xte, yte, qte, xb.predict(xgb.DMatrix(xte, qid=qid_te)))

        print("\nweighted rows (weight_file)" if weighted else "\nunweighted")
        print("| tool | " + " | ".join(f"NDCG@{k}" for k in KS) + " | train s |")
        print("|---|" + "---|" * (len(KS) + 1))
        for name, m, s in (("hpctrain lambdarank", ours, ours_s), ("LightGBM lambdarank", theirs, lgb_s),
                           ("XGBoost rank:ndcg", xgbm, xgb_s)):
            print(f"| {name} | " + " | ".join(f"{m[f'ndcg@{k}']:.4f}" for k in KS) + f" | {s:.2f} |")


main()
