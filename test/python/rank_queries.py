"""Synthetic learning-to-rank data and the LightGBM side of the ranking tests (gbdt_rank,
gbdt_rank_weights): queries with integer features (every value its own bin in both tools), the LibSVM
file with qid:, the shared part of the decks, train's final metrics, LightGBM's own metrics of scores."""
import re

import lightgbm as lgb
import numpy as np


def queries(seed, nq, max_size, zero_queries, weights=False):
    """Rows of nq queries: integer features 0..15 (6 columns), grades 0..4 (the queries in zero_queries
    all 0: ideal DCG 0), sizes 4..max_size; with weights, row weights 0.2..3 (3 decimals, exact as text)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(4, max_size + 1, size=nq)
    n = int(sizes.sum())
    x = rng.integers(0, 16, size=(n, 6)).astype(np.float64)
    qid = np.repeat(np.arange(nq), sizes)
    s = 0.3 * x[:, 0] - 0.2 * x[:, 1] + 0.15 * x[:, 2] * (x[:, 3] > 7) + rng.normal(0, 1.0, n)
    y = np.clip(np.floor((s - s.mean()) / s.std() * 1.2 + 1.5), 0, 4)
    y[np.isin(qid, zero_queries)] = 0
    if not weights:
        return x, y, qid, sizes
    return x, y, qid, sizes, np.round(rng.uniform(0.2, 3.0, size=n), 3)


def write_svm(file, x, y, qid):
    with open(file, "w") as f:
        for i in range(len(y)):
            f.write(f"{int(y[i])} qid:{qid[i]} " + " ".join(f"{j + 1}:{int(v)}" for j, v in enumerate(x[i])) + "\n")
    return file


def deck_lines(model, trees, leaves, eta, ks):
    """The keys both tests' lambdarank decks share (LightGBM's settings in lightgbm_params)."""
    return ["model gbdt", "objective lambdarank", f"num_trees {trees}", "growth leafwise", f"max_leaves {leaves}",
            "max_depth 0", f"eta {eta}", "lambda_l2 0", "min_child_weight 0.001", "min_data_in_leaf 20",
            "eval_metric " + ",".join(f"ndcg@{k}" for k in ks) + ",map@5", f"output {model}"]


def final_metrics(log):
    """The metrics of train's final line: {'train-ndcg@1': value, 'test-ndcg@1': ...}."""
    line = [l for l in log.splitlines() if re.search(r"gbdt: \d+ trees in", l)][-1]
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"(\S+-\S+) (-?[0-9.]+)", line)}


def lightgbm_eval(x, y, sizes, scores, ks, weight=None, label_gain=None):
    """LightGBM's own ndcg@k and map@5 of given scores (a booster before any tree, scores as init_score)."""
    out = {}
    extra = {"label_gain": label_gain} if label_gain else {}
    for metric in ("ndcg", "map"):
        ds = lgb.Dataset(x, y, group=sizes, weight=weight, init_score=scores, free_raw_data=False)
        b = lgb.Booster({"objective": "lambdarank", "metric": metric, "eval_at": list(ks) if metric == "ndcg" else [5],
                         "verbose": -1, "num_threads": 1, **extra}, ds)
        for _, name, value, _ in b.eval_train():
            out[name] = value
    return out
