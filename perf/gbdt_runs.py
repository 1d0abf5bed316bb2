"""Our GBDT side of the table comparisons (compare_tables.py, compare_multiclass.py): one deck at the
settings both scripts give every tool (leaf-wise, 31 leaves, eta 0.1, lambda 1, 255 bins, 1 thread, the leaf
limits of leaf_limits as each tool spells them), the training seconds from the metrics summary, the test
predictions from apps/predict."""
import json
import os
import subprocess

import numpy as np

MIN_ROWS = 20


def leaf_limits(task, k=1):
    """The comparisons' leaf limit as each tool spells it: every leaf at least MIN_ROWS rows AND at least the
    hessian MIN_ROWS rows have at p = 1/2. XGBoost cannot count rows, only sum hessians (min_child_weight);
    a hessian sum of MIN_ROWS x the largest hessian one row can add implies MIN_ROWS rows, so the three tools
    get that same sum in their own hessian scale (Note in docs/tables.md): squared error 1 a row (MIN_ROWS
    rows, exactly); logistic p(1-p), at most 1/4 (all three); softmax over K classes XGBoost 2p(1-p), at most
    1/2, ours and LightGBM K/(K-1) p(1-p) (the same sum of p(1-p) over the leaf: MIN_ROWS / 4).
    Counts (Poisson, whose hessian e^(margin + 0.7) has no bound): ours and LightGBM MIN_ROWS rows, all
    three a hessian sum of 1 (XGBoost's default); XGBoost has no row limit there. Quantiles (hessian 1 a row,
    as squared error): "quantile" gets squared error's limits.
    Returns (ours' deck keys, XGBoost's parameters, LightGBM's parameters)."""
    if task == "count":
        return (f"min_data_in_leaf {MIN_ROWS}\nmin_child_weight 1\n", dict(min_child_weight=1),
                dict(min_data_in_leaf=MIN_ROWS, min_sum_hessian_in_leaf=1))
    task = "regression" if task == "quantile" else task
    ours_h = {"regression": 1.0, "binary": 0.25, "multiclass": 0.25 * k / max(k - 1, 1)}[task]
    xgb_h = {"regression": 1.0, "binary": 0.25, "multiclass": 0.5}[task]
    return (f"min_data_in_leaf {MIN_ROWS}\nmin_child_weight {MIN_ROWS * ours_h:.17g}\n",
            dict(min_child_weight=MIN_ROWS * xgb_h),
            dict(min_data_in_leaf=MIN_ROWS, min_sum_hessian_in_leaf=MIN_ROWS * ours_h))


def train_and_predict(binary, predict, train_csv, test_csv, label, objective, trees, workdir,
                      predict_label=None, extra_keys=""):
    """Trains `binary` (apps/train) on train_csv and predicts test_csv with `predict`; returns (seconds,
    predictions). `label` is the training deck's label_column, `predict_label` the test file's (default the
    same); `objective` its objective line(s), `extra_keys` more deck lines (leaf_limits' first; a key given
    twice takes the later value)."""
    deck, metrics = os.path.join(workdir, "deck.in"), os.path.join(workdir, "metrics.jsonl")
    model, out = os.path.join(workdir, "model.json"), os.path.join(workdir, "pred.txt")
    keys = {"model": "gbdt", "data_file": train_csv, "text_header": "true", "label_column": label,
            "objective": objective, "num_trees": trees, "eta": 0.1, "growth": "leafwise", "max_leaves": 31,
            "max_depth": 0, "lambda_l2": 1, "max_bin": 255, "metrics_file": metrics, "output": model,
            "log_every": 100000}
    for line in filter(None, (s.strip() for s in extra_keys.split("\n"))):  # these replace the above
        key, _, value = line.partition(" ")
        keys[key] = value.strip()
    with open(deck, "w") as f:
        f.write("".join(f"{k} {v}\n" for k, v in keys.items()))
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
    subprocess.run([binary, deck], env=env, stdout=subprocess.DEVNULL, check=True)
    with open(metrics) as m:
        seconds = [json.loads(line) for line in m][-1]["seconds"]
    subprocess.run([predict, model, test_csv, out, "--header", "--label-column", predict_label or label], env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return seconds, np.loadtxt(out)
