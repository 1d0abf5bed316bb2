"""Our GBDT side of the table comparisons (compare_tables.py, compare_multiclass.py): one deck at the
settings both scripts give every tool (leaf-wise, 31 leaves, eta 0.1, lambda 1, 255 bins, at least 20 rows
a leaf, 1 thread), the training seconds from the metrics summary, the test predictions from apps/predict."""
import json
import os
import subprocess

import numpy as np


def train_and_predict(binary, predict, train_csv, test_csv, label, objective, trees, workdir,
                      predict_label=None, extra_keys=""):
    """Trains `binary` (apps/train) on train_csv and predicts test_csv with `predict`; returns (seconds,
    predictions). `label` is the training deck's label_column, `predict_label` the test file's (default the
    same); `objective` its objective line(s), `extra_keys` more deck lines."""
    deck, metrics = os.path.join(workdir, "deck.in"), os.path.join(workdir, "metrics.jsonl")
    model, out = os.path.join(workdir, "model.json"), os.path.join(workdir, "pred.txt")
    with open(deck, "w") as f:
        f.write(f"model gbdt\ndata_file {train_csv}\n{extra_keys}text_header true\nlabel_column {label}\n"
                f"objective {objective}\nnum_trees {trees}\neta 0.1\ngrowth leafwise\nmax_leaves 31\n"
                f"max_depth 0\nmin_data_in_leaf 20\nlambda_l2 1\nmax_bin 255\nmetrics_file {metrics}\n"
                f"output {model}\nlog_every 100000\n")
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
    subprocess.run([binary, deck], env=env, stdout=subprocess.DEVNULL, check=True)
    with open(metrics) as m:
        seconds = [json.loads(line) for line in m][-1]["seconds"]
    subprocess.run([predict, model, test_csv, out, "--header", "--label-column", predict_label or label], env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return seconds, np.loadtxt(out)
