#!/usr/bin/env python3
"""Category embeddings against one-hot blocks for `model mlp` on a table with a high-cardinality
column (docs/tables.md, "Category embeddings"). A pandas-written CSV: a zip code of --zips
categories with Zipf-like frequencies, two numbers and a colour; the class is 2 x (the zip's region
bit) + (x0 > 0), with 10% of the labels replaced at random (best accuracy about 0.925). The same mlp
trains on it with the zip one-hot (max_categories raised to fit), embedded (category_embedding 4
and 16) and dropped; the table shows the validation accuracy and loss after epochs 1, 3 and the
last, the parameters and the training seconds (the summary line), one run each.

usage: .deps/refenv/bin/python perf/mlp_embeddings.py [--train build/apps/train] [--rows 40000]
                                                       [--zips 4000] [--epochs 10] [--workdir DIR]
Needs numpy and pandas (scripts/setup --reference).
"""
import argparse
import os
import re
import subprocess
import tempfile

import numpy as np
import pandas as pd


def make_table(path, rows, zips):
    r = np.random.default_rng(11)
    freq = 1.0 / np.arange(1, zips + 1) ** 0.8  # a few large zips, a long tail
    z = r.choice(zips, size=rows, p=freq / freq.sum())
    region = np.random.default_rng(12).integers(0, 2, size=zips)
    x0, x1 = r.normal(size=rows), r.normal(size=rows)
    cls = 2 * region[z] + (x0 > 0)
    noise = r.random(rows) < 0.1
    cls[noise] = r.integers(0, 4, size=noise.sum())
    pd.DataFrame({"x0": x0.round(4), "x1": x1.round(4), "zip": ["z%05d" % v for v in z],
                  "colour": r.choice(["red", "green", "blue"], size=rows),
                  "cls": np.array(["a", "b", "c", "d"])[cls]}).to_csv(path, index=False)


def run(train, workdir, name, table, epochs, settings):
    deck = os.path.join(workdir, name + ".in")
    with open(deck, "w") as f:
        f.write(f"model mlp\ndata_file {table}\ntext_header true\nlabel_column cls\nloss cross_entropy\n"
                f"validation_fraction 0.2\nhidden_sizes 64,64\nbatch_size 128\nepochs {epochs}\nlr 3e-3\n"
                f"log_every 100000\noutput {workdir}/{name}.h5\n" + "".join(f"{k} {v}\n" for k, v in settings))
    r = subprocess.run([train, deck], capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
    out = r.stdout + r.stderr
    if r.returncode != 0:
        raise SystemExit(f"{name}: train failed\n{out[-2000:]}")
    epochs_seen = [(float(l), float(a)) for l, a in re.findall(r"val loss = ([\d.]+)\s+val acc = ([\d.]+)", out)]
    seconds = float(re.search(r"samples in ([\d.]+) s", out).group(1))
    params = re.search(r"([\d,]+) parameters", out)
    return epochs_seen, seconds, params.group(1) if params else "?"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="build/apps/train")
    ap.add_argument("--rows", type=int, default=40000)
    ap.add_argument("--zips", type=int, default=4000)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--workdir", default=None)
    a = ap.parse_args()
    workdir = a.workdir or tempfile.mkdtemp(prefix="mlp_embeddings_")
    os.makedirs(workdir, exist_ok=True)
    table = os.path.join(workdir, "zips.csv")
    make_table(table, a.rows, a.zips)
    print(f"{a.rows} rows, zip of {a.zips} categories, {a.epochs} epochs; uptime: {os.getloadavg()}")
    runs = [("one-hot", [("max_categories", a.zips)]),
            ("embedding 4", [("category_embedding", 4)]),
            ("embedding 16", [("category_embedding", 16)]),
            ("zip dropped", None)]
    print("| zip as | val acc (epoch 1 / 3 / last) | val loss (last) | parameters | train s |")
    print("| --- | --- | --- | --- | --- |")
    for name, settings in runs:
        if settings is None:  # the same table without the zip
            dropped = os.path.join(workdir, "nozip.csv")
            pd.read_csv(table).drop(columns=["zip"]).to_csv(dropped, index=False)
            hist, seconds, params = run(a.train, workdir, "nozip", dropped, a.epochs, [])
        else:
            hist, seconds, params = run(a.train, workdir, name.replace(" ", "_"), table, a.epochs, settings)
        accs = " / ".join("%.4f" % hist[i][1] for i in (0, min(2, len(hist) - 1), len(hist) - 1))
        print(f"| {name} | {accs} | {hist[-1][0]:.4f} | {params} | {seconds:.2f} |")


if __name__ == "__main__":
    main()
