#!/usr/bin/env python3
"""An mlp with category embeddings on a pandas-written CSV (docs/tables.md, Note [category
embeddings] in src/gbdt/table_encoding.cpp): a zip column of 1500 categories decides a text label.
One-hot is refused by max_categories (and embeddings for a model other than the mlp); with
category_embedding the zip is one code looked up in a learned table and the mlp learns the label
(held-out accuracy from predict); PyTorch, given the weights file and its stored categories,
computes predict's probabilities from the raw CSV (an unseen and a missing zip both reading the
missing row); 2 ranks train 1 rank's model (float rounding apart) and, with rank_invariant, the
same weights bit for bit.
usage: mlp_embeddings.py BUILD_DIR MPIEXEC SCRATCH_DIR"""
import json
import os
import sys

import h5py
import numpy as np
import pandas as pd
from tool_run import Checks, check_table_rank_invariance, deck_args, import_or_skip, table_and_config, tool_script

[torch] = import_or_skip("torch")

apps, scratch, run = tool_script(sys.argv)
train, predict = apps("train"), apps("predict")
check = Checks()

ZIPS = 1500
REGION = np.random.default_rng(5).integers(0, 3, size=ZIPS)  # each zip's region decides the label
NAMES = np.array(["north", "south", "west"])


def zip_table(n, seed):
    """n rows: a zip (8 rows each on average), a noise number and a noise colour, the zip's region."""
    r = np.random.default_rng(seed)
    z = r.integers(0, ZIPS, size=n)
    return pd.DataFrame({"x": r.normal(size=n).round(4), "zip": ["z%05d" % v for v in z],
                         "colour": r.choice(["red", "green", "blue"], size=n), "region": NAMES[REGION[z]]})


train_csv, test_csv = os.path.join(scratch, "train.csv"), os.path.join(scratch, "test.csv")
zip_table(12000, 1).to_csv(train_csv, index=False)
test = zip_table(400, 2)
test.loc[0, ["x", "zip", "colour"]] = [0.5, "z99999", "red"]  # a zip training never showed
test.loc[1, ["x", "zip", "colour"]] = [0.5, None, "red"]  # a missing zip
test.to_csv(test_csv, index=False)


def deck(name, *settings):
    """The deck file's path, then `--set key=value` for each of `settings`."""
    return deck_args(os.path.join(scratch, name + ".in"), f"""model mlp
data_file {train_csv}
text_header true
label_column region
loss cross_entropy
validation_fraction 0.1
hidden_sizes 32
batch_size 64
epochs 6
lr 1e-2
category_embedding 4
onehot_max_categories 10
log_every 1000
output {scratch}/{name}.h5
""", settings)


def path_of(name):
    return os.path.join(scratch, name + ".h5")


def refused(args, expect, what, ranks=1):
    check.refused(run(args, ranks), expect, what)


# 1. One-hot: 1500 inputs for the zip, over max_categories.
refused([train, *deck("onehot", "category_embedding=0")],
        train_csv + ": max_categories: column 'zip' has 1500 categories, more than max_categories 1000 (one input "
        "each): raise it, drop the column or give it an embedding (category_embedding)", "one-hot zip refused")

refused([train, *deck("onehot_max", "onehot_max_categories=2000")],
        train_csv + ": max_categories: column 'zip' has 1500 categories, more than max_categories 1000",
        "max_categories bounds the columns left one-hot")
refused([train, *deck("diffusion", "model=diffusion")],
        "category_embedding: embeds table columns for model mlp only, not model diffusion",
        "another model would read the codes as numbers")

# 2. Embedded: the zip is one code (1501 rows: the last for missing and unseen zips), the colour a block.
r = run([train, *deck("emb")])
print(r.stdout[-1200:], r.stderr[-1200:])
check(r.returncode == 0, "the mlp trains with an embedded zip column")
check("embedded: column 'zip' (1501 x 4)" in r.stdout + r.stderr, "the log names the embedded column")
weights = os.path.join(scratch, "emb.h5")
enc, cfg = table_and_config(weights)
with h5py.File(weights, "r") as h:
    params = {k: np.array(h[k]["weight"]) for k in ("emb0", "fc0", "fc1")}
    params.update({k + ".bias": np.array(h[k]["bias"]) for k in ("fc0", "fc1")})
    x_mean, x_std = h["standardisation/inputs_mean"][...], h["standardisation/inputs_std"][...]
check(enc["embedded"] == [1] and len(enc["categories"][1]) == ZIPS, "the weights list the embedded column")
check("d_in=5 " in cfg and "category_embedding=4 " in cfg and "embedding_rows=1501" in cfg,
      "inputs x + colour (3) + the zip's code: " + cfg)
check(params["emb0"].shape == (ZIPS + 1, 4) and params["fc0"].shape == (32, 8), "tables emb0 [1501, 4], fc0 [32, 4 + 4]")

out = os.path.join(scratch, "pred.h5")
r = run([predict, weights, test_csv, out])
check(r.returncode == 0, "predict reads a CSV with an unseen and a missing zip: " + r.stderr[-300:])
with h5py.File(out, "r") as h:
    prob = h["probabilities"][...]
    classes = json.loads(h.attrs["classes"])
guess = np.array(classes)[prob.argmax(axis=1)]
acc = float(np.mean(guess[2:] == test["region"].to_numpy()[2:]))
check(acc > 0.9, "held-out accuracy %.3f (chance 1/3)" % acc)
check(np.array_equal(prob[0], prob[1]), "an unseen zip reads the missing row, as a missing one does")

# 3. PyTorch from the raw CSV: the stored statistics standardise x (the one-hot block and the code
# keep mean 0, std 1), the stored categories give the codes and the one-hot block, then
# torch.cat([x, onehot(colour), Embedding(zip)]) -> Linear -> ReLU -> Linear -> softmax.
check(np.all(x_mean[1:] == 0) and np.all(x_std[1:] == 1) and x_std[0] != 1, "only the number is standardised")
zips, colours = enc["categories"][1], enc["categories"][2]
code = {z: i for i, z in enumerate(zips)}
zip_codes = torch.tensor([code.get(z, len(zips)) if isinstance(z, str) else len(zips) for z in test["zip"]])
onehot = torch.tensor(np.stack([(test["colour"] == c).to_numpy(np.float32) for c in colours], axis=1))
emb = torch.nn.Embedding.from_pretrained(torch.tensor(params["emb0"]))
fc0, fc1 = torch.nn.Linear(8, 32), torch.nn.Linear(32, 3)
with torch.no_grad():
    for lin, k in ((fc0, "fc0"), (fc1, "fc1")):
        lin.weight.copy_(torch.tensor(params[k]))
        lin.bias.copy_(torch.tensor(params[k + ".bias"]))
    xs = (test[["x"]].to_numpy(np.float32).astype(np.float64) - x_mean[0]) / x_std[0]
    x = torch.cat([torch.tensor(xs.astype(np.float32)), onehot, emb(zip_codes)], 1)
    ref = torch.softmax(fc1(torch.relu(fc0(x))), 1).numpy()
err = float(np.abs(ref - prob).max())
check(err < 1e-5, "PyTorch's probabilities from the CSV and the weights file: max difference %.1e" % err)


# 4. 2 ranks, default reduction: the embedding gradients are summed over ranks like the others, so the
# weights are 1 rank's up to float rounding (an unreduced table would drift far apart).
r = run([train, *deck("emb2", "batch_size=32")], 2)
check(r.returncode == 0, "2 ranks: " + r.stderr[-300:])
if r.returncode == 0:
    with h5py.File(path_of("emb2"), "r") as h2, h5py.File(weights, "r") as h1:
        drift = max(float(np.abs(h1[k][...] - h2[k][...]).max()) for k in ("emb0/weight", "fc0/weight"))
    check(drift < 1e-3, "2 ranks train 1 rank's model: largest weight difference %.1e" % drift)

# 5. rank_invariant: 1 rank and 2 ranks (halves of the file), same weights.
check_table_rank_invariance(check, run, lambda *a: [train, *deck(*a)], 64, path_of)

check.finish()
