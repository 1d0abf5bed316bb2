#!/usr/bin/python3
"""Compare hpctrain's GBDT with XGBoost (hist) and LightGBM on the same data, threads, trees, depth
and bins: wall time, test AUC / logloss, and ratios to ours.

Data sets: LightGBM's binary example (binary.train -> binary.test) and a generated HIGGS-like set
(--rows rows x 28 features, default 1M; 21 "low-level" Gaussian features and 7 nonlinear "high-level"
ones, label drawn from a logistic model of both), written to HDF5 for us and kept in memory for the
references; the last 10% of rows are the test set.

usage: perf/compare_gbdt.py [--threads 2] [--trees 100] [--depth 6 | --leaves 63] [--bins 255] [--rows 1000000]
                            [--sets binary,higgs] [--ours build/apps/train]
Our trainer is run as `OMP_NUM_THREADS=T <ours> DECK` (the `train` program).
Needs numpy, h5py, xgboost(-cpu), lightgbm: `scripts/setup --reference`.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np


def auc(y, s):
    order = np.argsort(s, kind="mergesort")
    s, y = s[order], y[order]
    # average ranks of ties (Mann-Whitney U)
    _, inv, counts = np.unique(s, return_inverse=True, return_counts=True)
    csum = np.cumsum(counts)
    avg_rank = (csum - (counts - 1) / 2.0)[inv]
    pos = y > 0.5
    n_pos, n_neg = pos.sum(), (~pos).sum()
    return (avg_rank[pos].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg)


def logloss(y, p):
    p = np.clip(p, 1e-15, 1 - 1e-15)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def higgs_like(rows, seed=7):
    rng = np.random.default_rng(seed)
    low = rng.standard_normal((rows, 21)).astype(np.float32)
    m = lambda a, b: np.sqrt(np.abs(low[:, a] * low[:, b]) + low[:, a] ** 2)
    high = np.stack([m(0, 1), m(2, 3), m(4, 5), m(6, 7) + m(8, 9), np.abs(low[:, 10] - low[:, 11]),
                     np.tanh(low[:, 12] * low[:, 13]), m(14, 15) * m(16, 17)], axis=1).astype(np.float32)
    x = np.concatenate([low, high], axis=1)
    z = (0.8 * high[:, 0] - 0.6 * high[:, 3] + 0.5 * high[:, 5] + 0.3 * low[:, 18] * low[:, 19]
         - 0.4 * np.abs(low[:, 20]) + 0.25 * high[:, 6] - 0.2)
    y = (rng.random(rows) < 1 / (1 + np.exp(-z))).astype(np.float32)
    return x, y


def run_ours(args, train_path, test_path, fmt, workdir, extra=""):
    deck = os.path.join(workdir, "deck.in")
    metrics = os.path.join(workdir, "metrics.jsonl")
    with open(deck, "w") as f:
        shape = (f"growth leafwise\nmax_leaves {args.leaves}\nmax_depth 0\n" if args.leaves
                 else f"growth depthwise\nmax_depth {args.depth}\n")
        f.write(f"model gbdt\ndata_file {train_path}\ntest_file {test_path}\ndata_format {fmt}\n"
                f"objective binary\nnum_trees {args.trees}\neta 0.1\n{shape}"
                f"max_bin {args.bins}\nlambda_l2 1\nmin_child_weight 1\n"
                f"eval_metric auc,logloss\nmetrics_file {metrics}\nlog_every 100000\n{extra}")
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), OMP_PROC_BIND="false")
    t0 = time.time()
    subprocess.run([args.ours, deck], check=True, env=env, stdout=subprocess.DEVNULL)
    wall = time.time() - t0
    final = [json.loads(l) for l in open(metrics)][-1]
    return dict(wall=wall, train=final["seconds"], auc=final["test-auc"], logloss=final["test-logloss"])


def run_xgb(args, xtr, ytr, xte, yte):
    import xgboost as xgb
    dtr, dte = xgb.DMatrix(xtr, ytr), xgb.DMatrix(xte, yte)
    t0 = time.time()
    shape = (dict(grow_policy="lossguide", max_leaves=args.leaves, max_depth=0) if args.leaves
             else dict(max_depth=args.depth))
    b = xgb.train(dict(objective="binary:logistic", tree_method="hist", eta=0.1, max_bin=args.bins,
                       nthread=args.threads, reg_lambda=1, min_child_weight=1, **shape),
                  dtr, args.trees)
    t = time.time() - t0
    p = b.predict(dte)
    return dict(wall=t, train=t, auc=auc(yte, p), logloss=logloss(yte, p))


def run_lgb(args, xtr, ytr, xte, yte):
    import lightgbm as lgb
    t0 = time.time()
    ds = lgb.Dataset(xtr, ytr, params=dict(max_bin=args.bins, verbose=-1))
    shape = (dict(num_leaves=args.leaves, max_depth=-1) if args.leaves
             else dict(num_leaves=2 ** args.depth, max_depth=args.depth))
    b = lgb.train(dict(objective="binary", learning_rate=0.1, **shape,
                       max_bin=args.bins, num_threads=args.threads, lambda_l2=1, min_sum_hessian_in_leaf=1,
                       min_data_in_leaf=0, verbose=-1), ds, args.trees)
    t = time.time() - t0
    p = b.predict(xte)
    return dict(wall=t, train=t, auc=auc(yte, p), logloss=logloss(yte, p))


def report(name, results):
    print(f"\n== {name}")
    print(f"{'tool':10s} {'wall s':>9s} {'train s':>9s} {'AUC':>8s} {'logloss':>8s} {'time/ours':>10s}")
    ours = results.get("hpctrain")
    for tool, r in results.items():
        ratio = r["train"] / ours["train"] if ours else float("nan")
        print(f"{tool:10s} {r['wall']:9.2f} {r['train']:9.2f} {r['auc']:8.4f} {r['logloss']:8.4f} {ratio:10.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--leaves", type=int, default=0, help="leaf-wise growth to this many leaves (0: depth-wise)")
    ap.add_argument("--bins", type=int, default=255)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--sets", default="binary,higgs")
    ap.add_argument("--ours", default="build/apps/train")
    ap.add_argument("--data", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data"))
    args = ap.parse_args()
    shape = f"leaf-wise {args.leaves} leaves" if args.leaves else f"depth {args.depth}"
    print(f"threads {args.threads}, trees {args.trees}, {shape}, bins {args.bins}")
    with tempfile.TemporaryDirectory() as work:
        if "binary" in args.sets:
            d = os.path.join(args.data, "lightgbm")
            tr, te = np.loadtxt(os.path.join(d, "binary.train")), np.loadtxt(os.path.join(d, "binary.test"))
            res = {"hpctrain": run_ours(args, os.path.join(d, "binary.train"), os.path.join(d, "binary.test"), "tsv", work),
                   "xgboost": run_xgb(args, tr[:, 1:], tr[:, 0], te[:, 1:], te[:, 0]),
                   "lightgbm": run_lgb(args, tr[:, 1:], tr[:, 0], te[:, 1:], te[:, 0])}
            report("binary.train -> binary.test (7000 x 28)", res)
        if "higgs" in args.sets:
            import h5py
            x, y = higgs_like(args.rows)
            cut = int(args.rows * 0.9)
            paths = []
            for part, sl in (("train", slice(0, cut)), ("test", slice(cut, None))):
                p = os.path.join(work, f"higgs_{part}.h5")
                with h5py.File(p, "w") as f:
                    f["inputs"], f["targets"] = x[sl], y[sl]
                paths.append(p)
            res = {"hpctrain": run_ours(args, paths[0], paths[1], "hdf5", work),
                   "xgboost": run_xgb(args, x[:cut], y[:cut], x[cut:], y[cut:]),
                   "lightgbm": run_lgb(args, x[:cut], y[:cut], x[cut:], y[cut:])}
            report(f"HIGGS-like {args.rows} x 28 (90/10 split)", res)


if __name__ == "__main__":
    sys.exit(main())
