#!/usr/bin/env python3
"""Compare hpctrain's GBDT with XGBoost (hist) and LightGBM on the same data, threads, trees, depth
and bins: wall time, test AUC / logloss, and ratios to ours.

Data sets: LightGBM's binary example (binary.train -> binary.test) and a generated HIGGS-like set
(--rows rows x 28 features, default 1M; 21 "low-level" Gaussian features and 7 nonlinear "high-level"
ones, label drawn from a logistic model of both), written to HDF5 for us and kept in memory for the
references; the last 10% of rows are the test set.

usage: perf/compare_gbdt.py [--threads 2] [--trees 100] [--depth 6 | --leaves 63] [--bins 255] [--rows 1000000]
                            [--sets binary,higgs] [--ours build/apps/train] [--repeats 1] [--baseline OTHER/train]
                            [--quantized]
Our trainer is run as `OMP_NUM_THREADS=T <ours> DECK` (the `train` program); XGBoost and LightGBM each
in a fresh Python process of their own that reads the same files, so that every tool's process peak
memory (`peak MiB`: getrusage's ru_maxrss of that process) is its own. With --repeats N the three
tools run in turn N times and the table shows min-max of the times and ratios; `cpu s` is each
process's user + system CPU time (getrusage, reading the data included); the 1/5/15-minute load
averages are printed before and after (timings on a shared machine are only comparable side by side).
Needs numpy, h5py, xgboost(-cpu), lightgbm: `scripts/setup --bench` (.deps/benchenv/bin/python).
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


def run_set(args, fmt, train_path, test_path, workdir):
    """One repeat: ours, the --baseline build when given, XGBoost and LightGBM, in turn."""
    r = {"hpctrain": run_ours(args, train_path, test_path, fmt, workdir,
                              extra="quantized_gradients true\n" if args.quantized else "")}
    if args.quantized:  # the same build with 16-byte exact bins, for the AUC and time it gives up
        r["ours-exact"] = run_ours(args, train_path, test_path, fmt, workdir)
    if args.baseline:
        r["baseline"] = run_ours(args, train_path, test_path, fmt, workdir, binary=args.baseline)
    r["xgboost"] = run_tool(args, "xgboost", fmt, train_path, test_path)
    r["lightgbm"] = run_tool(args, "lightgbm", fmt, train_path, test_path)
    if args.quantized:  # like for like: LightGBM's own quantized gradients (not its default)
        r["lgb-quant"] = run_tool(args, "lgb-quant", fmt, train_path, test_path)
    return r


def run_ours(args, train_path, test_path, fmt, workdir, extra="", binary=None):
    binary = binary or args.ours
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
    proc = subprocess.Popen([binary, deck], env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{binary} {deck} failed with exit code {proc.returncode}")
    wall = time.time() - t0
    final = [json.loads(l) for l in open(metrics)][-1]
    return dict(wall=wall, train=final["seconds"], auc=final["test-auc"], logloss=final["test-logloss"],
                peak=usage.ru_maxrss / 1024.0, summary_peak=final.get("peak_host_mib", float("nan")),
                cpu=usage.ru_utime + usage.ru_stime)


def run_tool(args, tool, fmt, train_path, test_path):
    """One reference tool in a Python process of its own (--worker): its time, metrics and peak."""
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", tool, "--worker-format", fmt,
           "--worker-files", train_path, test_path, "--threads", str(args.threads), "--trees", str(args.trees),
           "--depth", str(args.depth), "--leaves", str(args.leaves), "--bins", str(args.bins)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, env=dict(os.environ, OMP_NUM_THREADS=str(args.threads)))
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{tool} worker failed")
    r = json.loads(out.decode().strip().splitlines()[-1])
    r["peak"] = usage.ru_maxrss / 1024.0
    r["cpu"] = usage.ru_utime + usage.ru_stime
    return r


def load_set(fmt, path):
    if fmt == "tsv":
        a = np.loadtxt(path)
        return a[:, 1:], a[:, 0]
    import h5py
    with h5py.File(path, "r") as f:
        return f["inputs"][...], f["targets"][...]


def write_higgs(rows, paths):
    import h5py
    x, y = higgs_like(rows)
    cut = int(rows * 0.9)
    for p, sl in zip(paths, (slice(0, cut), slice(cut, None))):
        with h5py.File(p, "w") as f:
            f["inputs"], f["targets"] = x[sl], y[sl]


def worker(args):
    if args.worker == "data":
        return write_higgs(args.rows, args.worker_files)
    xtr, ytr = load_set(args.worker_format, args.worker_files[0])
    xte, yte = load_set(args.worker_format, args.worker_files[1])
    if args.worker == "xgboost":
        r = run_xgb(args, xtr, ytr, xte, yte)
    else:
        r = run_lgb(args, xtr, ytr, xte, yte, quantized=args.worker == "lgb-quant")
    print(json.dumps({k: float(v) for k, v in r.items()}))


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


def run_lgb(args, xtr, ytr, xte, yte, quantized=False):
    import lightgbm as lgb
    t0 = time.time()
    ds = lgb.Dataset(xtr, ytr, params=dict(max_bin=args.bins, verbose=-1))
    shape = (dict(num_leaves=args.leaves, max_depth=-1) if args.leaves
             else dict(num_leaves=2 ** args.depth, max_depth=args.depth))
    b = lgb.train(dict(objective="binary", learning_rate=0.1, **shape,
                       max_bin=args.bins, num_threads=args.threads, lambda_l2=1, min_sum_hessian_in_leaf=1,
                       min_data_in_leaf=0, verbose=-1, **(dict(use_quantized_grad=True) if quantized else {})),
                  ds, args.trees)
    t = time.time() - t0
    p = b.predict(xte)
    return dict(wall=t, train=t, auc=auc(yte, p), logloss=logloss(yte, p))


def load():
    return "load %.2f %.2f %.2f" % os.getloadavg()


def report(name, runs):
    """runs: one dict tool -> result per repeat. Times and ratios as min-max over the repeats."""
    print(f"\n== {name} ({len(runs)} repeat(s))")
    print(f"{'tool':10s} {'train s':>13s} {'AUC':>8s} {'logloss':>8s} {'peak MiB':>9s} {'time/ours':>11s} {'cpu s':>13s}")
    span = lambda v: f"{min(v):.2f}" if len(v) == 1 or f"{min(v):.2f}" == f"{max(v):.2f}" else f"{min(v):.2f}-{max(v):.2f}"
    for tool in runs[0]:
        t = [r[tool]["train"] for r in runs]
        ratio = [r[tool]["train"] / r["hpctrain"]["train"] for r in runs]
        last = runs[-1][tool]
        peak = max(r[tool]["peak"] for r in runs)
        cpu = [r[tool]["cpu"] for r in runs]
        print(f"{tool:10s} {span(t):>13s} {last['auc']:8.4f} {last['logloss']:8.4f} {peak:9.1f} {span(ratio):>11s}"
              f" {span(cpu):>13s}")
    ours = [r["hpctrain"]["train"] for r in runs]
    faster = [min(r["xgboost"]["train"], r["lightgbm"]["train"]) for r in runs]
    print("ours / faster tool: " + span([o / f for o, f in zip(ours, faster)]) +
          f" (each repeat side by side); our summary's peak_host_mib {runs[-1]['hpctrain']['summary_peak']:.1f}")
    cpu_ratio = [r["hpctrain"]["cpu"] / min(r["xgboost"]["cpu"], r["lightgbm"]["cpu"]) for r in runs]
    print("CPU seconds, ours / the tool using fewer: " + span(cpu_ratio) +
          " (whole processes, reading the data included: steadier than wall time on a shared machine)")
    if "lgb-quant" in runs[0]:
        print("ours / LightGBM use_quantized_grad=True: time " +
              span([r["hpctrain"]["train"] / r["lgb-quant"]["train"] for r in runs]) + ", CPU " +
              span([r["hpctrain"]["cpu"] / r["lgb-quant"]["cpu"] for r in runs]))


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
    ap.add_argument("--data", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "data"))
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--baseline", help="another build's train program, run after ours in every repeat")
    ap.add_argument("--quantized", action="store_true",
                    help="ours with quantized_gradients true (8-byte bins), plus ours exact and LightGBM "
                         "with use_quantized_grad=True in every repeat")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--worker-format", help=argparse.SUPPRESS)
    ap.add_argument("--worker-files", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    shape = f"leaf-wise {args.leaves} leaves" if args.leaves else f"depth {args.depth}"
    print(f"threads {args.threads}, trees {args.trees}, {shape}, bins {args.bins}; before: {load()}")
    with tempfile.TemporaryDirectory() as work:
        if "binary" in args.sets:
            d = os.path.join(args.data, "lightgbm")
            tr, te = os.path.join(d, "binary.train"), os.path.join(d, "binary.test")
            runs = [run_set(args, "tsv", tr, te, work) for _ in range(args.repeats)]
            report("binary.train -> binary.test (7000 x 28)", runs)
        if "higgs" in args.sets:
            # Written by a process of its own: Linux hands a process's peak RSS on through fork and
            # exec (the child's ru_maxrss starts at the parent's), so a parent that once held the
            # data set would lift every tool's peak figure to its own (286 MiB for ours, whose own
            # peak is 202 MiB).
            paths = [os.path.join(work, "higgs_train.h5"), os.path.join(work, "higgs_test.h5")]
            subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", "data", "--rows", str(args.rows),
                            "--worker-files", *paths], check=True)
            runs = [run_set(args, "hdf5", *paths, work) for _ in range(args.repeats)]
            report(f"HIGGS-like {args.rows} x 28 (90/10 split)", runs)
    print(f"after: {load()}")


if __name__ == "__main__":
    sys.exit(main())
