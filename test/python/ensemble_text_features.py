#!/usr/bin/env python3
"""Text feature columns for the network members of `model ensemble` (docs/ensembles.md, Note
[category embeddings] in src/gbdt/table_encoding.cpp), on a pandas-written CSV: a colour of 8 and
a shop of 300 categories whose effects have nothing to do with their codes' order, and a number.
- mlp deck members take the inputs `model mlp` takes from the file: one-hot blocks, or with
  category_embedding the shop's code looked up in a learned table; their weights keep the
  ensemble's categories; each learns the effects (test RMSE from the evaluation table, far below
  what the codes read as numbers allow), and predict scores the ensemble on a CSV by its strings;
- an mlp member file trained on the same file by `model mlp` is a member, and so is a GBDT model
  file; either trained on a file whose categories are coded otherwise is refused, naming the member,
  the column and the first differing category.
usage: ensemble_text_features.py BUILD_DIR MPIEXEC SCRATCH_DIR"""
import csv
import json
import os
import sys

import h5py
import numpy as np
import pandas as pd
from tool_run import Checks, deck_args, in_folder, tool_script

apps, scratch, run = tool_script(sys.argv)
train, predict = apps("train"), apps("predict")
check = Checks()
path = in_folder(scratch)


effects = np.random.default_rng(3)
COLOUR = effects.normal(size=8)
SHOP = effects.normal(size=300)


def table(n, seed):
    r = np.random.default_rng(seed)
    c, s, x = r.integers(0, 8, n), r.integers(0, 300, n), r.normal(size=n)
    y = COLOUR[c] + SHOP[s] + 0.5 * x + 0.1 * r.normal(size=n)
    return pd.DataFrame({"x": x.round(4), "colour": ["c%d" % v for v in c], "shop": ["s%03d" % v for v in s],
                         "y": y.round(4)})


data, test = table(6000, 1), table(600, 2)
data.to_csv(path("train.csv"), index=False)
test.to_csv(path("test.csv"), index=False)
TABLE = ["text_header true", "label_column y"]
MLP = f"""model mlp
data_file {path('train.csv')}
{TABLE[0]}
{TABLE[1]}
loss mse
hidden_sizes 32
batch_size 32
epochs 12
lr 1e-2
log_every 100000
"""
deck_args(path("onehot.in"), MLP, [])
deck_args(path("emb.in"), MLP + "category_embedding 4\nonehot_max_categories 10\n", [])
ENSEMBLE = f"""model ensemble
objective regression
data_file {path('train.csv')}
{TABLE[0]}
{TABLE[1]}
validation_fraction 0.2
test_file {path('test.csv')}
folds 2
seed 3
"""


def ensemble(name, members, *settings):
    return [train, *deck_args(path(name + ".in"), ENSEMBLE + f"members {members}\noutput {path(name + '.json')}\n",
                              settings)]


# 1. Two mlp decks: one-hot blocks, and the shop embedded; and a tree deck (categorical splits).
deck_args(path("gbm.in"), f"model gbdt\nobjective regression\ndata_file {path('train.csv')}\n{TABLE[0]}\n{TABLE[1]}\n"
          "num_trees 20\nmax_depth 4\nlog_every 100\n", [])
r = run(ensemble("ens", f"{path('onehot.in')},{path('emb.in')},{path('gbm.in')}"))
print((r.stdout + r.stderr)[-1500:])
check(r.returncode == 0, "an ensemble of mlp decks on text feature columns")
if r.returncode == 0:
    configs, tables = {}, {}
    for m in ("onehot", "emb"):
        with h5py.File(path(f"ens.{m}.h5"), "r") as h:
            configs[m] = h.attrs["config"].decode() if isinstance(h.attrs["config"], bytes) else h.attrs["config"]
            tables[m] = json.loads(h.attrs["table"])
            if m == "emb":
                check(h["emb0/weight"].shape == (301, 4), "the embedded member's table emb0 [301, 4]")
    check("d_in=309 " in configs["onehot"], "one-hot member: x + 8 + 300 inputs: " + configs["onehot"])
    check("d_in=10 " in configs["emb"] and "embedding_rows=301" in configs["emb"],
          "embedded member: x + 8 + the shop's code: " + configs["emb"])
    colours = sorted(data["colour"].unique())
    check(sorted(tables["emb"]["categories"][1]) == colours and tables["emb"]["embedded"] == [2]
          and tables["onehot"]["categories"] == tables["emb"]["categories"],
          "the members' weights keep the ensemble's categories")
    with open(path("ens.gbm.json")) as f:
        check(json.load(f).get("categories") == tables["emb"]["categories"], "the tree member keeps them too")
    with open(path("ens.table.csv")) as f:
        rows = list(csv.DictReader(f))
    sd = float(test["y"].std())
    for m in ("onehot", "emb"):
        rmse = [float(row["test_rmse"]) for row in rows if row["model"] == m]
        check(rmse and rmse[0] < 0.2 * sd, "member %s learns the categories: test RMSE %s (sd %.3f)" % (m, rmse, sd))
    r = run([predict, path("ens.json"), path("test.csv"), path("pred.h5"), "--header", "--label-column", "y"])
    check(r.returncode == 0, "predict the ensemble on a CSV: " + r.stderr[-300:])
    if r.returncode == 0:
        with h5py.File(path("pred.h5"), "r") as h:
            err = float(np.sqrt(np.mean((h["outputs"][...].ravel() - test["y"].to_numpy()) ** 2)))
        check(err < 0.2 * sd, "the ensemble's held-out RMSE %.3f (sd %.3f)" % (err, sd))

# 2. A member file from `model mlp` on the same file; one whose categories are coded otherwise.
r = run([train, *deck_args(path("file.in"), MLP + f"category_embedding 4\noutput {path('file.h5')}\n", [])])
check(r.returncode == 0, "an embedded mlp member file: " + r.stderr[-300:])
r = run(ensemble("withfile", f"{path('onehot.in')},{path('file.h5')}"))
check(r.returncode == 0, "an ensemble with the member file: " + (r.stdout + r.stderr)[-300:])
shifted = data.copy()
shifted.loc[:2000, "colour"] = "c7"  # c7 now the most frequent: every colour's code changes
shifted.to_csv(path("shifted.csv"), index=False)
r = run([train, *deck_args(path("shifted.in"), MLP.replace(path("train.csv"), path("shifted.csv")) +
                           f"output {path('shifted.h5')}\n", [])])
check(r.returncode == 0, "an mlp member file on other codes: " + r.stderr[-300:])
r = run(ensemble("refused", f"{path('onehot.in')},{path('shifted.h5')}"))
check.refused(r, "ensemble: member " + path("shifted.h5") + " codes column 'colour' as the categories ['c7'",
              "a member file coding the colours otherwise")
check(not os.path.exists(path("refused.json")), "the refused ensemble wrote nothing")

# 3. GBDT member files: one trained on the same file is a member; one trained on the file whose
# colours are coded otherwise is refused on 2 ranks (an agreed error: every rank exits, none hangs),
# naming the file, the column and the first category that differs (its categorical splits would send
# other colours down each branch).
GBM_FILE = f"model gbdt\nobjective regression\n{TABLE[0]}\n{TABLE[1]}\nnum_trees 5\nmax_depth 3\nlog_every 100\n"
for name, csv_file in (("gbm_same", "train.csv"), ("gbm_shifted", "shifted.csv")):
    r = run([train, *deck_args(path(name + ".in"), GBM_FILE + f"data_file {path(csv_file)}\noutput {path(name + '.json')}\n",
                               [])])
    check(r.returncode == 0, "a GBDT member file on %s: %s" % (csv_file, r.stderr[-300:]))
r = run(ensemble("withgbm", f"{path('gbm.in')},{path('gbm_same.json')}"), 2)
check(r.returncode == 0, "an ensemble with the GBDT member file: " + (r.stdout + r.stderr)[-300:])
coded = {}
for name in ("gbm_same", "gbm_shifted"):
    with open(path(name + ".json")) as f:
        coded[name] = json.load(f)["categories"][1]  # the colours by code
first = next(i for i, (a, b) in enumerate(zip(coded["gbm_shifted"], coded["gbm_same"])) if a != b)
r = run(ensemble("refused_gbm", f"{path('gbm.in')},{path('gbm_shifted.json')}"), 2)
said = r.stdout + r.stderr
check.refused(r, "ensemble: member " + path("gbm_shifted.json") + " codes column 'colour' as the categories ['c7'",
              "a GBDT member file coding the colours otherwise")
check(f"first difference: code {first} is '{coded['gbm_shifted'][first]}' there, '{coded['gbm_same'][first]}' in "
      f"{path('train.csv')}" in said, "the first differing category named")
check(not os.path.exists(path("refused_gbm.json")) and not os.path.exists(path("refused_gbm.work")),
      "the refused ensemble wrote nothing")

check.finish()
