#!/usr/bin/env python3
"""An mlp on CSV tables with text columns written by pandas (docs/tables.md, Note [table inputs] in
src/train/table_inputs.cpp): a text column whose category decides a text label; the mlp learns it
(held-out accuracy from predict, the class names from its output); 1 rank and 2 ranks (whose halves
of the file meet the categories in opposite orders) write the same weights bit for bit with
rank_invariant; predict maps an unseen category to the inputs of a missing one and reads a file
without its label; bad files and settings are refused naming file, line and column.
usage: mlp_tables.py BUILD_DIR MPIEXEC SCRATCH_DIR"""
import json
import os
import sys

import h5py
import numpy as np
import pandas as pd
from tool_run import Checks, check_table_rank_invariance, deck_args, table_and_config, tool_script

apps, scratch, run = tool_script(sys.argv)
train, predict = apps("train"), apps("predict")
check = Checks()


# The colour decides the kind; `x` is noise and `size` carries nothing. "dark, grey" holds the
# delimiter (pandas quotes it). Rows [0, 600) meet the colours in one order, rows [600, 1200) in the
# reverse one, so the two ranks' blocks first see them differently.
kind_of = {"red": "alpha", "amber": "alpha", "green": "beta", "teal": "beta", "blue": "gamma", "dark, grey": "gamma"}
colours = list(kind_of)
rng = np.random.default_rng(7)


def table(n, order, seed):
    r = np.random.default_rng(seed)
    colour = [order[i % len(order)] if i % 7 else order[(i // 7) % 2] for i in range(n)]  # uneven counts
    return pd.DataFrame({"x": r.normal(size=n).round(4), "colour": colour,
                         "size": r.choice(["S", "M", "L"], size=n), "kind": [kind_of[c] for c in colour]})


data = pd.concat([table(600, colours, 1), table(600, colours[::-1], 2)], ignore_index=True)
train_csv = os.path.join(scratch, "train.csv")
data.to_csv(train_csv, index=False)
test = table(300, colours, 3).sample(frac=1, random_state=4).reset_index(drop=True)
# Two rows alike but for the colour: one the training file never showed, one missing.
test.loc[0, ["x", "colour", "size", "kind"]] = [0.25, "mauve", "M", "alpha"]
test.loc[1, ["x", "colour", "size", "kind"]] = [0.25, None, "M", "alpha"]
test_csv = os.path.join(scratch, "test.csv")
test.to_csv(test_csv, index=False)
test.drop(columns=["kind"]).to_csv(os.path.join(scratch, "test_nolabel.csv"), index=False)


def deck(name, *settings):
    """The deck file's path, then `--set key=value` for each of `settings`."""
    return deck_args(os.path.join(scratch, name + ".in"), f"""model mlp
data_file {train_csv}
text_header true
label_column kind
loss cross_entropy
validation_fraction 0.2
hidden_sizes 16
batch_size 32
epochs 8
lr 1e-2
log_every 1000
output {scratch}/{name}.h5
""", settings)


# 1. The mlp learns the kind from the colour; predict scores held-out rows by class name.
r = run([train, *deck("mlp")])
print(r.stdout[-1500:], r.stderr[-1500:])
check(r.returncode == 0, "mlp trains on a table with text columns and a text label")
check("categorical: column 'colour' (6), column 'size' (3)" in r.stdout + r.stderr, "log names the text columns")
weights = os.path.join(scratch, "mlp.h5")
enc, cfg = table_and_config(weights)
check(enc["classes"] == ["alpha", "beta", "gamma"] or sorted(enc["classes"]) == ["alpha", "beta", "gamma"],
      "weights keep the class names: %s" % enc["classes"])
check(enc["categories"][0] is None and sorted(enc["categories"][1]) == sorted(colours), "weights keep the colours")
check("d_in=10 " in cfg and "d_out=3 " in cfg, "one-hot inputs 1 + 6 + 3, three classes: " + cfg)
out = os.path.join(scratch, "pred.h5")
r = run([predict, weights, test_csv, out])
print(r.stdout[-800:], r.stderr[-800:])
check(r.returncode == 0, "predict reads a CSV with an unseen category")
with h5py.File(out, "r") as h:
    prob = h["probabilities"][...]
    classes = json.loads(h.attrs["classes"])
check(classes == enc["classes"], "predict's output names the classes")
guess = [classes[i] for i in prob.argmax(axis=1)]
known = test["colour"].isin(colours).to_numpy()
acc = float(np.mean(np.array(guess)[known] == test["kind"].to_numpy()[known]))
check(acc > 0.95, "held-out accuracy %.3f (chance 1/3)" % acc)
check(np.array_equal(prob[0], prob[1]), "an unseen category gives the inputs of a missing one (zeros)")
r = run([predict, weights, os.path.join(scratch, "test_nolabel.csv"), out + ".nolabel.h5", "--no-label"], 2)
check(r.returncode == 0, "predict --no-label on 2 ranks: " + r.stderr[-300:])
if r.returncode == 0:
    with h5py.File(out + ".nolabel.h5", "r") as h:
        check(np.array_equal(h["probabilities"][...], prob), "the file without labels: the same probabilities")

# A numeric table with a text label: no one-hot block, classes all the same.
numeric_csv = os.path.join(scratch, "numeric.csv")
data[["x", "kind"]].to_csv(numeric_csv, index=False)
r = run([train, *deck("numeric", "data_file=" + numeric_csv, "epochs=1")])
check(r.returncode == 0 and "d_in=1 d_out=3 " in r.stdout + r.stderr, "numeric features, text label: " + r.stderr[-300:])

# 2. rank_invariant: 1 rank and 2 ranks (opposite category orders in their blocks), same weights.
check_table_rank_invariance(check, run, lambda *a: [train, *deck(*a)], 32,
                            lambda name: os.path.join(scratch, name + ".h5"))


# 3. Refusals name file, line and column; nothing is written.
def refused(args, expect, what, ranks=1):
    check.refused(run(args, ranks), expect, what)


bad = test.copy()
bad["x"] = bad["x"].astype(object)
bad.loc[4, "x"] = "abc"
bad_csv = os.path.join(scratch, "bad.csv")
bad.to_csv(bad_csv, index=False)
refused([predict, weights, bad_csv, os.path.join(scratch, "bad.h5")],
        bad_csv + ":6: column 'x' holds 'abc', not a number, but the model reads it as numbers",
        "predict: text in a numeric column", 2)
check(not os.path.exists(os.path.join(scratch, "bad.h5")), "predict wrote nothing for a bad file")
val = test.copy()
val.loc[9, "kind"] = "delta"
val_csv = os.path.join(scratch, "val.csv")
val.to_csv(val_csv, index=False)
refused([train, *deck("val", "validation_file=" + val_csv)],
        val_csv + ":11: column 'kind' holds 'delta', not a class of data_file (3 classes)",
        "a validation class the training data lacks", 2)
refused([train, *deck("many", "max_categories=4")],
        train_csv + ": max_categories: column 'colour' has 6 categories, more than max_categories 4",
        "too many categories")
refused([train, *deck("few", "num_classes=2")], "the label column holds 3 classes, more than num_classes 2",
        "num_classes below the classes")
refused([train, *deck("mse", "loss=mse")], train_csv + ":2: field 4 (column 'kind') 'alpha' is not a number",
        "a text label without a classifier")
indexed_csv = os.path.join(scratch, "indexed.csv")  # pandas' to_csv with its default index=True
data.to_csv(indexed_csv)
r = run([train, *deck("indexed", "data_file=" + indexed_csv, "epochs=1")])
check(r.returncode == 0 and indexed_csv + ": note: column 1 has no header name (pandas' index" in r.stdout + r.stderr,
      "a nameless first column (pandas' index) is noted: " + (r.stdout + r.stderr)[-300:])
one_csv = os.path.join(scratch, "one_class.csv")  # a filtered export: every row one class
data.assign(kind="alpha").to_csv(one_csv, index=False)
refused([train, *deck("one", "data_file=" + one_csv)], "label_column: the label column holds 1 class; "
        "cross_entropy needs 2 or more", "a label column of one class (was 'num_classes >= 2 (default value 0)')")
other = data.rename(columns={"size": "grade"})
other_csv = os.path.join(scratch, "other.csv")
other.to_csv(other_csv, index=False)
refused([predict, weights, other_csv, os.path.join(scratch, "other.h5")],
        other_csv + ": column 'grade' (feature 2) where the model has 'size'", "predict: a renamed column")

check.finish()
