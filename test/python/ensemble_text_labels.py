#!/usr/bin/env python3
"""Text class labels for `model ensemble` (docs/ensembles.md "Text labels", Note [ensemble classes]
in src/ensemble/member_passes.cpp), on CSV tables written by pandas, with build/apps/train and predict:
- a multiclass ensemble of a GBDT deck and a GBDT model file trained on another file with the same
  classes learns the classes (held-out accuracy from predict's OUTPUT.h5), its file lists them most
  frequent first (`classes`), as do the tree member's file and OUTPUT.h5; 1 rank and 2 ranks write
  the same ensemble, member and table files, byte for byte, and predict the same probabilities;
- a mixed ensemble (GBDT deck, mlp deck and mlp file with loss cross_entropy) and a binary one (the rarer class
  is 1; OUTPUT.h5 holds P(class 0), P(class 1)) train and predict by the names;
- refusals name the deck's line and key, or the member and both class lists, or file, line and
  column, and write nothing: a member file trained on the classes in another order or on numeric
  labels, a member deck with another class count, num_class other than the class count (ensemble,
  gbdt and mlp alike), binary with three
  classes, a text label with objective regression, a validation_file / predict row whose class the
  training file lacks, predict --margin with an OUTPUT.h5 (GBDT model);
- row weights (weight_column) on a regression ensemble of two GBDT member files: weights 0 on some
  rows give the ensemble and table files of the file without them, byte for byte (stacking and a
  fitted average), unweighted ones differ; predict --weight-file gives the table's weighted metrics;
  an mlp deck in a weighted ensemble trains on the weighted rows.
usage: ensemble_text_labels.py BUILD_DIR MPIEXEC SCRATCH_DIR"""
import json
import os
import re
import sys

import h5py
import numpy as np
import pandas as pd
from tool_run import Checks, in_folder, tool_script

apps, scratch, run = tool_script(sys.argv)
train, predict = apps("train"), apps("predict")
check = Checks()
path = in_folder(scratch)


# Three kinds of iris-like flowers with uneven counts, decided by two measures with noise; the
# label column sits between the features. Rows of the second half meet the classes in reverse order,
# so the two ranks' blocks first see them differently.
kinds = ["setosa", "versicolor", "virginica, hybrid"]  # the last holds the delimiter


def table(n, seed, reverse=False, cut=(0.5, 0.2)):
    r = np.random.default_rng(seed)
    petal, sepal = r.uniform(0, 1, n), r.uniform(0, 1, n)
    noisy = petal + 0.05 * r.normal(size=n)
    kind = np.where(noisy > cut[0], kinds[0], np.where(noisy > cut[1], kinds[1], kinds[2]))
    df = pd.DataFrame({"petal": petal.round(4), "kind": kind, "sepal": sepal.round(4)})
    df = pd.concat([df.iloc[: n // 2], df.iloc[n // 2:].iloc[::-1]], ignore_index=True) if reverse else df
    return df


data, test, other = table(900, 1, reverse=True), table(300, 2), table(600, 3)
counts = data["kind"].value_counts()
order = sorted(counts.index, key=lambda c: (-counts[c], c.encode()))  # the coder's order
check(order == kinds, "the classes most frequent first: %s" % order)
data.to_csv(path("train.csv"), index=False)
test.to_csv(path("test.csv"), index=False)
other.to_csv(path("other.csv"), index=False)  # same classes, same order of counts
# Another file whose most frequent class is another one: the same names coded in another order.
table(600, 4, cut=(0.8, 0.5)).to_csv(path("shifted.csv"), index=False)
code = {c: i for i, c in enumerate(order)}
other.assign(kind=other["kind"].map(code)).to_csv(path("other_int.csv"), index=False)

TABLE = ["text_header true", "label_column kind"]


def deck(name, lines):
    with open(path(name + ".in"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return path(name + ".in")


def keyed(base, *lines):
    """The lines of `base`, each of `lines` replacing the line of its key (or added)."""
    keys = {l.split()[0]: l for l in base}
    keys.update({l.split()[0]: l for l in lines})
    return list(keys.values())


def lineno(p, key):
    with open(p) as f:
        return next(i + 1 for i, l in enumerate(f) if l.startswith(key + " "))


GBM = ["model gbdt", "objective multiclass", f"data_file {path('train.csv')}", *TABLE, "num_trees 8",
       "max_depth 3", "log_every 100"]
deck("gbm", GBM)
deck("gbm2", ["model gbdt", "objective binary", f"data_file {path('train.csv')}", *TABLE, "num_trees 8",
              "max_depth 3", "log_every 100"])
MLP = ["model mlp", f"data_file {path('train.csv')}", *TABLE, "loss cross_entropy", "hidden_sizes 16",
       "batch_size 32", "epochs 4", "lr 1e-2", "log_every 100000"]  # num_classes: the classes' count
deck("mlp", MLP)
deck("bce", ["model mlp", f"data_file {path('train.csv')}", *TABLE, "loss bce", "hidden_sizes 16",
             "batch_size 32", "epochs 4", "lr 1e-2", "log_every 100000"])


def ensemble(name, members, *lines, objective="multiclass", out=None):
    return deck(name, keyed(["model ensemble", f"objective {objective}", f"data_file {path('train.csv')}", *TABLE,
                             "validation_fraction 0.2", f"test_file {path('test.csv')}", f"members {members}",
                             "folds 2", "seed 3", f"output {out or path(name + '.json')}"], *lines))


# A GBDT model file trained on other.csv (rows the ensemble never sees), the same classes.
r = run([train, deck("file", keyed(GBM, f"data_file {path('other.csv')}", f"output {path('file.json')}"))])
check(r.returncode == 0, "a GBDT member file on other.csv: " + r.stderr[-300:])

# 1. Multiclass, 1 rank and 2 ranks: the same files, byte for byte.
for ranks in (1, 2):
    os.makedirs(path(f"r{ranks}"))
    r = run([train, ensemble(f"ens{ranks}", f"{path('gbm.in')},{path('file.json')}",
                             out=path(f"r{ranks}/ens.json"))], ranks)
    check(r.returncode == 0, f"a text-labelled ensemble on {ranks} rank(s): " + (r.stdout + r.stderr)[-400:])


def read(p, mode="r"):
    with open(p, mode) as f:
        return f.read()


same = all(read(path(f"r1/{f}"), "rb") == read(path(f"r2/{f}"), "rb")
           for f in ("ens.json", "ens.gbm.json", "ens.table.csv"))
check(same, "1 rank == 2 ranks: ensemble, member and table files, byte for byte")
ens = json.loads(read(path("r1/ens.json")))
check(ens.get("classes") == order and ens["num_class"] == 3, "the ensemble file's classes: %s" % ens.get("classes"))
check(json.loads(read(path("r1/ens.gbm.json"))).get("classes") == order, "the tree member's file keeps the classes")
for ranks in (1, 2):
    r = run([predict, path("r1/ens.json"), path("test.csv"), path(f"pred{ranks}.h5"), "--header", "--label-column",
             "kind"], ranks)
    check(r.returncode == 0 and "the classes by index (the columns of OUTPUT): " + ", ".join(order) in r.stderr +
          r.stdout, f"predict the ensemble on {ranks} rank(s) by the class names: " + r.stderr[-300:])
if os.path.exists(path("pred1.h5")) and os.path.exists(path("pred2.h5")):
    with h5py.File(path("pred1.h5"), "r") as h1, h5py.File(path("pred2.h5"), "r") as h2:
        prob, classes = h1["probabilities"][...], json.loads(h1.attrs["classes"])
        check(np.array_equal(prob, h2["probabilities"][...]), "predict: 1 rank == 2 ranks")
    acc = float(np.mean(np.array(classes)[prob.argmax(axis=1)] == test["kind"].to_numpy()))
    majority = float(test["kind"].value_counts().max() / len(test))
    check(classes == order and prob.shape == (300, 3) and acc > 0.85 and acc > majority + 0.3,
          "OUTPUT.h5 names the classes; held-out accuracy %.3f (majority class %.3f)" % (acc, majority))
r = run([predict, path("r1/ens.json"), path("test.csv"), path("pred.txt"), "--header", "--label-column", "kind"])
check(r.returncode == 0 and len(read(path("pred.txt")).splitlines()) == 300, "a text OUTPUT: one line per row")

# 2. A mixed ensemble (trees, an mlp deck and an mlp file trained on other.csv, whose weights keep
# the classes in their `table` attribute) and a binary one, on 2 ranks.
r = run([train, deck("mlpfile", keyed(MLP, f"data_file {path('other.csv')}", f"output {path('mlpfile.h5')}"))])
check(r.returncode == 0, "an mlp member file on other.csv: " + r.stderr[-300:])
r = run([train, ensemble("mixed", f"{path('gbm.in')},{path('mlp.in')},{path('mlpfile.h5')}")], 2)
mixed = json.loads(read(path("mixed.json"))) if r.returncode == 0 else {}
check(mixed.get("classes") == order and [m["kind"] for m in mixed["members"]] == ["gbdt", "mlp", "mlp"],
      "a GBDT deck, an mlp deck and an mlp file (cross_entropy) on class names: " + (r.stdout + r.stderr)[-400:])
two = lambda d: d.assign(kind=np.where(d["kind"] == order[0], order[0], "other"))  # noqa: E731
two(data).to_csv(path("two.csv"), index=False)
two(test).to_csv(path("two_test.csv"), index=False)
r = run([train, ensemble("bin", f"{path('gbm2.in')},{path('bce.in')}", f"data_file {path('two.csv')}",
                         f"test_file {path('two_test.csv')}", objective="binary")], 2)
counts2 = two(data)["kind"].value_counts()
names2 = [counts2.index[0], counts2.index[1]]  # most frequent first: the rarer is class 1
check(r.returncode == 0 and json.loads(read(path("bin.json"))).get("classes") == names2,
      "binary: classes %s, the rarer one 1: %s" % (names2, (r.stdout + r.stderr)[-300:]))
r = run([predict, path("bin.json"), path("two_test.csv"), path("bin.h5"), "--header", "--label-column", "kind"])
check(r.returncode == 0, "predict the binary ensemble: " + r.stderr[-300:])
if r.returncode == 0:
    with h5py.File(path("bin.h5"), "r") as h:
        p2, c2 = h["probabilities"][...], json.loads(h.attrs["classes"])
    acc2 = float(np.mean(np.array(c2)[p2.argmax(axis=1)] == two(test)["kind"].to_numpy()))
    check(c2 == names2 and p2.shape == (300, 2) and np.allclose(p2.sum(axis=1), 1, atol=1e-6) and acc2 > 0.85,
          "binary OUTPUT.h5: P(%s), P(%s); accuracy %.3f" % (names2[0], names2[1], acc2))


# The text OUTPUT holds what OUTPUT.h5 does: binary P(class 1); a regression ensemble's `outputs`.
r = run([predict, path("bin.json"), path("two_test.csv"), path("bin.txt"), "--header", "--label-column", "kind"])
if r.returncode == 0 and os.path.exists(path("bin.h5")):
    with h5py.File(path("bin.h5"), "r") as h:
        check(np.abs(np.loadtxt(path("bin.txt")) - h["probabilities"][:, 1]).max() < 1e-6,
              "binary: the text lines are OUTPUT.h5's P(class 1)")
rg = np.random.default_rng(5)
reg = pd.DataFrame({"x1": rg.uniform(0, 1, 500).round(4), "x2": rg.uniform(0, 1, 500).round(4)})
reg["y"] = (3 * reg["x1"] + reg["x2"] ** 2).round(4)
reg.to_csv(path("reg.csv"), index=False)
REG = ["model gbdt", "objective regression", f"data_file {path('reg.csv')}", "text_header true", "label_column y",
       "num_trees 8", "log_every 100"]
deck("greg", REG)
r = run([train, ensemble("ereg", path("greg.in"), f"data_file {path('reg.csv')}", f"test_file {path('reg.csv')}",
                         "label_column y", objective="regression")])
check(r.returncode == 0 and "classes" not in json.loads(read(path("ereg.json"))),
      "a regression ensemble: no classes: " + r.stderr[-300:])
r1 = run([predict, path("ereg.json"), path("reg.csv"), path("reg.h5"), "--header", "--label-column", "y"])
r2 = run([predict, path("ereg.json"), path("reg.csv"), path("reg.txt"), "--header", "--label-column", "y"])
if r1.returncode == 0 and r2.returncode == 0:
    with h5py.File(path("reg.h5"), "r") as h:
        check(h["outputs"].shape == (500, 1) and "probabilities" not in h and "classes" not in h.attrs and
              np.abs(np.loadtxt(path("reg.txt")) - h["outputs"][:, 0]).max() < 1e-5,
              "a regression ensemble's OUTPUT.h5: `outputs` [N, 1], the text lines' values")
else:
    check(False, "predict a regression ensemble: " + r1.stderr[-300:] + r2.stderr[-300:])

# 2b. Row weights (Note [ensemble row weights]): weight_column weighs the combiner's fit and the table,
# so weights 0 on every fourth row give, to the last bit, the ensemble and table of the file without
# those rows; the unweighted run differs. Two GBDT member files trained on other rows (a deck's folds
# hash the row index, which dropping rows shifts). Stacking (ridge) and a fitted average. A network
# deck, which would train unweighted, is refused (in 3.).
rw = np.random.default_rng(7)
for name, n in (("w_other", 400), ("w_train", 600), ("w_valid", 300)):
    t = pd.DataFrame({"x1": rw.uniform(0, 1, n).round(4), "x2": rw.uniform(0, 1, n).round(4)})
    t["y"] = (3 * t["x1"] + t["x2"] ** 2 + 0.3 * rw.normal(size=n)).round(4)
    t["w"] = np.where(np.arange(n) % 4 == 3, 0.0, rw.uniform(0.2, 3, n).round(3)) if name == "w_train" else \
        rw.uniform(0.2, 3, n).round(3)
    t.to_csv(path(name + ".csv"), index=False)
    t.drop(columns="w").to_csv(path(name + "_plain.csv"), index=False)
    if name == "w_train":
        t[t["w"] > 0].to_csv(path("w_kept.csv"), index=False)
    if name == "w_other":  # members biased up and down: the fitted average mixes them
        t.drop(columns="w").assign(y=t["y"] + 0.5).to_csv(path("wm1.csv"), index=False)
        t.drop(columns="w").assign(y=t["y"] - 0.5).to_csv(path("wm2.csv"), index=False)
for m in ("wm1", "wm2"):
    r = run([train, deck(m, keyed(REG, f"data_file {path(m + '.csv')}", "max_depth 3", f"output {path(m + '.json')}"))])
    check(r.returncode == 0, f"a regression member file {m}: " + r.stderr[-300:])
WREG = ["label_column y", f"members {path('wm1.json')},{path('wm2.json')}"]
for combine in ("stacking", "average"):
    runs = {}
    for name, data, valid, weighted in (("full", "w_train", "w_valid", True), ("kept", "w_kept", "w_valid", True),
                                        ("plain", "w_train_plain", "w_valid_plain", False)):
        ens_name = f"w_{combine}_{name}"
        r = run([train, ensemble(ens_name, "", *WREG, f"combine {combine}", f"data_file {path(data + '.csv')}",
                                 f"validation_file {path(valid + '.csv')}", f"test_file {path(valid + '.csv')}",
                                 *(["weight_column w"] if weighted else []), objective="regression")])
        check(r.returncode == 0, f"{combine}, {name}: " + (r.stdout + r.stderr)[-300:])
        runs[name] = (read(path(ens_name + ".json")), read(path(ens_name + ".table.csv"))) if r.returncode == 0 else ()
    full, kept, plain = runs["full"], runs["kept"], runs["plain"]
    check(full and full == kept, f"{combine}: weights 0 = those rows left out (the ensemble and table files, "
          "byte for byte)")
    check(full and plain and full[0] != plain[0] and full[1] != plain[1],
          f"{combine}: the unweighted combiner and table differ")
np.savetxt(path("w_valid.weight"), pd.read_csv(path("w_valid.csv"))["w"], fmt="%.3f")
r = run([predict, path("w_stacking_full.json"), path("w_valid_plain.csv"), path("w.txt"), "--header", "--label-column",
         "y", "--weight-file", path("w_valid.weight")], 2)
m = re.search(r"rows, rmse (-?[0-9.]+), mae (-?[0-9.]+)", r.stdout + r.stderr)
said = [float(m.group(1)), float(m.group(2))] if r.returncode == 0 and m else []
row = [l.split(",") for l in read(path("w_stacking_full.table.csv")).splitlines() if l.startswith("ensemble,")]
check(said and row and np.allclose(said, [float(v) for v in row[0][2:4]], rtol=0, atol=1e-6),
      f"predict --weight-file on 2 ranks: the table's weighted valid rmse, mae ({said})")


# 3. Refusals: the message, and no output.
def refused(args, expect, what, output, ranks=1):
    r = run(args, ranks)
    msg = r.stdout + r.stderr
    said = [l for l in msg.splitlines() if "error" in l] or msg.strip().splitlines() or [""]
    work = output[: -len(".json")] + ".work" if output.endswith(".json") else output  # an ensemble's folder
    check(r.returncode != 0 and expect in msg and not os.path.exists(output) and not os.path.exists(work),
          what + ": " + said[0])


for name, csv in (("shifted", "shifted.csv"), ("ints", "other_int.csv")):
    run([train, deck(name, keyed(GBM, f"data_file {path(csv)}", f"output {path(name + '.json')}"))])
shifted = json.loads(read(path("shifted.json")))["classes"]
check(shifted != order and sorted(shifted) == sorted(order), "shifted.csv codes the classes as %s" % shifted)
listed = lambda names: "[" + ", ".join("'%s'" % n for n in names) + "]"  # noqa: E731
refused([train, ensemble("e_shift", f"{path('gbm.in')},{path('shifted.json')}")],
        "member %s was trained on the classes %s; the labels of %s (column 'kind') are the classes %s" % (
            path("shifted.json"), listed(shifted), path("train.csv"), listed(order)),
        "a member file coding the classes in another order", path("e_shift.json"), 2)
refused([train, ensemble("e_ints", path("ints.json"))],
        "member %s was trained on numeric labels (no class names); the labels of %s (column 'kind') are the "
        "classes %s" % (path("ints.json"), path("train.csv"), listed(order)),
        "a member file trained on numeric labels", path("e_ints.json"))
d = ensemble("e_k4", path("gbm.in"), "num_class 4")
refused([train, d], "%s:%d: num_class: column 'kind' of %s holds 3 classes, not num_class 4" % (
    d, lineno(d, "num_class"), path("train.csv")), "ensemble num_class above the class count", path("e_k4.json"), 2)
d = deck("gbm4", keyed(GBM, "num_class 4"))
refused([train, ensemble("e_m4", d)], "%s:%d: num_class: the ensemble has 3 classes (the class names of %s): set "
        "num_class 3 or leave it out" % (d, lineno(d, "num_class"), path("train.csv")),
        "a tree member deck with num_class 4, before any training", path("e_m4.json"), 2)
d = deck("mlp4", keyed(MLP, "num_classes 4"))
refused([train, ensemble("e_n4", d)], "%s:%d: num_classes: the ensemble has 3 classes (the class names of %s): set "
        "num_classes 3 or leave it out" % (d, lineno(d, "num_classes"), path("train.csv")),
        "an mlp member deck with num_classes 4, before any training", path("e_n4.json"))
d = ensemble("e_bin3", path("gbm2.in"), objective="binary")
refused([train, d], "%s:%d: objective: binary: column 'kind' of %s holds 3 classes" % (
    d, lineno(d, "objective"), path("train.csv")), "a binary ensemble on three classes", path("e_bin3.json"))
refused([train, ensemble("e_reg", path("gbm.in"), objective="regression")],
        "(text labels are class names: mlp with loss cross_entropy, gbdt and ensemble with objective binary or "
        "multiclass)", "an ensemble regression on a text label", path("e_reg.json"))
bad = test.copy()
bad.loc[9, "kind"] = "iris nova"
bad.to_csv(path("bad.csv"), index=False)
expect = path("bad.csv") + ":11: column 'kind' holds 'iris nova', not a class of "
refused([train, ensemble("e_val", path("gbm.in"), f"validation_file {path('bad.csv')}")],
        expect + "data_file (3 classes)", "a validation_file class the training file lacks", path("e_val.json"), 2)
refused([predict, path("r1/ens.json"), path("bad.csv"), path("bad.h5"), "--header", "--label-column", "kind"],
        expect + "the model (3 classes)", "predict an ensemble: a class it lacks", path("bad.h5"), 2)
# num_class above the class count for the trees and num_classes for the mlp alone.
d = deck("k5", keyed(GBM, "num_class 5", f"output {path('k5.json')}"))
refused([train, d], "%s:%d: num_class: column 'kind' of %s holds 3 classes, fewer than num_class 5" % (
    d, lineno(d, "num_class"), path("train.csv")), "gbdt num_class above the class count", path("k5.json"))
d = deck("mlp5", keyed(MLP, "num_classes 5", f"output {path('mlp5.h5')}"))
refused([train, d], "%s:%d: num_classes: the label column holds 3 classes, fewer than num_classes 5" % (
    d, lineno(d, "num_classes")), "mlp num_classes above the class count", path("mlp5.h5"))
deck("mlp_mse", keyed(MLP, "loss mse", "label_column y", f"data_file {path('w_train_plain.csv')}"))
# An mlp deck trains on the weighted rows (docs/row_weights.md, Note [ensemble row weights]).
r = run([train, ensemble("e_wmlp", f"{path('wm1.json')},{path('mlp_mse.in')}", "label_column y", "weight_column w",
                         f"data_file {path('w_train.csv')}", f"test_file {path('w_valid.csv')}",
                         objective="regression")])
check(r.returncode == 0 and os.path.exists(path("e_wmlp.json")) and
      "the rows of member mlp_mse: rows weighted (step loss sum w l / B" in r.stdout + r.stderr,
      "a weighted ensemble trains its mlp deck on the weighted rows: " + (r.stdout + r.stderr)[-300:])
refused([predict, path("file.json"), path("test.csv"), path("margin.h5"), "--header", "--label-column", "kind",
         "--margin"], "predict: --margin is for a text OUTPUT; %s gets the margins as `outputs` beside "
        "`probabilities`" % path("margin.h5"), "predict --margin with OUTPUT.h5", path("margin.h5"), 2)

check.finish()
